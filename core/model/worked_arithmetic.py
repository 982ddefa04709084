"""The worked example's arithmetic written out as Ch. 19 writes it, from ``core.model.worked``'s results: each
score as products term by term ("q_on · k_the = 2 × 1 + 1 × (−1) = 1"), each share as e^score over the sum, and
the value mix slot by slot ("Slot 1: 0.08 × 0 + 0.61 × 3 + 0.08 × 1 + 0.22 × 0 = 1.91"). Lines are Markdown:
results in bold, every number from the vectors as edited (no typed text reaches them but numbers)."""

from __future__ import annotations

import numpy as np

from core.model.worked import TOKENS, Denominator


def number(x: float) -> str:
    """A number as the chapter writes it: "2", "−1", "0.7071", with a true minus."""
    text = f"{float(x):.4g}"
    return "0" if text == "-0" else text.replace("-", "−")


def factor(x: float) -> str:
    """A factor in a product: a negative one in parentheses, "(−1)"."""
    return f"({number(x)})" if x < 0 else number(x)


def _products(a, b) -> str:
    return " + ".join(f"{factor(x)} × {factor(y)}" for x, y in zip(a, b, strict=True))


def score_lines(q_on: np.ndarray, k: np.ndarray, scores: np.ndarray, scale: float) -> list[str]:
    """One line per key: "q_on · k_cat = 2 × 1 + 1 × 1 = **3**"; with the 1/√d scaling (``scale`` below 1) the sum
    in parentheses times "1/√d". ``q_on`` ``(d,)``, ``k`` ``(4, d)``, ``scores`` on's row ``(4,)``."""
    d = len(q_on)
    lines = []
    for t, kk, s in zip(TOKENS, k, scores, strict=True):
        products = _products(q_on, kk)
        if scale != 1.0:
            products = f"({products}) × 1/√{d}"
        lines.append(f"q_on · k_{t} = {products} = **{number(s)}**")
    return lines


def share_lines(shares: np.ndarray, scores: np.ndarray, den: Denominator) -> list[str]:
    """One line per share: "a_cat = e^3 / Σ = 20.09 / 32.91 = **0.6103**" (the terms to two decimals, as Ch. 19
    writes them); without printable terms (``den.terms`` None) the share alone."""
    if den.terms is None:
        return [f"a_{t} = e^{number(s)} / Σ = **{a:.4f}**" for t, s, a in zip(TOKENS, scores, shares, strict=True)]
    return [
        f"a_{t} = e^{number(s)} / Σ = {e:.2f} / {den.total:.2f} = **{a:.4f}**"
        for t, s, e, a in zip(TOKENS, scores, den.terms, shares, strict=True)
    ]


def mix_lines(shares: np.ndarray, v: np.ndarray, out: np.ndarray, digits: int) -> list[str]:
    """The value mix of ``shares`` ``(4,)`` over ``v`` ``(4, d)``: the vector sum ("o_on = 0.08 [0, 2] + 0.61 [3, 1]
    + … = [1.91, 0.99]") then slot by slot ("Slot 1: 0.08 × 0 + 0.61 × 3 + 0.08 × 1 + 0.22 × 0 = **1.91**"),
    shares written with ``digits`` decimals; ``out`` ``(d,)`` the mix as computed."""
    a = [f"{x:.{digits}f}" for x in shares]
    vectors = " + ".join(f"{ai} [{', '.join(number(x) for x in row)}]" for ai, row in zip(a, v, strict=True))
    result = ", ".join(number(x) for x in out)
    lines = [f"o_on = {vectors} = [{result}]"]
    for j in range(v.shape[1]):
        terms = " + ".join(f"{ai} × {factor(row[j])}" for ai, row in zip(a, v, strict=True))
        lines.append(f"Slot {j + 1}: {terms} = **{number(out[j])}**")
    return lines


FRACTIONS = ((1 / 2, "a half"), (1 / 3, "a third"), (1 / 4, "a quarter"), (1 / 5, "a fifth"), (1 / 10, "a tenth"))


def _fraction_words(x: float) -> str:
    """A share as a reader says it: "a fifth" for 0.22, the nearest of a half … a tenth."""
    return min(FRACTIONS, key=lambda f: abs(f[0] - x))[1]


def shares_in_words(tokens, rounded) -> str:
    """The last token's shares (rounded to two decimals) read in words, as Ch. 19 reads them: "So “on” leans hard
    on “cat” (0.61), gives a fifth to itself (0.22), and spares a little for “the” and “sat” (0.08 each)."
    The largest share of another token first ("leans hard on" from 0.5 up, else "leans most on"), then its own,
    then the rest."""
    me = tokens[-1]
    others = sorted(range(len(tokens) - 1), key=lambda i: -rounded[i])
    top, rest = others[0], others[1:]
    lean = "leans hard on" if rounded[top] >= 0.5 else "leans most on"
    parts = [
        f"{lean} “{tokens[top]}” ({rounded[top]:.2f})",
        f"gives {_fraction_words(rounded[-1])} to itself ({rounded[-1]:.2f})",
    ]
    if rest:
        names = " and ".join(f"“{tokens[i]}”" for i in sorted(rest))
        values = sorted({f"{rounded[i]:.2f}" for i in rest})
        each = f"{values[0]} each" if len(values) == 1 else " and ".join(f"{rounded[i]:.2f}" for i in sorted(rest))
        parts.append(f"spares a little for {names} ({each})")
    return f"So “{me}” " + ", ".join(parts[:-1]) + f", and {parts[-1]}."
