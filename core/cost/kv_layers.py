"""KV-cache bytes layer by layer, for the attention kinds models use today (Ch. 30 §30.4 and after).

M = 2·B·L·T·H_kv·d·b holds when every layer caches every position with the same heads. Today's
models break one of its assumptions each, and this module counts what they really cache:

- **GQA / MQA / MHA**: 2·H_kv·d values per position and layer (keys and values).
- **Per-layer KV heads** (a config listing one count per layer): Σ over layers of 2·H_kv,ℓ·d.
- **Multi-head latent attention** (DeepSeek-V2/V3, arXiv 2405.04434 §2.1): one compressed latent of
  ``kv_lora_rank`` values plus one shared RoPE key of ``qk_rope_head_dim`` values per position and layer
  (no factor 2: the heads' keys and values are rebuilt from the latent). DeepSeek-V3: 61·(512 + 64)·2 B =
  70,272 B per token at 2 bytes.
- **Sliding windows**: a local layer keeps the last W positions, min(T, W) of a T-position request.
- **llama.cpp's cache types** (``--cache-type-k/v``: f16, q8_0, q4_0 …): each row is stored in blocks of
  ``core.gguf.layout.LAYOUTS`` (q8_0: 34 B per 32 values; q4_0: 18 B per 32).

Every count is an exact Python integer (sub-byte payloads rounded up once, for the whole cache).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

from core.cost.counts import KV_CACHE_TYPES
from core.gguf.layout import LAYOUTS
from core.text import ordinal


@dataclass(frozen=True)
class LayerCache:
    """What one layer caches per position: ``k_values`` and ``v_values`` (values; MLA: the latent and
    the shared RoPE key) and ``window`` (positions kept by a local layer; None = every position)."""

    k_values: int
    v_values: int
    window: int | None = None


def uniform_layers(n_layer: int, n_kv_head: int, head_dim: int) -> tuple[LayerCache, ...]:
    """L layers of H_kv heads of width d, every position cached (the chapter's model)."""
    return (LayerCache(n_kv_head * head_dim, n_kv_head * head_dim),) * n_layer


def window_of_layers(rule: str, n_layer: int, window: int | None) -> tuple[int | None, ...]:
    """Each layer's window from a sliding ``rule``: "" (none), "all" (Mistral), "every P" (every P-th layer
    global, the others local: Gemma 2 P = 2, Gemma 3 P = 6, as transformers' ``layer_types``), "from M"
    (layers M … L−1 local: Qwen2's ``max_window_layers``) or "kinds:" followed by one letter a layer,
    L local, G global (a config's ``layer_types``). Raises ``ValueError`` when "kinds:" names another
    number of layers than ``n_layer``, or a rule slides without a window."""
    if not rule or window is None:
        if rule and rule != "none":
            raise ValueError(f"the layers slide ({describe_rule(rule)}) but no window W is given")
        return (None,) * n_layer
    if rule == "all":
        return (window,) * n_layer
    if rule.startswith("every "):
        period = int(rule.split()[1])
        return tuple(None if (i + 1) % period == 0 else window for i in range(n_layer))
    if rule.startswith("from "):
        first = int(rule.split()[1])
        return tuple(window if i >= first else None for i in range(n_layer))
    if rule.startswith("kinds:"):
        kinds = rule[len("kinds:") :]
        if len(kinds) != n_layer:
            raise ValueError(
                f"the config names the kind of {len(kinds):,} layers (layer_types), not {n_layer:,}: "
                "give L as the config has it, or choose a window rule"
            )
        return tuple(window if k == "L" else None for k in kinds)
    raise ValueError(f"unknown sliding rule {rule[:30]!r}")


def describe_rule(rule: str) -> str:
    """A sliding rule in words ("every 2nd layer global, the others local")."""
    if rule == "all":
        return "every layer local"
    if rule.startswith("every "):
        return f"every {ordinal(int(rule.split()[1]))} layer global, the others local"
    if rule.startswith("from "):
        return f"layers {int(rule.split()[1]):,} and up local, those below global"
    if rule.startswith("kinds:"):
        kinds = rule[len("kinds:") :]
        return f"{kinds.count('L'):,} local and {kinds.count('G'):,} global layers, as the config lists them"
    return "no sliding window"


def build_layers(
    n_layer: int,
    n_kv_head: int | tuple[int, ...],
    head_dim: int | tuple[int, ...],
    window: int | None = None,
    rule: str = "",
    latent: tuple[int, int] | None = None,
) -> tuple[LayerCache, ...]:
    """Every layer's ``LayerCache``: H_kv heads of width d (either may be one per layer, a tuple of L: Gemma 4's
    full-attention layers have their own), or MLA's ``latent`` = (kv_lora_rank, qk_rope_head_dim); windows from
    ``window_of_layers``."""
    windows = window_of_layers(rule, n_layer, window)
    if latent is not None:
        return tuple(LayerCache(latent[0], latent[1], w) for w in windows)
    heads = n_kv_head if isinstance(n_kv_head, tuple) else (n_kv_head,) * n_layer
    if len(heads) != n_layer:
        raise ValueError(f"the config lists KV heads for {len(heads):,} layers, not {n_layer:,}")
    dims = head_dim if isinstance(head_dim, tuple) else (head_dim,) * n_layer
    if len(dims) != n_layer:
        raise ValueError(f"the config lists head widths for {len(dims):,} layers, not {n_layer:,}")
    # One object per kind of layer, repeated: L may be typed as 10⁶ on the memory page, and a Python loop
    # making 10⁶ objects took seconds a run (map and zip stay in C).
    keys = list(zip(heads, dims, windows, strict=True))
    kinds = {(h, d, w): LayerCache(h * d, h * d, w) for h, d, w in set(keys)}
    return tuple(map(kinds.__getitem__, keys))


def layer_counts(layers) -> Counter:
    """How many layers of each kind ``layers`` holds ({LayerCache: count}). Counted by identity first, in C:
    ``build_layers`` repeats one object per kind, and hashing 10⁶ dataclasses one by one took seconds."""
    layers = tuple(layers)
    by_id = Counter(map(id, layers))
    objects = dict(zip(map(id, layers), layers, strict=True))
    counts: Counter = Counter()
    for key, n in by_id.items():
        counts[objects[key]] += n
    return counts


def _row_bytes(values: int, cache_type: str) -> int:
    """Bytes of one row of ``values`` values in a llama.cpp cache type (whole blocks only)."""
    if cache_type not in KV_CACHE_TYPES:
        raise ValueError(f"unknown cache type {cache_type[:20]!r}; llama.cpp's: {', '.join(KV_CACHE_TYPES)}")
    lay = LAYOUTS[KV_CACHE_TYPES[cache_type]]
    if values % lay.block_size:
        raise ValueError(
            f"{cache_type} stores blocks of {lay.block_size} values; a layer's row of {values:,} values "
            "(n_kv_head · head_dim) is not a multiple of it"
        )
    return values // lay.block_size * lay.type_size


def layers_kv_bytes(layers, lengths, bytes_per_value=2, cache_type: str | None = None) -> dict:
    """KV bytes of requests of ``lengths`` positions over ``layers`` (``LayerCache``s).

    Each layer holds min(T, W) positions of a T-position request on a local layer, T on a global one;
    ``bytes_per_value`` b (exact ``Fraction`` arithmetic), or a llama.cpp ``cache_type`` whose rows are
    stored in blocks. Returns ``"kv_cache/positions"`` (Σ T), ``"kv_cache/cached_positions"`` (Σ over
    layers and requests of the positions held), ``"kv_cache/keys_bytes"``, ``"kv_cache/values_bytes"``,
    ``"kv_cache/bytes_per_position"`` (all layers, before any window fills) and ``"total"`` (bytes,
    whole). Raises ``ValueError`` on an empty batch, a bad length or a row not a whole number of blocks."""
    lengths = list(lengths)
    if not lengths:
        raise ValueError("the batch is empty: give at least one request length")
    if any(isinstance(t, bool) or not isinstance(t, int) or t < 0 for t in lengths):
        raise ValueError("each request length must be a whole number ≥ 0")
    keys = values = per_position = Fraction(0)
    held_total = 0
    for layer, count in layer_counts(layers).items():
        held = sum(t if layer.window is None else min(t, layer.window) for t in lengths) * count
        held_total += held
        if cache_type is None:
            b = Fraction(bytes_per_value)
            k, v = layer.k_values * b, layer.v_values * b
        else:
            k, v = _row_bytes(layer.k_values, cache_type), _row_bytes(layer.v_values, cache_type)
        keys, values, per_position = keys + held * k, values + held * v, per_position + count * (k + v)
    total = keys + values
    return {
        "kv_cache/positions": sum(lengths),
        "kv_cache/cached_positions": held_total,
        "kv_cache/keys_bytes": keys,
        "kv_cache/values_bytes": values,
        "kv_cache/bytes_per_position": per_position,
        "total": -(-total.numerator // total.denominator),
    }
