"""The KV terms of a model (``KVShape``) and the calculators' presets: the chapters' examples and
published open models. Every number of a published model is copied from its ``config.json`` on the
Hugging Face Hub (the repository named in ``KVShape.name``).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import compress

from core.cost.kv_hybrid import RecurrentState, attention_layers, deltanet_state, describe_hybrid, mamba_state
from core.cost.kv_layers import LayerCache, build_layers, describe_rule


@dataclass(frozen=True)
class KVShape:
    """The terms of M = 2·B·L·T·H_kv·d·b that belong to a model (B and T belong to the request).

    ``hidden_size`` is kept to show the common mistake of using it instead of H_kv·d;
    ``n_head`` (query heads) does not enter the formula. ``bytes_per_value`` b in bytes.
    """

    name: str
    n_layer: int
    n_head: int
    n_kv_head: int
    head_dim: int
    hidden_size: int
    bytes_per_value: float
    context_window: int | None = None
    note: str = ""
    n_params: int | None = None  # the published parameter count, to pick a shape for a model card
    window: int | None = None  # W, positions a local (sliding-window) layer keeps
    rule: str = ""  # which layers slide: core.cost.kv_layers.window_of_layers
    latent: tuple[int, int] | None = None  # MLA: (kv_lora_rank, qk_rope_head_dim)
    layer_heads: tuple[int, ...] | None = None  # KV heads per layer, where a config lists them
    unmodelled: tuple[str, ...] = ()  # fields whose caching is not counted here, as sentences
    hybrid: str = ""  # which layers keep a KV cache: core.cost.kv_hybrid.attention_layers ("" every layer)
    state: RecurrentState | None = None  # what each other layer keeps instead, per request
    layer_dims: tuple[int, ...] | None = None  # head width per layer, where layers differ (Gemma 4's global ones)
    uncounted: tuple[str, ...] = ()  # fields that may change the cache and that no reader here counts

    @property
    def attention_kind(self) -> str:
        if self.latent is not None:
            kind = "MLA"
        elif self.layer_heads is not None:
            kind = "per-layer KV heads"
        elif self.n_kv_head == self.n_head:
            kind = "MHA"
        else:
            kind = "MQA" if self.n_kv_head == 1 else "GQA"
        return f"{kind} + {self.state.kind}" if self.state is not None else kind

    def state_layers(self, n_layer: int) -> int:
        """How many of ``n_layer`` layers keep a fixed-size state instead of a KV cache (0: none)."""
        return 0 if self.state is None else n_layer - sum(attention_layers(self.hybrid, n_layer))

    def layer_words(self, n_layer: int) -> str:
        """Which layers attend, for a hybrid ("attention on 4 of 32 layers (4, 12, 20, 28); the other 28 are
        Mamba layers"), else ""."""
        return describe_hybrid(self.hybrid, n_layer, self.state.kind) if self.state is not None else ""

    @property
    def sliding(self) -> str:
        """The sliding windows in words, or "" when every layer keeps every position."""
        if self.window is None or not self.rule:
            return ""
        return f"window W = {self.window:,} positions: {describe_rule(self.rule)}"

    @property
    def terms(self) -> str:
        """The KV terms in words: "42 layers, 8 KV heads, head width 256; window W = 4,096 positions: …"
        (MLA: its latent and RoPE key instead of heads)."""
        if self.latent is not None:
            kv = f"MLA: latent {self.latent[0]:,} + RoPE key {self.latent[1]:,} values per layer"
        elif self.layer_heads is not None:
            low, high = min(self.layer_heads), max(self.layer_heads)
            kv = f"{low:,} to {high:,} KV heads per layer, head width {self.head_dim:,}"
        else:
            kv = f"{self.n_kv_head:,} KV heads, head width {self.head_dim:,}"
        if self.layer_dims is not None and self.latent is None:
            widths = ", ".join(f"{d:,}" for d in sorted(set(self.layer_dims)))
            kv += f" (head widths per layer: {widths})"
        layers = f"{self.n_layer:,} layers"
        if self.state is not None:
            n_state = self.state_layers(self.n_layer)
            layers += f" ({self.n_layer - n_state:,} attention, {n_state:,} {self.state.kind})"
        return f"{layers}, {kv}" + (f"; {self.sliding}" if self.sliding else "")

    def layers(self, n_layer: int, n_kv_head: int, head_dim: int, window: int | None) -> tuple[LayerCache, ...]:
        """The cache of every layer that keeps one, with typed L, H_kv, d and W (``build_layers``): this
        shape's structure (windows rule, latent, per-layer heads when L is the config's, a hybrid's
        attention layers only) with the typed numbers."""
        heads = self.layer_heads if self.layer_heads is not None and n_layer == self.n_layer else n_kv_head
        rule = (self.rule or "all") if window else ""  # W = 0 typed: no layer slides
        dims = self.layer_dims if self.layer_dims is not None and n_layer == self.n_layer else head_dim
        built = build_layers(n_layer, heads, dims, window, rule, self.latent)
        return tuple(compress(built, attention_layers(self.hybrid, n_layer))) if self.hybrid else built


PRESETS: dict[str, KVShape] = {
    "Ch. 30 two-layer example": KVShape(
        "Ch. 30 Example 30.3", 2, 2, 2, 4, 8, 2, None, "8 positions → 512 bytes; 9 → 576; 10 → 640"
    ),
    "Ch. 30 24-layer example": KVShape(
        "Ch. 30 §30.4",
        24,
        8,
        8,
        128,
        1024,
        2,
        4096,
        "T = 4,096 → 384 MiB; two requests → 768 MiB; with 4 KV heads and 4 requests (exercise 3) → 768 MiB",
    ),
    "Ch. 19 width-12,288, 96-layer model": KVShape(
        "Ch. 19 cache bill", 96, 96, 96, 128, 12288, 2, 2048, "4,718,592 bytes per token; ≈ 9.66 GB at 2,048 tokens"
    ),
    "GPT-2 small (MHA)": KVShape("gpt2", 12, 12, 12, 64, 768, 4, 1024, "published config: float32", 124_439_808),
    "Llama-2-7B (MHA)": KVShape("meta-llama/Llama-2-7b-hf", 32, 32, 32, 128, 4096, 2, 4096, "float16", 6_738_415_616),
    "Llama-3-8B (GQA)": KVShape("meta-llama/Meta-Llama-3-8B", 32, 32, 8, 128, 4096, 2, 8192, "bfloat16", 8_030_261_248),
    "Mistral-7B-v0.1 (GQA)": KVShape(
        "mistralai/Mistral-7B-v0.1",
        32,
        32,
        8,
        128,
        4096,
        2,
        32768,
        "bfloat16, sliding_window 4096",
        7_241_732_096,
        window=4096,
        rule="all",
    ),
    "Falcon-7B (MQA)": KVShape("tiiuae/falcon-7b", 32, 71, 1, 64, 4544, 2, 2048, "bfloat16, multi_query"),
    "Llama-2-13B (MHA)": KVShape(
        "meta-llama/Llama-2-13b-hf", 40, 40, 40, 128, 5120, 2, 4096, "float16", 13_015_864_320
    ),
    "Llama-3-70B (GQA)": KVShape(
        "meta-llama/Meta-Llama-3-70B", 80, 64, 8, 128, 8192, 2, 8192, "bfloat16", 70_553_706_496
    ),
    "Llama-3.2-1B (GQA)": KVShape(
        "meta-llama/Llama-3.2-1B", 16, 32, 8, 64, 2048, 2, 131072, "bfloat16, head_dim 64", 1_235_814_400
    ),
    "Llama-3.2-3B (GQA)": KVShape(
        "meta-llama/Llama-3.2-3B", 28, 24, 8, 128, 3072, 2, 131072, "bfloat16", 3_212_749_824
    ),
}


# Current models beside the chapters' (each term from the config.json of the repository named; b is the
# config's torch_dtype unless said). Offered on the memory page and as the weights page's card
# architecture; both count their KV bytes layer by layer (``KVShape.layers``, ``core.cost.kv_layers``).
MODERN_PRESETS: dict[str, KVShape] = {
    # meta-llama/Meta-Llama-3-8B: 32 layers, 32 heads, 8 KV heads, hidden 4096 (d = 128), bfloat16.
    "Llama-3-8B (GQA, 8 KV heads)": PRESETS["Llama-3-8B (GQA)"],
    # mistralai/Mistral-7B-v0.1: as Llama's shape, plus "sliding_window": 4096 on every layer.
    "Mistral-7B-v0.1 (every layer local, W = 4,096)": PRESETS["Mistral-7B-v0.1 (GQA)"],
    # google/gemma-2-9b: 42 layers, 16 heads, 8 KV heads, head_dim 256, hidden 3584, sliding_window 4096,
    # max_position_embeddings 8192; transformers' Gemma2 layer_types: layers 0, 2, 4 … local.
    # Its config's torch_dtype is float32; b = 2 is the bfloat16 it is served in.
    "Gemma-2-9B (every 2nd layer local, W = 4,096)": KVShape(
        "google/gemma-2-9b",
        42,
        16,
        8,
        256,
        3584,
        2,
        8192,
        "served in bfloat16 (config: float32)",
        window=4096,
        rule="every 2",
    ),
    # deepseek-ai/DeepSeek-V3: 61 layers, 128 heads, kv_lora_rank 512, qk_rope_head_dim 64, v_head_dim 128,
    # hidden 7168, max_position_embeddings 163840, bfloat16.
    "DeepSeek-V3 (MLA)": KVShape(
        "deepseek-ai/DeepSeek-V3",
        61,
        128,
        128,
        128,
        7168,
        2,
        163840,
        "bfloat16; kv_lora_rank 512, qk_rope_head_dim 64",
        latent=(512, 64),
    ),
    # tiiuae/falcon-40b: 60 layers, 128 heads, num_kv_heads 8, hidden 8192 (d = 64), new_decoder_architecture
    # true (so multi_query true is ignored), bfloat16, 2,048 positions.
    "Falcon-40B (new_decoder_architecture, 8 KV heads)": KVShape(
        "tiiuae/falcon-40b", 60, 128, 8, 64, 8192, 2, 2048, "bfloat16; new_decoder_architecture: num_kv_heads 8"
    ),
    # Qwen/Qwen2-7B: 28 layers, 28 heads, 4 KV heads, hidden 3584 (d = 128), max_position_embeddings 131072,
    # "use_sliding_window": false (its sliding_window 131072 and max_window_layers 28 are not used), bfloat16.
    "Qwen2-7B (GQA, 4 KV heads)": KVShape(
        "Qwen/Qwen2-7B", 28, 28, 4, 128, 3584, 2, 131072, "bfloat16; use_sliding_window false: every layer global"
    ),
}


# Hybrids: attention on a few layers, a fixed-size state on the others (core.cost.kv_hybrid). Offered on the
# memory page only: the weights page's card plan counts a KV cache, not a state.
HYBRID_PRESETS: dict[str, KVShape] = {
    # ai21labs/Jamba-v0.1: 32 layers, attn_layer_period 8, attn_layer_offset 4 (attention on layers 4, 12, 20,
    # 28), 32 heads, 8 KV heads, hidden 4096 (d = 128), mamba_expand 2, mamba_d_conv 4, mamba_d_state 16,
    # max_position_embeddings 262144, bfloat16.
    "Jamba-v0.1 (4 attention + 28 Mamba layers)": KVShape(
        "ai21labs/Jamba-v0.1",
        32,
        32,
        8,
        128,
        4096,
        2,
        262144,
        "bfloat16; attn_layer_period 8, attn_layer_offset 4",
        hybrid="period 8 offset 4",
        state=mamba_state({"mamba_expand": 2, "mamba_d_conv": 4, "mamba_d_state": 16}, 4096, 10**6, []),
    ),
    # Qwen/Qwen3-Next-80B-A3B-Instruct: 48 layers, full_attention_interval 4 (attention on layers 3, 7, … 47),
    # 16 heads, 2 KV heads, head_dim 256, hidden 2048; Gated DeltaNet: linear_num_key_heads 16,
    # linear_num_value_heads 32, linear_key_head_dim 128, linear_value_head_dim 128, linear_conv_kernel_dim 4;
    # max_position_embeddings 262144, bfloat16.
    "Qwen3-Next-80B-A3B (12 attention + 36 Gated DeltaNet layers)": KVShape(
        "Qwen/Qwen3-Next-80B-A3B-Instruct",
        48,
        16,
        2,
        256,
        2048,
        2,
        262144,
        "bfloat16; full_attention_interval 4",
        hybrid="interval 4",
        state=deltanet_state(
            {
                "linear_conv_kernel_dim": 4,
                "linear_key_head_dim": 128,
                "linear_value_head_dim": 128,
                "linear_num_key_heads": 16,
                "linear_num_value_heads": 32,
            },
            10**6,
            [],
        ),  # fmt: skip
    ),
}
