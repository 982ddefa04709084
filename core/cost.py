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
