"""The Practice page's catalogue: every exercise by id (Ch. 30 §30.8 first, then Ch. 19's worked
questions), made for a seed, and the URL's ``ex`` / ``numbers`` read back.
"""

from __future__ import annotations

import functools
from dataclasses import replace

from core.practice.bank import attention, cache, latency, rounding, weights
from core.practice.bank.latency import CH30_1
from core.practice.exercise_text import minus
from core.practice.exercise_types import Exercise
from core.typed_numbers import quote

MAX_SEED = 999_999


def typeset(ex: Exercise) -> Exercise:
    """Real minus signs in everything an exercise shows (generators format with Python's ``-``)."""
    parts = tuple(
        replace(
            p,
            label=minus(p.label),
            answer=minus(p.answer) if p.kind == "explain" else p.answer,
            mistakes=tuple(replace(m, message=minus(m.message)) for m in p.mistakes),
        )
        for p in ex.parts
    )
    return replace(
        ex, question=minus(ex.question), solution=minus(ex.solution), hints=tuple(map(minus, ex.hints)), parts=parts
    )


@functools.lru_cache(maxsize=1)
def catalogue() -> dict:
    """{id: generator(seed) -> Exercise}, Ch. 30's exercises first, then Ch. 19's worked questions."""
    return {
        CH30_1: latency.ex1,
        "ch30-2": cache.ex2,
        "ch30-3": cache.ex3,
        "ch30-4": rounding.ex4,
        "ch30-5": latency.ex5,
        "ch30-6": weights.ex6,
        "ch30-trace": latency.trace,
        "ch19-scores": attention.scores,
        "ch19-growth": cache.growth,
        "ch19-cache": cache.cache_bill,
        "ch19-weights": weights.weights,
        "ch19-ruler": rounding.ruler,
        "ch19-output": rounding.output,
    }


@functools.cache
def title(ex_id: str) -> str:
    """The exercise's title (from its chapter instance)."""
    return make(ex_id, 0).title


def make(ex_id: str, seed: int = 0) -> Exercise:
    """The instance of exercise ``ex_id`` for ``seed`` (0 = the chapter's numbers). Raises
    ``ValueError`` for an unknown id or a seed outside 0 … 999,999."""
    gens = catalogue()
    if ex_id not in gens:
        raise ValueError(f"no exercise {quote(ex_id)}; there are: {', '.join(gens)}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"the numbers' seed must be a whole number from 0 to {MAX_SEED:,}")
    return typeset(gens[ex_id](seed))


def parse_query(params: dict) -> tuple[str | None, int | None, list[str]]:
    """(exercise id, seed, notes) from query parameters ``ex`` and ``numbers``; a missing or
    malformed value is None, with a note saying why it was ignored."""
    notes, ex, seed = [], params.get("ex"), params.get("numbers")
    if ex is not None and ex not in catalogue():
        notes.append(f"ex={quote(ex, 30)} is not an exercise here")
        ex = None
    if seed is not None:
        try:
            seed = int(seed)
            if not 0 <= seed <= MAX_SEED:
                raise ValueError
        except (TypeError, ValueError):
            notes.append(f"numbers={quote(seed, 30)} is not a whole number from 0 to {MAX_SEED:,}")
            seed = None
    return ex, seed, notes
