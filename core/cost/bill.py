"""The bill per token (Ch. 19, Ch. 30 §30.4): what the cost page draws, as exact integer counts.

Counts are per layer and head unless a function multiplies by ``n_layer · n_head``; the figures
normalise them (the n = 1,000 grid as 1), so nothing is multiplied here only to be divided later.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from core.cost.counts import causal_pairs, decode_step_scores, generation_scores, score_grid

MARKS = (1_000, 10_000)  # the chapter's two worked points: 1,000 → 10⁶ scores, 10,000 → 10⁸


@dataclass(frozen=True)
class Growth:
    """Prefill scores and cache size against the context length ``n`` (per layer and head):
    the full n² grid, the n(n+1)/2 pairs the causal mask keeps, one cache entry per position;
    ``marks``: the chapter's points as (n, scores for all ``n_layer · n_head``)."""

    n: list[int]
    grid: list[int]
    causal: list[int]
    cache_entries: list[int]
    marks: list[tuple[int, int]]


def growth(n_max: int, n_layer: int = 1, n_head: int = 1, points: int = 201) -> Growth:
    """``points`` context lengths from 0 to ``n_max`` (evenly spaced, whole tokens)."""
    n = [round(i * n_max / (points - 1)) for i in range(points)]
    marks = [(x, score_grid(x) * n_layer * n_head) for x in MARKS if x <= n_max]
    return Growth(n, [score_grid(x) for x in n], [causal_pairs(x) for x in n], list(n), marks)


@dataclass(frozen=True)
class StepWork:
    """Scores in one decode step at context ``n``: with the KV cache (n) and by full-prefix
    recompute (n(n+1)/2), per layer and head."""

    n: list[int]
    cached: list[int]
    recompute: list[int]


def step_work(n_max: int, points: int = 60) -> StepWork:
    """About ``points`` log-spaced context lengths from 1 to ``n_max`` (a log axis shows both curves)."""
    n = sorted({max(1, round(n_max ** (i / (points - 1)))) for i in range(points)})
    return StepWork(n, [decode_step_scores(x, True) for x in n], [decode_step_scores(x, False) for x in n])


@dataclass(frozen=True)
class GenerationBill:
    """Scores to generate ``m_new`` tokens after an ``n_prompt``-token prompt, for all layers and
    heads: with the KV cache, by full-prefix recompute, and how many times more the latter is."""

    with_cache: int
    recompute: int

    @property
    def ratio(self) -> Fraction:
        return Fraction(self.recompute, self.with_cache)


def generation_bill(n_prompt: int, m_new: int, n_layer: int = 1, n_head: int = 1) -> GenerationBill:
    """``core.cost.counts.generation_scores`` both ways, times ``n_layer · n_head``. Raises ``ValueError``
    like it (``n_prompt`` < 1, ``m_new`` < 0)."""
    lh = n_layer * n_head
    return GenerationBill(
        generation_scores(n_prompt, m_new, cached=True) * lh, generation_scores(n_prompt, m_new, cached=False) * lh
    )
