"""The weights page's bills (Ch. 19 "Shrinking the numbers", "Why the LLM cares"): weight bytes by
precision, and a model card's memory at its full context against a budget. Exact arithmetic
(``Fraction``), printed in GB = 10⁹ bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from core.cost import memory_plan, weight_bytes
from core.quant import effective_bits_per_weight
from core.text import exact_decimal


def gb(n_bytes) -> str:
    """Bytes in GB (10⁹ bytes), two decimals, computed exactly: "3.94 GB"."""
    return f"{exact_decimal(Fraction(n_bytes) / 10**9)} GB"


@dataclass(frozen=True)
class WeightRow:
    """One precision in the weights table: nominal bits and bytes, and with per-group scales."""

    bits: int
    nominal_bytes: Fraction
    effective_bits: Fraction
    bytes_with_scales: Fraction


def weight_rows(n_params: int, group_size: int | None, scale_bits: int, bits=(32, 16, 8, 4)) -> list[WeightRow]:
    """Weight bytes of ``n_params`` parameters at each precision (Ch. 19: 7B at 4 bits = 3.5 GB);
    integer formats (< 16 bits) add one ``scale_bits`` scale per ``group_size`` weights, floats none."""
    rows = []
    for b in bits:
        eff = effective_bits_per_weight(b, group_size if b < 16 else None, scale_bits)
        rows.append(WeightRow(b, weight_bytes(n_params, b), eff, weight_bytes(n_params, eff)))
    return rows


@dataclass(frozen=True)
class Budget:
    """A model card's memory bill (``memory_plan``) against a budget, all in bytes."""

    bits_per_weight: Fraction
    plan: dict
    budget_bytes: int

    @property
    def fits(self) -> bool:
        return self.plan["total"] <= self.budget_bytes

    @property
    def parts_gb(self) -> dict[str, float]:
        """Weights, KV cache and overhead in GB, for the bar (drawing needs floats)."""
        names = {"memory/weights": "weights", "memory/kv_cache": "KV cache", "memory/overhead": "overhead"}
        return {label: self.plan[key] / 1e9 for key, label in names.items()}


def card_budget(
    card, shape, grouped: bool, kv_bytes_per_value: float, batch_size: int, overhead_gb, budget_gb
) -> Budget:
    """The memory to serve ``card`` ("7B, Q4, 8K", ``core.shapes.ModelCard``) at its full context
    with ``shape``'s KV terms (``core.shapes.KVShape``; a card does not give them). ``grouped``:
    weights in groups of 32 with one fp16 scale each (integer formats only; floats carry none).
    ``overhead_gb`` and ``budget_gb`` in GB (10⁹ bytes)."""
    bits = effective_bits_per_weight(card.bits_per_weight, 32 if grouped and card.bits_per_weight < 16 else None)
    plan = memory_plan(
        card.n_params,
        bits,
        shape.n_layer,
        shape.n_kv_head,
        shape.head_dim,
        card.context_tokens,
        kv_bytes_per_value,
        batch_size,
        round(overhead_gb * 10**9),
    )
    return Budget(bits, plan, round(budget_gb * 10**9))
