"""Ch. 19's worked example: Chapter 10's cast extended with "on", through the model's own
``attend`` (the same code every layer of the transformer runs)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from core.model.model import attend, causal_mask
from core.text import quoted
from core.typed_numbers import read_number

TOKENS = ("the", "cat", "sat", "on")
# Ch. 19's supplied vectors. Only q_on is given for the queries; the earlier rows' queries are
# placeholders (Ch. 19 does not state them) so the whole 4×4 grid can be drawn, and editable.
DEFAULTS = {
    "q": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 1.0]],
    "k": [[1.0, -1.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]],
    "v": [[0.0, 2.0], [3.0, 1.0], [1.0, 0.0], [0.0, 1.0]],
}


@dataclass(frozen=True)
class Worked:
    """Scores and shares ``(4, 4)`` (NaN where masked), exact outputs ``(4, d)``, and for the
    last row ("on"): shares rounded to two decimals and the value mix from those rounded shares."""

    scores: np.ndarray
    shares: np.ndarray
    outputs: np.ndarray
    last_rounded_shares: np.ndarray
    last_mix_from_rounded: np.ndarray
    scale: float


def worked_example(q, k, v, scaled: bool = False) -> Worked:
    """Run the cast through ``attend`` in float64. ``scaled`` applies the usual 1/√d (Ch. 19
    omits it). Raises ``ValueError`` for non-finite entries, mismatched shapes, or scores or
    outputs past float64's range."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    if not (q.shape == k.shape and k.shape[0] == v.shape[0] and q.ndim == 2 and v.ndim == 2):
        raise ValueError("q and k need the same shape (positions × d); v one row per position")
    if not all(np.all(np.isfinite(a)) for a in (q, k, v)):
        raise ValueError("every vector entry must be a finite number")
    scale = 1 / math.sqrt(q.shape[1]) if scaled else 1.0
    t = lambda a: torch.from_numpy(a)[None, None]  # noqa: E731 — (1, 1, T, d)
    y, att, scores = attend(t(q), t(k), t(v), causal_mask(len(q), len(q)).unsqueeze(1), scale)
    att, scores = att[0, 0].numpy(), scores[0, 0].numpy()
    mask = np.triu(np.ones_like(att, dtype=bool), 1)
    if not (np.all(np.isfinite(scores[~mask])) and np.all(np.isfinite(y.numpy()))):
        # 1e308 · 2 is inf: the softmax of inf is nan, which the page would print as shares
        raise ValueError("a score or output is past float64's range (±1.8 × 10³⁰⁸): use smaller numbers")
    rounded = np.round(att[-1], 2)
    return Worked(
        np.where(mask, np.nan, scores), np.where(mask, np.nan, att), y[0, 0].numpy(), rounded, rounded @ v, scale
    )


def table_rows(vectors: dict = DEFAULTS) -> list[dict]:
    """The editable table: one row per token, columns q₁ q₂ k₁ k₂ v₁ v₂, each cell text ("2", "-1").
    Text, not numbers: streamlit's number cells read a typed 1e308 as 1308, 1.5e3 as 1.53, and
    dropped 12345678901234567890 without a word; text reaches ``vectors_from_rows`` as typed."""
    return [
        {"token": t} | {f"{x}{sub}": f"{vectors[x][i][j]:g}" for x in "qkv" for j, sub in enumerate("₁₂")}
        for i, t in enumerate(TOKENS)
    ]


def cell_number(cell) -> float:
    """One cell as a number: "2", "-1.5", "−1.5", "1,000" (a thousands separator), "1,5" (a decimal
    comma), "1e3", other scripts' digits ("٢"), or a number; read by ``core.typed_numbers.read_number``,
    as every number box is. Raises ``ValueError`` for a blank cell ("empty") or other text."""
    text = str("" if cell is None else cell).strip()
    if not text:
        raise ValueError("is empty")
    try:
        return float(read_number(text)[0])  # the one reader of typed numbers (core.typed_numbers)
    except ValueError:
        raise ValueError(f"{quoted(text, 20)} is not a number") from None


def vectors_from_rows(rows: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q, k, v ``(4, 2)`` from edited table rows (``table_rows``' columns). Raises ``ValueError``
    naming up to four cells that are empty or not numbers ("on: q₁ 'abc' is not a number")."""
    bad, values = [], {}
    for r in rows:
        for c in r:
            if c != "token":
                try:
                    values[r["token"], c] = cell_number(r[c])
                except ValueError as err:
                    bad.append(f"{r['token']}: {c} {err}")
    if bad:
        raise ValueError("; ".join(bad[:4]) + (f"; {len(bad) - 4} more" if len(bad) > 4 else ""))
    q, k, v = (np.array([[values[r["token"], f"{x}₁"], values[r["token"], f"{x}₂"]] for r in rows]) for x in "qkv")
    return q, k, v


@dataclass(frozen=True)
class Denominator:
    """The softmax denominator of the last row, Σ e^score: the terms (None when e^score is too
    large to print usefully), their sum, the sum of the terms rounded to two decimals each, and
    whether the scores are the chapter's own (1, 3, 1, 2, unscaled), whose text adds rounded terms."""

    terms: np.ndarray | None
    total: float | None
    rounded_total: float | None
    chapters_scores: bool


def denominator(w: Worked) -> Denominator:
    s = w.scores[-1]
    with np.errstate(over="ignore"):
        e = np.exp(s)
    chapters = bool(w.scale == 1.0 and np.allclose(s, [1, 3, 1, 2]))
    if not (np.all(np.isfinite(e)) and e.sum() < 1e9):  # e^s is only worth printing while small
        return Denominator(None, None, None, chapters)
    return Denominator(e, float(e.sum()), float(np.round(e, 2).sum()), chapters)
