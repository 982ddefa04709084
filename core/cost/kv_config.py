"""What a Hugging Face ``config.json`` says about the KV cache beyond M = 2·B·L·T·H_kv·d·b: Falcon's
``new_decoder_architecture``, per-layer KV heads, multi-head latent attention, sliding windows (with the
pattern transformers gives a family whose config lists none), hybrids' layers without a KV cache
(``core.cost.kv_hybrid``), and the fields this calculator does not model (said, never silently priced).

Each field is read as ``transformers`` 5.x reads it (its ``FalconAttention``, ``Qwen2Config``,
``Gemma2Config``/``Gemma3TextConfig`` ``layer_types``, ``DeepseekV3Attention``, ``JambaConfig``,
``Qwen3NextConfig``); tests build those config classes and tiny models of each family and compare their
``layer_types`` and cache tensors with ``core.cost.kv_layers``.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.cost.kv_dialects import (
    GEMMA4,
    attn_type_kinds,
    cla_layer_heads,
    glm_kv_heads,
    global_layer_heads,
    per_layer_terms,
)
from core.cost.kv_hybrid import STATE_KINDS, RecurrentState, read_hybrid
from core.text import ordinal, plural, quoted

# Fields whose caches this calculator does not count, and what they do (a config carrying one gets a
# sentence instead of a confident number). Names as their transformers configs spell them; hybrids'
# fields are core.cost.kv_hybrid's.
UNMODELLED = {
    "num_kv_shared_layers": "later layers reuse earlier layers' keys and values (cross-layer KV sharing)",
    "kv_sharing": "layers share one KV cache (cross-layer KV sharing)",
    "attention_chunk_size": "chunked local attention on some layers (a window that restarts every chunk)",
    "cross_attention_layers": "cross-attention layers, which cache the image's keys and values",
}
KNOWN_LAYER_TYPES = {"full_attention": "G", "sliding_attention": "L", **STATE_KINDS}
# transformers' layer_types where a config lists none and gives no pattern: every P-th layer global, the
# others local ((i + 1) mod P = 0 global, as each family's config class builds them).
DEFAULT_PERIOD = {
    "gemma2": ("Gemma2Config", 2),
    "vaultgemma": ("VaultGemmaConfig", 2),
    "gpt_oss": ("GptOssConfig", 2),
    "gemma3_text": ("Gemma3TextConfig", 6),
    "gemma3": ("Gemma3TextConfig", 6),
    "cohere2": ("Cohere2Config", 4),
    "exaone4": ("Exaone4Config", 4),
    "olmo3": ("Olmo3Config", 4),
}
# Families whose transformers config class builds no layer_types: its cache slides every layer.
EVERY_LAYER = {
    "mistral", "mixtral", "ministral", "ministral3", "phi3", "phimoe", "phi4_multimodal", "starcoder2", "doge",
    "qwen3_vl_moe_text", "qwen3_omni_moe_text", "voxtral_realtime_text",
}  # fmt: skip
# Qwen2's switch (use_sliding_window, default false) and first local layer (max_window_layers, default 28);
# Qwen3-MoE has the switch only (every layer), SmolLM3 slides its NoPE layers.
QWEN_WINDOWS = {"qwen2", "qwen3", "qwen2_moe", "dots1", "qwen2_vl_text", "qwen2_5_vl_text", "qwen3_moe", "smollm3"}


@dataclass(frozen=True)
class KVStructure:
    """The structure terms: ``n_kv_head`` (one count, or one per layer), ``window`` W (positions, None if
    no layer slides), ``rule`` (``core.cost.kv_layers.window_of_layers``), ``latent`` (MLA's
    (kv_lora_rank, qk_rope_head_dim)), ``hybrid`` and ``state`` (``core.cost.kv_hybrid``: which layers keep
    a KV cache, what the others keep), ``unmodelled`` (sentences) and ``notes`` (how a field was read)."""

    n_kv_head: int | tuple[int, ...]
    window: int | None = None
    rule: str = ""
    latent: tuple[int, int] | None = None
    unmodelled: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    hybrid: str = ""
    state: RecurrentState | None = None
    layer_dims: tuple[int, ...] | None = None  # head width per layer where layers differ (Gemma 4's global layers)
    per_layer_other: tuple[str, ...] = ()  # per_layer_config fields not counted


def _count(cfg: dict, key: str, limit: int) -> int:
    value = cfg[key]
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
        raise ValueError(f'"{key}" must be a whole number from 1 to {limit:,}, got {quoted(value)}')
    return value


def _kv_heads(cfg: dict, n_layer: int, n_head: int, limit: int) -> tuple[int | tuple[int, ...], list[str]]:
    notes = []
    if cfg.get("new_decoder_architecture") is True:  # Falcon-40B/180B: multi_query is ignored
        n_kv = _count(cfg, "num_kv_heads", limit) if "num_kv_heads" in cfg else n_head
        if cfg.get("multi_query") is True:
            notes.append("new_decoder_architecture: num_kv_heads counts, multi_query is ignored (as transformers)")
        return n_kv, notes
    if cfg.get("multi_query") is True:
        return 1, ["multi_query: one KV head"]
    if (glm := glm_kv_heads(cfg, limit)) is not None:
        return glm[0], [glm[1]]
    # DeciLM's num_key_value_heads_per_layer first: its per-layer counts replace a single one.
    for key in ("num_key_value_heads_per_layer", "num_key_value_heads", "num_kv_heads", "n_head_kv"):
        value = cfg.get(key)
        if isinstance(value, list):  # one count per layer (DeciLM, OpenELM); 0: a layer without a KV cache
            if len(value) != n_layer:
                raise ValueError(f'"{key}" lists {len(value):,} KV-head counts for {n_layer:,} layers')
            if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= limit for v in value):
                raise ValueError(f'"{key}" must list whole numbers from 0 to {limit:,}, one per layer')
            if not any(value):
                raise ValueError(f'"{key}" lists no KV head on any layer')
            counts = ", ".join(f"{plural(value.count(h), 'layer')} with {h:,}" for h in sorted(set(value))[::-1])
            return (tuple(value) if len(set(value)) > 1 else value[0]), [f"{key}: one count per layer ({counts})"]
        if value is not None:
            return _count(cfg, key, limit), notes
    return n_head, notes


def _kinds(cfg: dict, n_layer: int) -> str | None:
    """``layer_types`` as one letter a layer: G full, L sliding, S a state layer, ? another kind (MiniMax's
    ``attn_type_list`` read the same way; Gemma 4 without a list as ``Gemma4TextConfig`` builds it: every 6th
    layer full, and the last)."""
    if (listed := attn_type_kinds(cfg, n_layer)) is not None:
        return listed
    types = cfg.get("layer_types")
    if types is None and str(cfg.get("model_type") or "") in GEMMA4 and cfg.get("sliding_window"):
        return "".join("G" if (i + 1) % 6 == 0 or i == n_layer - 1 else "L" for i in range(n_layer))
    if not isinstance(types, list):
        return None
    return "".join(KNOWN_LAYER_TYPES.get(t, "?") if isinstance(t, str) else "?" for t in types)


def _qwen_windows(cfg: dict, n_layer: int, window: int) -> tuple[int | None, str, list[str]]:
    """Qwen2's switch and first local layer, as Qwen2Config builds layer_types (Qwen2-MoE: every other
    layer below max_window_layers)."""
    if cfg.get("use_sliding_window") is not True:
        return None, "", ["use_sliding_window false: every layer full attention"]
    model_type = cfg.get("model_type")
    if model_type == "qwen3_moe":  # Qwen3MoeConfig: no max_window_layers, the window on every layer
        return window, "all", ["use_sliding_window true: the window on every layer (Qwen3MoeConfig)"]
    if model_type == "smollm3":  # SmolLM3Config: the window on the layers without RoPE
        return _smollm3_windows(cfg, n_layer, window)
    first = cfg.get("max_window_layers", 28)
    if isinstance(first, bool) or not isinstance(first, int):
        raise ValueError(f'"max_window_layers" must be a whole number, got {quoted(first)}')
    if model_type == "qwen2_moe":
        kinds = "".join("L" if (i + 1) % 2 and i < first else "G" for i in range(n_layer))
        return (window, f"kinds:{kinds}", []) if "L" in kinds else (None, "", ["max_window_layers 0: no layer slides"])
    if first >= n_layer:
        return None, "", [f"max_window_layers {first:,} ≥ L: every layer full attention"]
    if first <= 0:
        return window, "all", [f"max_window_layers {first:,}: the window on every layer"]
    return window, f"from {first}", [f"max_window_layers {first:,}: layers {first:,} and up local"]


def _smollm3_windows(cfg: dict, n_layer: int, window: int) -> tuple[int | None, str, list[str]]:
    """SmolLM3: local where ``no_rope_layers`` has 0 (default: every ``no_rope_layer_interval``-th layer, 4)."""
    rope = cfg.get("no_rope_layers")
    if rope is None:
        every = cfg.get("no_rope_layer_interval", 4)
        if isinstance(every, bool) or not isinstance(every, int) or not 1 <= every <= 10**6:
            raise ValueError(f'"no_rope_layer_interval" must be a whole number ≥ 1, got {quoted(every)}')
        rope = [int((i + 1) % every != 0) for i in range(n_layer)]
    if not isinstance(rope, list) or len(rope) != n_layer or any(r not in (0, 1) for r in rope):
        raise ValueError(f'"no_rope_layers" must list 0 or 1 for each of the {n_layer:,} layers')
    kinds = "".join("G" if r else "L" for r in rope)
    if "L" not in kinds:
        return None, "", ["no_rope_layers: no layer without RoPE, so none slides"]
    return window, f"kinds:{kinds}", ["use_sliding_window true: the window on the layers without RoPE (SmolLM3)"]


def _windows(cfg: dict, n_layer: int, kinds: str | None) -> tuple[int | None, str, list[str]]:
    window = cfg.get("sliding_window")
    model_type = str(cfg.get("model_type") or "")
    if window is None or window is False:
        return None, "", []
    window = _count(cfg, "sliding_window", 10**12)
    if kinds is not None:
        if "L" not in kinds:
            return None, "", ["layer_types: no layer slides"]
        if len(kinds) == n_layer and "?" not in kinds:
            return window, f"kinds:{kinds}", ["layer_types: each layer's kind as listed"]
        return window, "", []  # unknown kinds: said by _unmodelled
    if "use_sliding_window" in cfg or model_type in QWEN_WINDOWS:
        return _qwen_windows(cfg, n_layer, window)
    pattern = cfg.get("sliding_window_pattern")
    if isinstance(pattern, str) and pattern and set(pattern) <= {"L", "G"}:  # EXAONE 4: "LLLG" from layer 0 on
        kinds = "".join(pattern[i % len(pattern)] for i in range(n_layer))
        return (window, f"kinds:{kinds}", [f"sliding_window_pattern {pattern}"]) if "L" in kinds else (None, "", [])
    if pattern is not None:
        if isinstance(pattern, bool) or not isinstance(pattern, int) or pattern < 1:
            raise ValueError(f'"sliding_window_pattern" must be a whole number ≥ 1 or L and G, got {quoted(pattern)}')
        if pattern == 1:  # (i + 1) mod 1 = 0 on every layer: all global, as transformers builds it
            return None, "", ["sliding_window_pattern 1: every layer global"]
        return window, f"every {pattern}", []
    default = DEFAULT_PERIOD.get(model_type)
    if model_type == "afmoe":  # its period is a field of its own (default 4)
        default = ("AfmoeConfig", cfg.get("global_attn_every_n_layers", 4))
        if isinstance(default[1], bool) or not isinstance(default[1], int) or not 1 <= default[1] <= 10**6:
            raise ValueError(
                f'"global_attn_every_n_layers" must be a whole number from 1 to 1,000,000, got {default[1]!r}'
            )
        if default[1] == 1:
            return None, "", ["global_attn_every_n_layers 1: every layer global"]
    if default is not None:
        said = f"{default[0]}'s default, every {ordinal(default[1])} layer global"
        return window, f"every {default[1]}", [f"no layer_types or sliding_window_pattern: {said}"]
    if model_type and model_type not in EVERY_LAYER:  # rule "?": said instead of priced (read_structure)
        return (
            None,
            "?",
            [
                f"sliding_window without layer_types: which layers slide in model_type {quoted(model_type, 30)} is "
                "set by its transformers config class, not known here (a config saved by transformers lists its "
                "layer_types)"
            ],
        )
    said = "" if model_type else " (no model_type: read as Mistral's)"
    return window, "all", [f"sliding_window without layer_types: every layer local{said}"]


def _unmodelled(cfg: dict, kinds: str | None) -> list[str]:
    out = [f"{key}: {what}" for key, what in UNMODELLED.items() if cfg.get(key) not in (None, False, 0, [])]
    if str(cfg.get("model_type")).startswith("gemma3n") and "num_kv_shared_layers" not in cfg:
        out.append(
            f"num_kv_shared_layers (Gemma3nTextConfig's default when not given): {UNMODELLED['num_kv_shared_layers']}"
        )
    if kinds is not None and "?" in kinds:
        known = set(KNOWN_LAYER_TYPES)
        other = sorted({str(t) for t in cfg["layer_types"]} - known)
        out.append(f"layer_types {', '.join(quoted(t, 30) for t in other[:4])}: layers of a kind not modelled")
    return out


def read_structure(cfg: dict, n_layer: int, n_head: int, limit: int, hidden: int | None = None) -> KVStructure:
    """The KV structure of one (language-model) config dict with ``n_layer`` layers, ``n_head`` query heads
    and ``hidden`` = hidden_size (for a Mamba layer's state); terms above ``limit`` are refused. Raises
    ``ValueError`` naming a bad field."""
    n_kv, notes = _kv_heads(cfg, n_layer, n_head, limit)
    latent = None
    if cfg.get("kv_lora_rank") is not None:  # DeepSeek-V2/V3 multi-head latent attention
        latent = (_count(cfg, "kv_lora_rank", limit), _count(cfg, "qk_rope_head_dim", limit))
        notes.append(f"MLA: kv_lora_rank {latent[0]:,} + qk_rope_head_dim {latent[1]:,} values per layer")
    kinds = _kinds(cfg, n_layer)
    if kinds is not None and len(kinds) != n_layer:
        raise ValueError(f'"layer_types" lists {len(kinds):,} layers; num_hidden_layers is {n_layer:,}')
    window, rule, more = _windows(cfg, n_layer, kinds)
    unknown = more if rule == "?" else []
    if unknown:
        rule, more = "", []
    hybrid = read_hybrid(cfg, kinds, hidden, limit)
    unmodelled = _unmodelled(cfg, kinds) + list(hybrid.unmodelled) + unknown
    if hybrid.state is None and kinds is not None and "S" in kinds:
        rule = ""  # the state layers are said, not priced
    notes += more + list(hybrid.notes)
    n_kv, dims, other = _per_layer(cfg, n_layer, n_head, hidden, n_kv, kinds, limit, notes)
    if (cla := cla_layer_heads(cfg, n_layer, n_kv)) is not None:
        n_kv = cla[0]
        notes.append(cla[1])
    return KVStructure(
        n_kv, window, rule, latent, tuple(unmodelled), tuple(notes), hybrid.rule, hybrid.state, dims, tuple(other)
    )


def _per_layer(cfg, n_layer, n_head, hidden, n_kv, kinds, limit, notes):
    """KV heads and head widths per layer where layers differ: Gemma 4's full-attention layers
    (``global_layer_heads``), then transformers' ``per_layer_config`` over them. Returns (KV heads, widths or None,
    per_layer_config fields not counted)."""
    head_dim = cfg.get("head_dim", cfg.get("kv_channels"))
    if not isinstance(head_dim, int) or isinstance(head_dim, bool):
        head_dim = hidden // n_head if hidden and n_head and hidden % n_head == 0 else None
    overrides, other = per_layer_terms(cfg, n_layer, limit)
    global_kv = global_layer_heads(cfg, head_dim, limit) if not overrides else None
    if global_kv is not None:
        (heads, d), said = global_kv
        notes.append(said)
        full = [k == "G" for k in kinds] if kinds is not None else [True] * n_layer
        overrides = {i: {"head_dim": d, **({"num_key_value_heads": heads} if heads else {})}
                     for i in range(n_layer) if full[i]}  # fmt: skip
    elif overrides:
        notes.append(f"per_layer_config: {len(overrides):,} layers with their own head width or KV heads")
    if not overrides or head_dim is None:
        return n_kv, None, other
    listed = n_kv if isinstance(n_kv, tuple) else (n_kv,) * n_layer
    heads = tuple(overrides.get(i, {}).get("num_key_value_heads", h) if h else h for i, h in enumerate(listed))
    dims = tuple(overrides.get(i, {}).get("head_dim", head_dim) for i in range(n_layer))
    changed = any(d != head_dim for d in dims)
    return (heads if len(set(heads)) > 1 else heads[0]), (dims if changed else None), other
