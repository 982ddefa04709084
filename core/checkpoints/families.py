"""The model families ``core.checkpoints.load`` loads: a Hugging Face ``config.json`` → ``GPTConfig``,
and the checkpoint's tensor names → ``GPT``'s parameter names.

Llama, Mistral, Qwen2 and Qwen3 store tensors under Llama's names (``model.layers.0.self_attn.q_proj
.weight``; Qwen3 adds ``self_attn.q_norm.weight`` and ``k_norm.weight``), which are ours plus a ``model.``
prefix. GPT-2 names them differently and stores
its projections as ``Conv1D`` weights ``(in, out)`` — the transpose of ``nn.Linear``'s
``(out, in)`` — with q, k and v fused into one ``c_attn`` ``(C, 3·C)``; those are split and
transposed on load. Defaults for keys a ``config.json`` leaves out are those of transformers'
configuration classes (read, not imported: transformers is not needed to run the app).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.model.config import GPTConfig, RopeScaling
from core.text import quoted

LLAMA_LIKE = ("LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM")
SUPPORTED = (*LLAMA_LIKE, "GPT2LMHeadModel")


def _get(hf: dict, key: str, default):
    value = hf.get(key)
    return default if value is None else value


def _float(hf: dict, key: str, default: float | None = None) -> float:
    """A number field (``rms_norm_eps``, ``rope_theta`` …) as a float; anything else is refused by
    its name in config.json (Python's own "could not convert string to float" named no field)."""
    value = _get(hf, key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"config.json's {key} must be a number, got {quoted(value, 60)}")
    return float(value)


def _flag(hf: dict, key: str, default: bool) -> bool:
    """A true/false field (``tie_word_embeddings`` …): JSON true or false only ("no" was read as true)."""
    value = _get(hf, key, default)
    if not isinstance(value, bool):
        raise ValueError(f"config.json's {key} must be true or false, got {quoted(value, 60)}")
    return value


def _rope(hf: dict) -> tuple[float, RopeScaling | None]:
    """rope_theta and the scaling, from transformers 5's ``rope_parameters`` or the older
    top-level ``rope_theta`` / ``rope_scaling`` keys. Only plain RoPE and "llama3" are known."""
    key = "rope_parameters" if hf.get("rope_parameters") else "rope_scaling"
    params = hf.get(key) or {}
    if not isinstance(params, dict):
        raise ValueError(f"config.json's {key} must be an object of RoPE settings, got {quoted(params, 60)}")
    params = dict(params)
    theta = _float(params, "rope_theta") if params.get("rope_theta") else _float(hf, "rope_theta", 10000.0)
    kind = params.pop("rope_type", None) or params.pop("type", None) or "default"
    if kind == "default":
        return theta, None
    if kind != "llama3":
        raise ValueError(f"RoPE scaling of type {quoted(kind)} is not supported (plain RoPE and 'llama3' are)")
    names = ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings")
    missing = [n for n in names if params.get(n) is None]
    if missing:
        raise ValueError(f"rope_scaling 'llama3' lacks {quoted(missing[0])}")
    original = params["original_max_position_embeddings"]
    if isinstance(original, bool) or not isinstance(original, int) or original < 1:
        raise ValueError(
            f"config.json's original_max_position_embeddings must be a positive integer, got {quoted(original, 60)}"
        )
    factors = (_float(params, n) for n in names[:3])
    return theta, RopeScaling(*factors, original_max_position_embeddings=original)


def config_from_hf(hf: dict, max_context: int | None = None) -> tuple[GPTConfig, int]:
    """``GPTConfig`` for a supported ``config.json`` (a dict), and the checkpoint's own context
    window. ``block_size`` is that window, capped at ``max_context`` if given (what a KV cache
    made from the config preallocates). Raises ``ValueError`` for an unsupported architecture
    or option (another activation, RoPE scaling type, per-layer sliding windows …) or bad sizes."""
    arch = (hf.get("architectures") or [None])[0]
    if arch not in SUPPORTED:
        raise ValueError(f"architecture {quoted(arch, 100)} is not supported; supported: {', '.join(SUPPORTED)}")
    try:
        if arch == "GPT2LMHeadModel":
            return _gpt2(hf, max_context)
        return _llama_like(arch, hf, max_context)
    except (TypeError, KeyError) as e:
        raise ValueError(f"config.json for {arch} is missing or has a malformed field: {e}") from None


def _cap(window: int, max_context: int | None) -> int:
    """The context window, capped at ``max_context``; a window that is not a whole number is refused
    by name ("256" as a string gave "'<' not supported between instances of 'int' and 'str')."""
    if isinstance(window, bool) or not isinstance(window, int):
        raise ValueError(
            f"config.json's context window (max_position_embeddings) must be a whole number, got {quoted(window, 60)}"
        )
    return window if max_context is None else min(window, max_context)


def _llama_like(arch: str, hf: dict, max_context: int | None) -> tuple[GPTConfig, int]:
    act = _get(hf, "hidden_act", "silu")
    if act != "silu":
        raise ValueError(f"{arch} with hidden_act {quoted(act)} is not supported (SwiGLU uses 'silu')")
    window = None
    if arch == "MistralForCausalLM":
        window = hf.get("sliding_window", 4096)  # MistralConfig's default when the key is absent
    if arch in ("Qwen2ForCausalLM", "Qwen3ForCausalLM"):  # Qwen3Config places the window as Qwen2Config does
        window = _qwen2_window(hf)
    theta, scaling = _rope(hf)
    n_head = hf["num_attention_heads"]
    default_window = {"MistralForCausalLM": 131072, "Qwen2ForCausalLM": 32768, "Qwen3ForCausalLM": 32768}.get(
        arch, 2048
    )  # the classes' defaults
    context = _get(hf, "max_position_embeddings", default_window)
    attention_bias = _flag(hf, "attention_bias", False)
    qwen3 = arch == "Qwen3ForCausalLM"
    # Qwen3Config's head_dim defaults to 128, not hidden_size / n_head (Qwen3-0.6B: 16 heads of 128 over 1,024)
    head_dim = _get(hf, "head_dim", 128) if qwen3 else hf.get("head_dim")
    cfg = GPTConfig(
        vocab_size=hf["vocab_size"],
        block_size=_cap(context, max_context),
        n_layer=hf["num_hidden_layers"],
        n_head=n_head,
        n_kv_head=_get(hf, "num_key_value_heads", n_head),
        n_embd=hf["hidden_size"],
        ffn_hidden=hf["intermediate_size"],
        rope_theta=theta,
        rope_scaling=scaling,
        norm_eps=_float(hf, "rms_norm_eps", 1e-6),
        head_dim=head_dim,
        qkv_bias=arch == "Qwen2ForCausalLM" or attention_bias,
        qk_norm=qwen3,
        o_bias=attention_bias,
        mlp_bias=_flag(hf, "mlp_bias", False),
        tie_embeddings=_flag(hf, "tie_word_embeddings", False),
        sliding_window=window,
    )
    return cfg, context


def _qwen2_window(hf: dict) -> int | None:
    """Qwen2's window as Qwen2Config's ``layer_types`` place it: none unless ``use_sliding_window`` is true,
    then on layers ``max_window_layers`` (default 28) and up — every layer when that is 0, none when it is
    at least ``num_hidden_layers``. The model has one window for all layers or none, so a window on some
    layers only is refused, naming the field."""
    if not _flag(hf, "use_sliding_window", False) or hf.get("sliding_window") is None:
        return None
    first, n_layer = _get(hf, "max_window_layers", 28), hf["num_hidden_layers"]
    if isinstance(first, bool) or not isinstance(first, int):
        raise ValueError(f"config.json's max_window_layers must be a whole number, got {quoted(first, 60)}")
    if first >= n_layer:
        return None
    if first > 0:
        where = f"layer {first}" if first == n_layer - 1 else f"layers {first} to {n_layer - 1}"
        raise ValueError(
            f"Qwen2 with max_window_layers {first}: the sliding window on {where} only, the layers below it "
            "global, is not supported (a window on every layer, max_window_layers 0, is)"
        )
    return hf["sliding_window"]


def _gpt2(hf: dict, max_context: int | None) -> tuple[GPTConfig, int]:
    act = _get(hf, "activation_function", "gelu_new")
    if act not in ("gelu_new", "gelu_pytorch_tanh"):
        raise ValueError(f"GPT-2 with activation_function {quoted(act)} is not supported (the tanh GELU is)")
    if not _get(hf, "scale_attn_weights", True) or hf.get("scale_attn_by_inverse_layer_idx"):
        raise ValueError("GPT-2 with non-standard attention scaling is not supported")
    c, context = _get(hf, "n_embd", 768), _get(hf, "n_positions", 1024)
    cfg = GPTConfig(
        vocab_size=_get(hf, "vocab_size", 50257),
        block_size=_cap(context, max_context),
        n_layer=_get(hf, "n_layer", 12),
        n_head=_get(hf, "n_head", 12),
        n_kv_head=_get(hf, "n_head", 12),
        n_embd=c,
        ffn_hidden=_get(hf, "n_inner", 4 * c),
        norm="layernorm",
        norm_eps=_float(hf, "layer_norm_epsilon", 1e-5),
        positions="learned",
        mlp="gelu_tanh",
        qkv_bias=True,
        o_bias=True,
        mlp_bias=True,
        tie_embeddings=_flag(hf, "tie_word_embeddings", True),
    )
    return cfg, context


@dataclass(frozen=True)
class Source:
    """Where one of our parameters comes from: tensor ``key`` in the checkpoint, optionally
    ``cols`` (a slice of its last axis: one of q/k/v in GPT-2's fused ``c_attn``), ``rows`` (its
    first rows: a learned position table cut to ``block_size``) and ``transpose`` (Conv1D
    ``(in, out)`` → Linear ``(out, in)``)."""

    key: str
    cols: tuple[int, int] | None = None
    rows: int | None = None
    transpose: bool = False

    def shape(self, stored: tuple[int, ...]) -> tuple[int, ...]:
        """The shape this source yields from a stored tensor of shape ``stored`` (no reading)."""
        shape = list(stored)
        if self.cols is not None:
            shape[-1] = max(0, min(self.cols[1], shape[-1]) - self.cols[0])
        if self.rows is not None:
            shape[0] = min(self.rows, shape[0])
        return tuple(reversed(shape)) if self.transpose else tuple(shape)

    def read(self, handle):
        """The tensor, read from an open ``safetensors.safe_open`` handle (only the slice needed)."""
        sl = handle.get_slice(self.key)
        index = [slice(None)] * len(sl.get_shape())
        if self.cols is not None:
            index[-1] = slice(*self.cols)
        if self.rows is not None:
            index[0] = slice(0, self.rows)
        t = sl[tuple(index)]
        return t.T if self.transpose else t  # a view: core.model.layout.decode_layout lays it out


# Stored tensors that hold no parameter: RoPE frequencies some old Llama checkpoints saved, and
# GPT-2's causal-mask buffers (``h.0.attn.bias`` / ``masked_bias``).
_IGNORED = re.compile(r"(rotary_emb\.inv_freq|(^|\.)h\.\d+\.attn\.(bias|masked_bias))$")


def tensor_sources(arch: str, cfg: GPTConfig, names: list[str], stored: set[str]) -> tuple[dict[str, Source], set]:
    """For each of our parameter ``names`` its ``Source`` in a checkpoint of ``arch`` holding the
    ``stored`` tensor keys, and the stored keys nothing reads (an output head stored beside tied
    embeddings and the buffers above are allowed; the caller refuses the rest)."""
    if arch == "GPT2LMHeadModel":
        prefix = "transformer." if "transformer.wte.weight" in stored else ""
        plan = {n: _gpt2_source(n, cfg, prefix) for n in names}
    else:
        plan = {n: Source(n if n == "lm_head.weight" else f"model.{n}") for n in names}
    used = {s.key for s in plan.values()}
    unused = {k for k in stored - used if not _IGNORED.search(k)}
    if cfg.tie_embeddings:
        unused.discard("lm_head.weight")
    return plan, unused


def _gpt2_source(name: str, cfg: GPTConfig, prefix: str) -> Source:
    c = cfg.n_embd
    top = {
        "embed_tokens.weight": "wte.weight",
        "embed_positions.weight": "wpe.weight",
        "norm.weight": "ln_f.weight",
        "norm.bias": "ln_f.bias",
    }
    if name in top:
        rows = cfg.block_size if name == "embed_positions.weight" else None
        return Source(prefix + top[name], rows=rows)
    if name == "lm_head.weight":
        return Source("lm_head.weight")  # only when not tied (GPT-2 always ties)
    layer, rest = re.fullmatch(r"layers\.(\d+)\.(.+)", name).groups()
    h = f"{prefix}h.{layer}."
    module, kind = rest.rsplit(".", 1)  # e.g. "self_attn.q_proj", "weight"
    norms = {"input_layernorm": "ln_1", "post_attention_layernorm": "ln_2"}
    if module in norms:
        return Source(f"{h}{norms[module]}.{kind}")
    qkv = {"self_attn.q_proj": 0, "self_attn.k_proj": 1, "self_attn.v_proj": 2}
    if module in qkv:
        i = qkv[module]
        return Source(f"{h}attn.c_attn.{kind}", cols=(i * c, (i + 1) * c), transpose=kind == "weight")
    conv = {"self_attn.o_proj": "attn.c_proj", "mlp.up_proj": "mlp.c_fc", "mlp.down_proj": "mlp.c_proj"}
    return Source(f"{h}{conv[module]}.{kind}", transpose=kind == "weight")
