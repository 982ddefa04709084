"""Generators for the Practice page's exercises, one module per topic, and what they share.

Every generator takes an integer seed and returns a ``core.practice.exercise_types.Exercise``: seed 0 gives the
chapter's own numbers, any other seed fresh numbers with the same structure. Answers and the
values known mistakes produce come from ``core`` (cost, latency, quant, worked, shapes); the
text only formats them.
"""

from __future__ import annotations

import random

from core.practice.exercise_types import Mistake, Tolerance
from core.text import BINARY, DECIMAL

BYTES_TOL = Tolerance(rel=0.001)  # 805.3 MB is right for 805,306,368 B; 768 MB (MiB read as MB) is 4.6% off
ABOUT_TOL = Tolerance(rel=0.005)  # "about 9.66 GB": 9.7 GB is fine, 9 GB (GiB read as GB) is not
MS_TOL = Tolerance(abs=0.5)
WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


def unit_mixups(n_bytes: float) -> list[Mistake]:
    """The figure in binary units read as decimal (768 MiB typed as 768 MB) and the other way, at every
    scale where the amount is at least a thousandth of the unit: 768 MiB also as 0.75 GB (0.75 GiB read as GB)
    and 786,432 kB (KiB read as kB)."""
    out = []
    for (b_unit, b_size), (d_unit, d_size) in zip(BINARY, DECIMAL, strict=True):
        if n_bytes >= b_size / 1024:
            x, y = n_bytes / b_size, n_bytes / d_size
            out.append(
                Mistake(
                    x * d_size,
                    f"{b_unit} read as {d_unit}",
                    (
                        f"{b_unit} read as {d_unit}: the amount is {_n(x)} {b_unit} = {_n(y)} {d_unit} "
                        f"(1 {b_unit} = {b_size:,} bytes, 1 {d_unit} = {d_size:,} bytes)."
                    ),
                )
            )
            out.append(
                Mistake(
                    y * b_size,
                    f"{d_unit} read as {b_unit}",
                    (f"{d_unit} read as {b_unit}: {_n(y)} {d_unit} is {_n(x)} {b_unit}."),
                )
            )
    return out


def _n(x: float) -> str:
    """An amount to four significant digits, never in exponent form: 786,432 KiB, not 7.864e+05 KiB."""
    return f"{x:,.0f}" if abs(x) >= 1e4 else f"{x:,.4g}"


def random_trace(rng: random.Random, n: int, queue: bool) -> tuple[float, float, tuple[float, ...]]:
    """Arrival, start of prefill and ``n`` emission times (ms) on round numbers."""
    a = float(rng.randrange(0, 55, 5)) if queue else float(rng.randrange(5, 55, 5))
    p = a + (rng.randrange(10, 70, 5) if queue else 0)
    t = [p + rng.randrange(60, 260, 10)]
    gaps = rng.sample(range(20, 100, 5), n - 1)
    for g in gaps:
        t.append(t[-1] + g)
    return a, p, tuple(float(x) for x in t)
