"""Config fields that say the same KV structure in another family's words, or change it on some layers only:

- **Global layers with their own heads** (Gemma 4, ``Gemma4TextConfig``): the full-attention layers use
  ``global_head_dim`` (default 512) and, when ``attention_k_eq_v`` is true, ``num_global_key_value_heads``; the
  sliding layers keep ``head_dim`` and ``num_key_value_heads``.
- **KV heads under another name** (ChatGLM / GLM-4 remote-code configs): ``multi_query_attention`` with
  ``multi_query_group_num`` KV heads, head width ``kv_channels``.
- **A per-layer attention list under another name** (MiniMax-Text-01's ``attn_type_list``: 1 softmax
  attention, 0 lightning (linear) attention), read as transformers' ``MiniMaxConfig.layer_types``.
- **Cross-layer attention** (Hunyuan-Large's ``use_cla`` with ``cla_share_factor`` f, arXiv 2411.02265 §2.2):
  layer i keeps keys and values when i mod f = 0; the f − 1 layers after it reuse them.

Each reader returns what it understood and a note saying how; ``ValueError`` names a bad field.
"""

from __future__ import annotations

from core.text import quoted

GEMMA4 = {"gemma4", "gemma4_text"}
GEMMA4_GLOBAL_HEAD_DIM = 512  # Gemma4TextConfig: global_head_dim when the config gives none


def _whole(cfg: dict, key: str, limit: int, least: int = 1) -> int:
    value = cfg[key]
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= limit:
        raise ValueError(f'"{key}" must be a whole number from {least} to {limit:,}, got {quoted(value)}')
    return value


def glm_kv_heads(cfg: dict, limit: int) -> tuple[int, str] | None:
    """ChatGLM / GLM-4's KV heads: ``multi_query_group_num`` when ``multi_query_attention`` is true (its
    remote code's ``SelfAttention``), else None (every head keeps its own keys and values)."""
    if cfg.get("multi_query_attention") is not True or "multi_query_group_num" not in cfg:
        return None
    n = _whole(cfg, "multi_query_group_num", limit)
    return n, f"multi_query_attention: multi_query_group_num {n:,} KV heads"


def global_layer_heads(cfg: dict, head_dim: int | None, limit: int) -> tuple[tuple[int | None, int], str] | None:
    """The full-attention layers' (KV heads, head width) where they differ from the sliding layers' (Gemma 4):
    KV heads None means the sliding layers' count. None when the config gives no such fields."""
    gemma4 = str(cfg.get("model_type") or "") in GEMMA4
    if not gemma4 and "global_head_dim" not in cfg and "num_global_key_value_heads" not in cfg:
        return None
    said = []
    if "global_head_dim" in cfg:
        d = _whole(cfg, "global_head_dim", limit)
        said.append(f"global_head_dim {d:,}")
    elif gemma4:
        d = GEMMA4_GLOBAL_HEAD_DIM
        said.append(f"global_head_dim not given: Gemma4TextConfig's default {d}")
    else:
        d = head_dim
    heads = None
    if cfg.get("num_global_key_value_heads") is not None and cfg.get("attention_k_eq_v", not gemma4) is True:
        heads = _whole(cfg, "num_global_key_value_heads", limit)
        said.append(f"num_global_key_value_heads {heads:,} (attention_k_eq_v)")
    elif cfg.get("num_global_key_value_heads") is not None:
        said.append("num_global_key_value_heads unused without attention_k_eq_v (as Gemma4TextConfig)")
    if d is None:
        return None
    return (heads, d), "full-attention layers: " + ", ".join(said)


PER_LAYER_TERMS = ("head_dim", "num_key_value_heads")  # what per_layer_config may set that the cache depends on


def per_layer_terms(cfg: dict, n_layer: int, limit: int) -> tuple[dict[int, dict[str, int]], list[str]]:
    """transformers' ``per_layer_config`` (``HeterogeneousConfigMixin``: {layer: {field: value}}) as
    {layer: {"head_dim" | "num_key_value_heads": value}}, and the other fields it sets that may change the cache,
    as "per_layer_config.<field>" (not counted). Raises ``ValueError`` for a layer or value out of range."""
    given = cfg.get("per_layer_config")
    if not isinstance(given, dict):
        return {}, []
    out: dict[int, dict[str, int]] = {}
    other: list[str] = []
    for key, fields in list(given.items())[: n_layer + 1]:
        layer = int(key) if str(key).isdigit() else -1
        if not 0 <= layer < n_layer or not isinstance(fields, dict):
            raise ValueError(f'"per_layer_config" names layer {quoted(key, 20)}; layers are 0 to {n_layer - 1:,}')
        for name, value in fields.items():
            if name in PER_LAYER_TERMS:
                out.setdefault(layer, {})[name] = _whole({name: value}, name, limit)
            elif f"per_layer_config.{name}" not in other:
                other.append(f"per_layer_config.{name}"[:60])
    return out, other


def attn_type_kinds(cfg: dict, n_layer: int) -> str | None:
    """MiniMax's ``attn_type_list`` as one letter a layer: G softmax attention (1), S lightning attention (0);
    None when the config has no such list. Raises ``ValueError`` for a list of another length or values."""
    types = cfg.get("attn_type_list")
    if types is None:
        return None
    if not isinstance(types, list) or len(types) != n_layer or any(t not in (0, 1) or t is True for t in types):
        raise ValueError(f'"attn_type_list" must list 0 (linear) or 1 (softmax) for each of the {n_layer:,} layers')
    return "".join("G" if t == 1 else "S" for t in types)


def cla_layer_heads(cfg: dict, n_layer: int, n_kv: int | tuple[int, ...]) -> tuple[tuple[int, ...], str] | None:
    """Cross-layer attention: KV heads per layer, 0 on the layers that reuse the layer before's cache (i mod f ≠ 0
    with f = ``cla_share_factor``, default 2 as Hunyuan-Large's config); None without ``use_cla``."""
    if cfg.get("use_cla") is not True:
        return None
    factor = _whole(cfg, "cla_share_factor", 10**6) if "cla_share_factor" in cfg else 2
    heads = n_kv if isinstance(n_kv, tuple) else (n_kv,) * n_layer
    kept = tuple(h if i % factor == 0 else 0 for i, h in enumerate(heads))
    n_kept = sum(1 for h in kept if h)
    return kept, (
        f"use_cla: cla_share_factor {factor}, so {n_kept:,} of {n_layer:,} layers keep keys and values and the "
        "others reuse the layer before's (cross-layer attention)"
    )
