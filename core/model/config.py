"""Model shape: one frozen dataclass with the field's standard names, plus presets.

One ``GPTConfig`` describes the shipped model and the pretrained families ``core.checkpoints.load``
loads (Llama, Mistral, Qwen2, Qwen3, GPT-2): they differ only in a few switches — the norm, how
positions enter, the MLP, which projections carry biases, per-head q/k norms, tied embeddings, a
sliding window —
the way one GPT class with config flags serves many families in minimal engines (nanoGPT,
gpt-fast). Defaults are the shipped model's, so its ``config.json`` loads unchanged.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path

from core.text import quoted

NORMS = ("rmsnorm", "layernorm")  # RMSNorm (Llama) or LayerNorm with bias (GPT-2)
POSITIONS = ("rope", "learned")  # rotary (Su et al., 2021) or a learned absolute table (GPT-2)
MLPS = ("swiglu", "gelu_tanh")  # down(silu(gate)·up) (Shazeer, 2020) or down(gelu_tanh(up)) (GPT-2)


@dataclass(frozen=True)
class RopeScaling:
    """Llama 3.1's RoPE frequency scaling (``rope_type`` "llama3"): wavelengths longer than
    ``original_max_position_embeddings / low_freq_factor`` are stretched by ``factor``, shorter
    than ``… / high_freq_factor`` kept, and those between blended smoothly (Meta's Llama 3.1
    reference code; the Llama 3 Herd of Models paper, 2024)."""

    factor: float
    low_freq_factor: float
    high_freq_factor: float
    original_max_position_embeddings: int
    rope_type: str = "llama3"

    def __post_init__(self) -> None:
        if self.rope_type != "llama3":
            raise ValueError(f"only rope_scaling of type 'llama3' is supported, got {quoted(self.rope_type)}")
        if not (self.factor > 0 and self.high_freq_factor > self.low_freq_factor > 0):
            raise ValueError(
                "rope_scaling needs factor > 0 and high_freq_factor > low_freq_factor > 0, got "
                f"{self.factor}, {self.high_freq_factor}, {self.low_freq_factor}"
            )
        if not isinstance(self.original_max_position_embeddings, int) or self.original_max_position_embeddings <= 0:
            raise ValueError("rope_scaling original_max_position_embeddings must be a positive integer")


@dataclass(frozen=True)
class GPTConfig:
    """Shape of a decoder-only transformer.

    Fields use the standard names: ``vocab_size`` tokens, ``block_size`` positions
    (the context window), ``n_layer`` blocks, ``n_head`` query heads, ``n_kv_head``
    key/value heads (GQA: ``n_head % n_kv_head == 0``; MHA when equal, MQA when 1),
    ``n_embd`` (= d_model) and ``ffn_hidden`` for the MLP. ``head_dim`` is
    ``n_embd // n_head`` unless given (some checkpoints set it; then n_head · head_dim may
    differ from n_embd).

    Switches (defaults: the shipped Llama-style model): ``norm`` in ``NORMS`` with ``norm_eps``;
    ``positions`` in ``POSITIONS`` (``rope_theta`` and optional ``rope_scaling`` for RoPE);
    ``mlp`` in ``MLPS``; ``qkv_bias`` (q/k/v projections, Qwen2), ``o_bias`` (attention output),
    ``mlp_bias``; ``qk_norm`` (Qwen3: each head's q and k RMS-normalized over ``head_dim``, with a
    learned weight of ``head_dim`` each, before RoPE); ``tie_embeddings`` (the output head reuses the
    token embedding);
    ``sliding_window`` W (Mistral: a query at position p reads keys at p−W+1 … p only).

    Raises ``ValueError`` on a non-positive size, heads that do not divide or an unknown switch.
    """

    vocab_size: int = 1024
    block_size: int = 256
    n_layer: int = 4
    n_head: int = 4
    n_kv_head: int = 2
    n_embd: int = 128
    ffn_hidden: int = 352
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5
    head_dim: int | None = None  # None: n_embd // n_head (filled in by __post_init__)
    norm: str = "rmsnorm"
    positions: str = "rope"
    rope_scaling: RopeScaling | None = None
    mlp: str = "swiglu"
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    qk_norm: bool = False
    tie_embeddings: bool = False
    sliding_window: int | None = None

    def __post_init__(self) -> None:
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_kv_head", "n_embd", "ffn_hidden"):
            _check_positive(name, getattr(self, name))
        if self.head_dim is None:
            if self.n_embd % self.n_head:
                raise ValueError(f"n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")
            object.__setattr__(self, "head_dim", self.n_embd // self.n_head)  # frozen: set once, here
        _check_positive("head_dim", self.head_dim)
        if self.n_head % self.n_kv_head:
            raise ValueError(f"n_head ({self.n_head}) must be divisible by n_kv_head ({self.n_kv_head})")
        for name, allowed in (("norm", NORMS), ("positions", POSITIONS), ("mlp", MLPS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {quoted(getattr(self, name))}")
        if self.positions == "rope" and self.head_dim % 2:
            raise ValueError(f"head_dim ({self.head_dim}) must be even for RoPE")
        if isinstance(self.rope_scaling, dict):
            object.__setattr__(self, "rope_scaling", RopeScaling(**self.rope_scaling))
        if self.sliding_window is not None:
            _check_positive("sliding_window", self.sliding_window)
        if not (0 < self.norm_eps < math.inf and 0 < self.rope_theta < math.inf):  # Infinity passed "> 0"
            raise ValueError(
                f"norm_eps and rope_theta must be positive finite numbers, got {self.norm_eps}, {self.rope_theta}"
            )

    @property
    def attention_kind(self) -> str:
        """'MHA', 'MQA' or 'GQA', from how many query heads share one KV head."""
        if self.n_kv_head == self.n_head:
            return "MHA"
        return "MQA" if self.n_kv_head == 1 else "GQA"

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> GPTConfig:
        """Build from a dict; unknown keys raise ``ValueError`` naming them."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown config fields: {sorted(unknown)}")
        return cls(**data)

    @classmethod
    def load(cls, path: str | Path) -> GPTConfig:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


MAX_COUNT = 2**40  # far past any real model's count (vocabularies ~10⁵, contexts ~10⁷)


def _check_positive(name: str, value) -> None:
    """A positive whole number up to ``MAX_COUNT``: a config.json claiming 10⁴⁰⁰ layers passed, then
    overflowed turning its size into GiB (an OverflowError on every page)."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {quoted(value)}")
    if value > MAX_COUNT:
        raise ValueError(f"{name} must be at most 2⁴⁰ ({MAX_COUNT:,}); got a number {len(str(value))} digits long")


PRESETS: dict[str, GPTConfig] = {
    # The model shipped in assets/ (trained by `python -m core.model.train`).
    "shipped": GPTConfig(),
    # The draft model for speculative decoding (assets/draft/), same tokenizer, far cheaper.
    "draft": GPTConfig(n_layer=1, n_head=2, n_kv_head=1, n_embd=64, ffn_hidden=176),
    # A tiny shape for tests: fast, still GQA.
    "tiny": GPTConfig(vocab_size=64, block_size=32, n_layer=2, n_head=4, n_kv_head=2, n_embd=32, ffn_hidden=64),
    # A larger shape for benchmarks.
    "larger": GPTConfig(block_size=512, n_layer=8, n_head=8, n_kv_head=4, n_embd=512, ffn_hidden=1376),
}
