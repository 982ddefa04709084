"""What a Hugging Face ``config.json`` says about the KV cache beyond M = 2·B·L·T·H_kv·d·b: Falcon's
``new_decoder_architecture``, per-layer KV heads, multi-head latent attention, sliding windows, and the
fields this calculator does not model (said, never silently priced).

Each field is read as ``transformers`` 5.x reads it (its ``FalconAttention``, ``Qwen2Config``,
``Gemma2Config``/``Gemma3TextConfig`` ``layer_types``, ``DeepseekV3Attention``); tests build tiny models of
each family and compare their cache tensors with ``core.cost.kv_layers``.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.text import quoted

# Fields whose caches this calculator does not count, and what they do (a config carrying one gets a
# sentence instead of a confident number). Names as their transformers configs spell them.
UNMODELLED = {
    "num_kv_shared_layers": "later layers reuse earlier layers' keys and values (cross-layer KV sharing)",
    "kv_sharing": "layers share one KV cache (cross-layer KV sharing)",
    "attention_chunk_size": "chunked local attention on some layers (a window that restarts every chunk)",
    "layers_block_type": "a hybrid of attention and state-space (Mamba) layers",
    "attn_layer_indices": "attention on only some layers, the others state-space layers",
    "linear_attn_config": "linear-attention layers, which keep a fixed-size state instead of a cache",
    "cross_attention_layers": "cross-attention layers, which cache the image's keys and values",
}
KNOWN_LAYER_TYPES = {"full_attention": "G", "sliding_attention": "L"}


@dataclass(frozen=True)
class KVStructure:
    """The structure terms: ``n_kv_head`` (one count, or one per layer), ``window`` W (positions, None if
    no layer slides), ``rule`` (``core.cost.kv_layers.window_of_layers``), ``latent`` (MLA's
    (kv_lora_rank, qk_rope_head_dim)), ``unmodelled`` (sentences) and ``notes`` (how a field was read)."""

    n_kv_head: int | tuple[int, ...]
    window: int | None = None
    rule: str = ""
    latent: tuple[int, int] | None = None
    unmodelled: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


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
    for key in ("num_key_value_heads", "num_kv_heads", "n_head_kv"):
        value = cfg.get(key)
        if isinstance(value, list):  # one count per layer (OpenELM's num_kv_heads)
            if len(value) != n_layer or not all(isinstance(v, int) and 1 <= v <= limit for v in value):
                raise ValueError(f'"{key}" lists {len(value):,} KV-head counts for {n_layer:,} layers')
            return (tuple(value) if len(set(value)) > 1 else value[0]), [f"{key}: one count per layer"]
        if value is not None:
            return _count(cfg, key, limit), notes
    return n_head, notes


def _windows(cfg: dict, n_layer: int, limit: int) -> tuple[int | None, str, list[str]]:
    window = cfg.get("sliding_window")
    types = cfg.get("layer_types")
    if window is None or window is False:
        return None, "", []
    window = _count(cfg, "sliding_window", 10**12)
    if isinstance(types, list):
        kinds = "".join(KNOWN_LAYER_TYPES.get(t, "?") for t in types)
        if "L" not in kinds:
            return None, "", ["layer_types: every layer full attention"]
        if len(kinds) == n_layer and "?" not in kinds:
            return window, f"kinds:{kinds}", ["layer_types: each layer's kind as listed"]
        return window, "", []  # unknown kinds: said by _unmodelled
    if "use_sliding_window" in cfg:  # Qwen2: layers from max_window_layers on slide, when switched on
        if cfg["use_sliding_window"] is not True:
            return None, "", ["use_sliding_window false: every layer full attention"]
        first = cfg.get("max_window_layers", n_layer)
        first = first if isinstance(first, int) and not isinstance(first, bool) and first >= 0 else n_layer
        if first >= n_layer:
            return None, "", [f"max_window_layers {first:,} ≥ L: every layer full attention"]
        return window, f"from {first}", []
    pattern = cfg.get("sliding_window_pattern")
    if isinstance(pattern, int) and not isinstance(pattern, bool) and pattern >= 1:  # Gemma 3
        return window, ("all" if pattern == 1 else f"every {pattern}"), []
    if str(cfg.get("model_type", "")).startswith("gemma2"):  # Gemma 2: every other layer local
        return window, "every 2", []
    return window, "all", []  # Mistral: every layer


def _unmodelled(cfg: dict) -> list[str]:
    out = [f"{key}: {what}" for key, what in UNMODELLED.items() if cfg.get(key) not in (None, False, 0, [])]
    types = cfg.get("layer_types")
    if isinstance(types, list):
        other = sorted({str(t) for t in types} - set(KNOWN_LAYER_TYPES))
        if other:
            out.append(f"layer_types {', '.join(quoted(t, 30) for t in other[:4])}: layers of a kind not modelled")
    return out


def read_structure(cfg: dict, n_layer: int, n_head: int, limit: int) -> KVStructure:
    """The KV structure of one (language-model) config dict with ``n_layer`` layers and ``n_head``
    query heads; terms above ``limit`` are refused. Raises ``ValueError`` naming a bad field."""
    n_kv, notes = _kv_heads(cfg, n_layer, n_head, limit)
    latent = None
    if cfg.get("kv_lora_rank") is not None:  # DeepSeek-V2/V3 multi-head latent attention
        latent = (_count(cfg, "kv_lora_rank", limit), _count(cfg, "qk_rope_head_dim", limit))
        notes.append(f"MLA: kv_lora_rank {latent[0]:,} + qk_rope_head_dim {latent[1]:,} values per layer")
    window, rule, more = _windows(cfg, n_layer, limit)
    return KVStructure(n_kv, window, rule, latent, tuple(_unmodelled(cfg)), tuple(notes + more))
