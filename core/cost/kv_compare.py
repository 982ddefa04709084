"""The KV-cache memory page's comparisons (Ch. 30 §30.4): the right bytes beside three common
wrong ones, and the same model with other KV-head counts (MHA, a GQA group, MQA).
"""

from __future__ import annotations

from fractions import Fraction

from core.cost.counts import kv_cache_bytes
from core.text import exact_decimal, format_bytes


def kv_mistakes(
    n_layer: int,
    n_kv_head: int,
    head_dim: int,
    hidden_size: int,
    positions: int,
    bytes_per_value: float,
    right: int | None = None,
) -> dict:
    """The right KV bytes and three common wrong ones, as ``{"right", "hidden_size_not_kv",
    "no_factor_2", "mib_as_mb"}`` (bytes; the last is the MiB figure mislabelled as MB, an exact
    ``Fraction``). ``right`` overrides the uniform formula's bytes (a model with sliding windows or MLA,
    counted by ``core.cost.kv_layers``); the hidden-size mistake stays 2·L·ΣT·hidden·b."""
    if right is None:
        right = kv_cache_bytes(n_layer, n_kv_head, head_dim, positions, bytes_per_value)["total"]
    # Using hidden_size = n_head·head_dim instead of n_kv_head·head_dim ignores GQA/MQA.
    hidden = kv_cache_bytes(n_layer, 1, hidden_size, positions, bytes_per_value)["total"]
    return {
        "right": right,
        "hidden_size_not_kv": hidden,
        "no_factor_2": right // 2,
        "mib_as_mb": Fraction(right, 2**20),
    }


def kv_mistake_notes(m: dict) -> dict[str, str]:
    """What each mistake of ``kv_mistakes`` would print beside the right value, exactly."""
    right = format_bytes(m["right"])
    mb = Fraction(m["right"], 10**6)
    hidden = (
        f"{right} either way: with as many KV heads as query heads (MHA) the hidden size is H_kv · d, so "
        "this mistake only shows on a GQA or MQA model."
        if m["hidden_size_not_kv"] == m["right"]
        else f"{format_bytes(m['hidden_size_not_kv'])} instead of {right} "
        f"({exact_decimal(Fraction(m['hidden_size_not_kv'], m['right']))}×): it counts every query head, "
        "ignoring GQA/MQA."
    )
    return {
        "hidden_size_not_kv": hidden,
        "no_factor_2": f"{format_bytes(m['no_factor_2'])} instead of {right} (half)",
        "mib_as_mb": f"{exact_decimal(m['mib_as_mb'])} “MB” is really MiB; in MB it is {exact_decimal(mb)} MB "
        f"({exact_decimal(100 * (mb / m['mib_as_mb'] - 1), 1)}% apart)",
    }


def kv_sharing_variants(n_head: int, current_kv_heads: int) -> dict[str, int]:
    """KV-head counts to compare for one model: MHA (= n_head), GQA and MQA (1). The GQA bar is the
    model's own count when it shares (strictly between 1 and n_head; Llama-3-70B: 64 heads, 8 KV heads),
    else the divisor of ``n_head`` nearest n_head/4, if one lies strictly between; any other current count
    is added as "yours". Returns {label: n_kv_head}."""
    out = {f"MHA ({n_head} KV heads)": n_head}
    divisors = [g for g in range(2, n_head) if n_head % g == 0]
    if current_kv_heads in divisors:
        # The model's own grouping, not a made-up one beside it: a bar "GQA (16 KV heads)" next to
        # "yours (8 KV heads)" read as if the preset were not GQA.
        out[f"GQA ({current_kv_heads} KV heads)"] = current_kv_heads
    elif divisors:
        g = min(divisors, key=lambda x: (abs(x - n_head / 4), x))
        out[f"GQA ({g} KV heads)"] = g
    out["MQA (1 KV head)"] = 1
    if current_kv_heads not in out.values():
        out[f"yours ({current_kv_heads} KV heads)"] = current_kv_heads
    return out
