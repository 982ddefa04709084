"""The flip finder (Ch. 30 §30.6): how coarse may a ruler for the logits be before the greedy
token changes?

Rounding every logit to a multiple of a scale s keeps their order up to ties: round() never
swaps two values, it can only make them equal. Greedy then takes the first maximum, the lowest
token id. So the greedy token changes exactly when some token with a *lower id* than the top one
lands on the top one's shelf, and the change is always a tie broken by token id. Two logits
a ≤ b of the same sign share shelf m (|x|/s within m ± ½) for scales in
[max|·|/(m + ½), min|·|/(m − ½)], which is not empty while m < (|a| + |b|) / (2(b − a)); the
largest such m gives the smallest scale. Logits of opposite sign share only shelf 0, from
s = 2·max(|a|, |b|). Between those thresholds nothing changes, so the answer is exact, not a
grid search; and it is not monotone: a coarser ruler can separate the top token again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.quant.quantize import _check_values, auto_scale, greedy_after_quantizing, round_half


@dataclass(frozen=True)
class TopTwo:
    """The greedy token, the runner-up and the margin between their logits (logit units)."""

    greedy: int
    runner_up: int
    margin: float


def top_two(logits) -> TopTwo:
    """The two highest logits (ties: lower token id first, as greedy picks) and their gap."""
    x = _check_values(logits)
    order = np.argsort(-x, kind="stable")
    return TopTwo(int(order[0]), int(order[1]), float(x[order[0]] - x[order[1]]))


def flip_threshold(logits) -> float | None:
    """The infimum of the scales at which rounding ``logits`` changes the greedy token (for every
    scale just above it the token differs), or None if no scale does (the top token has id 0).
    Exact, from the closed form in the module docstring; the same for every tie rule, which only
    decides what happens exactly on a threshold."""
    x = _check_values(logits)
    top = int(np.argmax(x))
    if top == 0:
        return None
    lower, xt = x[:top], x[top]  # only lower ids can take the top's place (by a tie)
    a, b = np.abs(lower), abs(xt)
    widest, narrow = np.maximum(a, b), np.minimum(a, b)
    shared = lambda m: widest / (m + 0.5) < narrow / (m - 0.5)  # noqa: E731 — shelf m holds both for some s
    m = np.ceil((a + b) / (2 * (xt - lower))) - 1  # the finest shared shelf (xt > every lower logit)
    # Rounding in the line above can be one off where (|a| + |b|) / (2(b − a)) is a whole number.
    m = np.where(shared(m + 1), m + 1, np.where(shared(m) | (m <= 1), m, m - 1))
    same_sign = lower * xt > 0
    scales = np.where(same_sign & (m >= 1), widest / (m + 0.5), 2 * widest)
    return float(scales.min())


def flip_scale(logits, rounding: str = "half_even") -> float | None:
    """The smallest floating-point scale at which greedy after rounding (``rounding``) differs
    from greedy on ``logits``: ``flip_threshold`` moved by a few units in the last place if the
    tie rule keeps the top token on the threshold itself. None if no scale changes it."""
    x = _check_values(logits)
    s = flip_threshold(x)
    if s is None:
        return None
    top = int(np.argmax(x))
    for _ in range(64):
        if greedy_after_quantizing(x, s, rounding)[0] != top:
            break
        s = float(np.nextafter(s, math.inf))
    while greedy_after_quantizing(x, float(np.nextafter(s, 0)), rounding)[0] != top:
        s = float(np.nextafter(s, 0))
    return s


@dataclass(frozen=True)
class BitsRow:
    """One bit width: its automatic symmetric scale, the greedy token after rounding, whether it
    changed, and how many tokens share the top shelf."""

    bits: int
    scale: float
    greedy: int
    changed: bool
    tied: int


def greedy_by_bits(logits, bits=(8, 7, 6, 5, 4, 3, 2), rounding: str = "half_even") -> list[BitsRow]:
    """For each bit width: round the whole logit vector with its automatic symmetric scale
    (max|logit| / (2^(b−1)−1)) and report the scale, the new greedy token and whether it changed."""
    x = _check_values(logits)
    top = int(np.argmax(x))
    rows = []
    for b in bits:
        s, _ = auto_scale(x, b)
        choice, xq = greedy_after_quantizing(x, s, rounding)
        rows.append(BitsRow(b, s, choice, choice != top, int((xq == xq.max()).sum())))
    return rows


@dataclass(frozen=True)
class Flip:
    """Where the greedy token first changes: the exact ``threshold`` scale, the ``tied`` token ids
    sharing the top shelf just above it (ascending), the ``chosen`` one (the lowest id) and its
    ``rank`` among the unrounded logits (1 = the top token); ``not_monotone``: bit widths whose
    automatic scale is above the threshold yet keep the top token."""

    threshold: float
    tied: tuple[int, ...]
    chosen: int
    rank: int
    not_monotone: tuple[int, ...]


def find_flip(logits, rows: list[BitsRow], rounding: str = "half_even") -> Flip | None:
    """The flip finder's report for ``logits`` and the ``greedy_by_bits`` rows; None if no scale
    changes the greedy token."""
    x = _check_values(logits)
    s = flip_scale(x, rounding)
    if s is None:
        return None
    k = round_half(x / s, rounding)
    tied = tuple(int(i) for i in np.flatnonzero(k == k.max()))
    chosen = tied[0]
    rank = int((x > x[chosen]).sum()) + 1
    above = tuple(r.bits for r in rows if r.scale > s and not r.changed)
    return Flip(flip_threshold(x), tied, chosen, rank, above)
