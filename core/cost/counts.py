"""Counting arithmetic: attention scores and KV-cache bytes, as exact Python integers.

Ch. 19 "The bill per token" and Ch. 30 §30.4.
"""

from __future__ import annotations

from fractions import Fraction

from core.gguf.layout import LAYOUTS
from core.model.config import GPTConfig


def _check_count(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a whole number ≥ 0, got {value!r}")
    return value


def score_grid(n: int) -> int:
    """Query-key pairs of an n-position prompt before masking: n² (Ch. 19), per layer and head."""
    n = _check_count("n", n)
    return n * n


def causal_pairs(n: int) -> int:
    """Pairs the causal mask keeps for n positions: n(n+1)/2, per layer and head."""
    n = _check_count("n", n)
    return n * (n + 1) // 2


def kv_cache_bytes(
    n_layer: int, n_kv_head: int, head_dim: int, positions: int, bytes_per_value: float, batch_size: int = 1
) -> dict:
    """Ideal KV-cache payload M = 2·B·L·T·H_kv·d·b in bytes (Ch. 30 §30.4).

    Returns an itemized dict: ``"kv_cache/keys_bytes"``, ``"kv_cache/values_bytes"`` and
    ``"total"`` (bytes, exact ``Fraction`` halves, whole-byte total). ``bytes_per_value`` may
    be fractional (4-bit = 0.5); the total is then rounded up to whole bytes.
    Raises ``ValueError`` on negative or non-integer counts.
    """
    for name, v in (
        ("n_layer", n_layer),
        ("n_kv_head", n_kv_head),
        ("head_dim", head_dim),
        ("positions", positions),
        ("batch_size", batch_size),
    ):
        _check_count(name, v)
    if not bytes_per_value > 0:
        raise ValueError(f"bytes_per_value must be positive, got {bytes_per_value!r}")
    per_tensor = Fraction(batch_size * n_layer * positions * n_kv_head * head_dim) * Fraction(bytes_per_value)
    total = 2 * per_tensor
    whole = -(-total.numerator // total.denominator)  # packed sub-byte values round up to whole bytes
    return {"kv_cache/keys_bytes": per_tensor, "kv_cache/values_bytes": per_tensor, "total": whole}


# llama.cpp's --cache-type-k / --cache-type-v names → ggml types. A quantized cache stores each
# position's row of n_kv_head · head_dim values per layer in blocks: q8_0 = 34 bytes per 32 values.
KV_CACHE_TYPES = {"f32": "F32", "f16": "F16", "bf16": "BF16", "q8_0": "Q8_0", "q5_1": "Q5_1", "q5_0": "Q5_0",
                  "q4_1": "Q4_1", "q4_0": "Q4_0", "iq4_nl": "IQ4_NL"}  # fmt: skip


def kv_cache_bytes_typed(
    n_layer: int,
    n_kv_head: int,
    head_dim: int,
    positions: int,
    cache_type_k: str = "f16",
    cache_type_v: str | None = None,
    batch_size: int = 1,
) -> dict:
    """KV-cache bytes with llama.cpp's cache types (``f16``, ``q8_0``, ``q4_0`` … see
    ``KV_CACHE_TYPES``), block overhead included: each layer's K (and V) row of
    n_kv_head · head_dim values per position is stored in blocks (q8_0: 34 B per 32 values =
    1.0625 B per value). ``cache_type_v`` defaults to ``cache_type_k``.

    Returns ``"kv_cache/keys_bytes"``, ``"kv_cache/values_bytes"`` (whole bytes),
    ``"kv_cache/bytes_per_value_k"``/``_v`` (exact ``Fraction``) and ``"total"``. 64 layers × 8 KV
    heads × 128, 32,768 positions, q8_0: K = 2,176 MiB, K + V = 4,352 MiB (what llama.cpp logs).
    Raises ``ValueError`` for an unknown type, a bad count, or a row that is not a whole number of
    blocks (llama.cpp refuses those too)."""
    counts = {"n_layer": n_layer, "n_kv_head": n_kv_head, "head_dim": head_dim, "positions": positions}
    for name, v in (counts | {"batch_size": batch_size}).items():
        _check_count(name, v)
    out = {}
    for side, ctype in (("k", cache_type_k), ("v", cache_type_v or cache_type_k)):
        if ctype not in KV_CACHE_TYPES:
            raise ValueError(f"unknown cache type {str(ctype)[:20]!r}; llama.cpp's: {', '.join(KV_CACHE_TYPES)}")
        lay = LAYOUTS[KV_CACHE_TYPES[ctype]]
        row = n_kv_head * head_dim
        if row % lay.block_size:
            raise ValueError(
                f"{ctype} stores blocks of {lay.block_size} values; a row of n_kv_head · head_dim = {row} "
                "is not a multiple of it"
            )
        out[f"kv_cache/bytes_per_value_{side}"] = Fraction(lay.type_size, lay.block_size)
        out["kv_cache/keys_bytes" if side == "k" else "kv_cache/values_bytes"] = (
            batch_size * n_layer * positions * (row // lay.block_size) * lay.type_size
        )
    out["total"] = out["kv_cache/keys_bytes"] + out["kv_cache/values_bytes"]
    return out


def kv_cache_bytes_for(cfg: GPTConfig, positions: int, bytes_per_value: float = 4, batch_size: int = 1) -> int:
    """KV payload in bytes for a model config at ``positions`` cached positions."""
    return kv_cache_bytes(cfg.n_layer, cfg.n_kv_head, cfg.head_dim, positions, bytes_per_value, batch_size)["total"]


def decode_step_scores(context: int, cached: bool) -> int:
    """Scores for one decode step whose new position makes ``context`` positions in all.

    Cached: the new query against ``context`` keys → ``context``. Full-prefix recompute:
    every position again → context(context+1)/2. Per layer and head (Ch. 19, Ch. 30 §30.2).
    """
    return _check_count("context", context) if cached else causal_pairs(context)


def generation_scores(n_prompt: int, m_new: int, cached: bool) -> int:
    """Cumulative scores to produce ``m_new`` tokens after an ``n_prompt``-token prompt.

    Prefill yields token 1; tokens 2..m need m−1 decode passes at contexts n+1 .. n+m−1.
    Cached: n(n+1)/2 + Σ (n+i); recompute: Σ_{T=n}^{n+m−1} T(T+1)/2. Per layer and head.
    Raises ``ValueError`` if ``n_prompt`` < 1 or ``m_new`` < 0.
    """
    n, m = _check_count("n_prompt", n_prompt), _check_count("m_new", m_new)
    if n < 1:
        raise ValueError("n_prompt must be at least 1")
    if m == 0:
        return 0
    if cached:
        # n(n+1)/2 + Σ_{T=n+1}^{n+m-1} T: every position's query is scored exactly once.
        return causal_pairs(n + m - 1)
    # Σ_{T=1}^{N} T(T+1)/2 = N(N+1)(N+2)/6 (tetrahedral numbers).
    tetra = lambda N: N * (N + 1) * (N + 2) // 6  # noqa: E731
    return tetra(n + m - 1) - tetra(n - 1)


# ---- KV cache with every term named ---------------------------------------------------------

KV_TERMS = {
    "B": "requests in the batch",
    "L": "layers (n_layer)",
    "T": "positions per request",
    "H_kv": "KV heads per layer (n_kv_head)",
    "d": "head width (head_dim)",
    "b": "bytes per stored value",
}


def kv_cache_itemized(n_layer: int, n_kv_head: int, head_dim: int, lengths, bytes_per_value: float) -> dict:
    """KV payload for requests of possibly unequal ``lengths`` (Ch. 30 §30.4).

    The sum of processed lengths replaces B·T. Returns ``"kv_cache/positions"`` (Σ lengths),
    ``"kv_cache/bytes_per_position"`` (2·L·H_kv·d·b, may be fractional for 4-bit),
    ``"kv_cache/keys_bytes"``, ``"kv_cache/values_bytes"`` and ``"total"`` bytes (whole bytes,
    rounded up for packed sub-byte values). Raises ``ValueError`` on an empty batch or a bad term.
    """
    lengths = list(lengths)
    if not lengths:
        raise ValueError("the batch is empty: give at least one request length")
    for i, t in enumerate(lengths):
        _check_count(f"length of request {i + 1}", t)
    out = kv_cache_bytes(n_layer, n_kv_head, head_dim, sum(lengths), bytes_per_value)
    per_position = 2 * n_layer * n_kv_head * head_dim * Fraction(bytes_per_value)
    return {"kv_cache/positions": sum(lengths), "kv_cache/bytes_per_position": per_position, **out}


def kv_value_choices() -> dict[str, tuple[Fraction, str | None]]:
    """Choices of b, bytes per stored value: the chapters' widths (16, 8, 4 bits: the ideal
    payload) and llama.cpp's cache types with their block overhead (``--cache-type-k/v``: f16 is
    the same 2 B; q8_0 = 34 B per 32 values = 1.0625 B; q4_0 = 18 B per 32 = 0.5625 B). Label →
    (b as an exact ``Fraction``, the llama.cpp cache type or None)."""
    out: dict[str, tuple[Fraction, str | None]] = {
        "16-bit (2 B) = llama.cpp f16": (Fraction(2), "f16"),
        "8-bit (1 B)": (Fraction(1), None),
        "4-bit (0.5 B)": (Fraction(1, 2), None),
    }
    for ctype in ("q8_0", "q4_0"):
        lay = LAYOUTS[KV_CACHE_TYPES[ctype]]
        b = Fraction(lay.type_size, lay.block_size)
        out[f"llama.cpp {ctype} ({lay.type_size} B per {lay.block_size} values = {float(b):g} B)"] = (b, ctype)
    return out


def kv_cache_itemized_typed(n_layer: int, n_kv_head: int, head_dim: int, lengths, cache_type: str) -> dict:
    """``kv_cache_itemized`` for one of llama.cpp's cache types (``KV_CACHE_TYPES``): b = a block's
    bytes / its values (q8_0: 34/32), keys and values as whole bytes (``kv_cache_bytes_typed``).
    64 layers × 8 KV heads × 128 at 32,768 positions in q8_0: K = 2,176 MiB, K + V = 4,352 MiB.
    Raises ``ValueError`` like both, e.g. for a row of n_kv_head · head_dim values that is not a
    whole number of blocks."""
    out = kv_cache_itemized(n_layer, n_kv_head, head_dim, lengths, 1)  # checks the lengths first
    typed = kv_cache_bytes_typed(n_layer, n_kv_head, head_dim, out["kv_cache/positions"], cache_type)
    b = typed["kv_cache/bytes_per_value_k"]
    return {
        "kv_cache/positions": out["kv_cache/positions"],
        "kv_cache/bytes_per_position": 2 * n_layer * n_kv_head * head_dim * b,
        "kv_cache/keys_bytes": typed["kv_cache/keys_bytes"],
        "kv_cache/values_bytes": typed["kv_cache/values_bytes"],
        "total": typed["total"],
    }


def batch_kv_bytes(lengths: list[int], reserved_slots: int, bytes_per_position: int, layout: str) -> dict:
    """KV bytes of a batch of requests with cached ``lengths`` (Ch. 30 §30.4), itemized.

    ``"kv_cache/payload"``: bytes holding positions, Σ lengths · bytes per position. Padded
    layout (one row of ``reserved_slots`` per request): ``"kv_cache/padding"`` pads every row to
    the longest row *now* (wasted); ``"kv_cache/reserved"`` holds the slots past it, kept for
    tokens not generated yet (not waste until the batch ends). Ragged: payload only.
    ``"total"``: what the layout holds."""
    payload = sum(lengths) * bytes_per_position
    if layout == "ragged":
        return {"kv_cache/payload": payload, "kv_cache/padding": 0, "kv_cache/reserved": 0, "total": payload}
    longest, rows = max(lengths), len(lengths)
    padding = (rows * longest - sum(lengths)) * bytes_per_position
    reserved = rows * (reserved_slots - longest) * bytes_per_position
    return {
        "kv_cache/payload": payload,
        "kv_cache/padding": padding,
        "kv_cache/reserved": reserved,
        "total": payload + padding + reserved,
    }


# ---- weights ---------------------------------------------------------------------------------


def weight_bytes(n_params: int, bits_per_weight: float) -> Fraction:
    """Nominal weight payload in bytes: n_params · bits / 8 (Ch. 19: 7B at 4 bits = 3.5 GB)."""
    _check_count("n_params", n_params)
    if not bits_per_weight > 0:
        raise ValueError(f"bits per weight must be positive, got {bits_per_weight!r}")
    return n_params * Fraction(bits_per_weight) / 8


def params(cfg: GPTConfig) -> dict:
    """Parameter count of the project's transformer for any ``GPTConfig`` (the shipped model or
    a loaded Llama / Mistral / Qwen2 / Qwen3 / GPT-2), itemized; ``"total"`` equals the model's
    ``sum(p.numel())``. Biases are inside their attention/MLP/norm items, Qwen3's per-head q/k norm
    weights inside attention; a tied output head adds 0 (it is the embedding); ``"params/positions"``
    is GPT-2's learned table (0 under RoPE)."""
    c, hd, f = cfg.n_embd, cfg.head_dim, cfg.ffn_hidden
    q_width, kv_width = cfg.n_head * hd, cfg.n_kv_head * hd
    attn = c * q_width * 2 + c * kv_width * 2  # q, o; k, v
    attn += (q_width + 2 * kv_width) * cfg.qkv_bias + c * cfg.o_bias
    attn += 2 * hd * cfg.qk_norm  # Qwen3's q_norm and k_norm: one weight of head_dim each
    n_mlp = 3 if cfg.mlp == "swiglu" else 2  # gate, up, down / up, down
    mlp = n_mlp * c * f + ((n_mlp - 1) * f + c) * cfg.mlp_bias
    norm = c * (2 if cfg.norm == "layernorm" else 1)  # weight (+ bias)
    out = {
        "params/embed_tokens": cfg.vocab_size * c,
        "params/positions": cfg.block_size * c if cfg.positions == "learned" else 0,
        "params/attention": cfg.n_layer * attn,
        "params/mlp": cfg.n_layer * mlp,
        "params/norms": (cfg.n_layer * 2 + 1) * norm,
        "params/lm_head": 0 if cfg.tie_embeddings else c * cfg.vocab_size,
    }
    out["total"] = sum(out.values())
    return out


def memory_plan(
    n_params: int,
    bits_per_weight: float,
    n_layer: int,
    n_kv_head: int,
    head_dim: int,
    context_tokens: int,
    kv_bytes_per_value: float,
    batch_size: int,
    overhead_bytes: int,
) -> dict:
    """Memory to serve a model card at its full context (Ch. 19 "Why the LLM cares").

    Weights n_params · bits / 8, plus the KV cache of ``batch_size`` requests at
    ``context_tokens`` positions, plus a stated overhead; all in bytes (whole, rounded up).
    Returns ``"memory/weights"``, ``"memory/kv_cache"``, ``"memory/overhead"``, ``"total"``.
    """
    w = weight_bytes(n_params, bits_per_weight)
    out = {
        "memory/weights": -(-w.numerator // w.denominator),
        "memory/kv_cache": kv_cache_bytes(n_layer, n_kv_head, head_dim, context_tokens, kv_bytes_per_value, batch_size)[
            "total"
        ],
        "memory/overhead": _check_count("overhead_bytes", overhead_bytes),
    }
    out["total"] = sum(out.values())
    return out
