"""Counting arithmetic: attention scores and KV-cache bytes, as exact Python integers.

Ch. 19 "The bill per token" and Ch. 30 §30.4.
"""

from __future__ import annotations

from fractions import Fraction

from core.config import GPTConfig


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
    for name, v in (("n_layer", n_layer), ("n_kv_head", n_kv_head), ("head_dim", head_dim),
                    ("positions", positions), ("batch_size", batch_size)):
        _check_count(name, v)
    if not bytes_per_value > 0:
        raise ValueError(f"bytes_per_value must be positive, got {bytes_per_value!r}")
    per_tensor = Fraction(batch_size * n_layer * positions * n_kv_head * head_dim) * Fraction(bytes_per_value)
    total = 2 * per_tensor
    whole = -(-total.numerator // total.denominator)  # packed sub-byte values round up to whole bytes
    return {"kv_cache/keys_bytes": per_tensor, "kv_cache/values_bytes": per_tensor, "total": whole}


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
