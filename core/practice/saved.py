"""A student's Practice attempts as plain records, kept in their own browser (``ui.practice_saved``: the browser's
localStorage) so a reload or an exercise opened from its shared address (``/practice?ex=ch30-1&numbers=0``) starts
a session that still holds them, and the handout lists them all.

A record is what was typed, where and when: ``{"ex": id, "numbers": seed, "part": part key, "typed": text,
"at": seconds since the epoch}``. Verdicts are never stored: a session rebuilds its ``Tally`` by checking every
record again (``replay``), so nothing a browser hands back can mark an answer right. What comes back from a browser
is untrusted and read by ``from_browser``: anything malformed is dropped, never an error.
"""

from __future__ import annotations

import functools
import math

from core.practice import catalogue, exercises
from core.practice.answers import MAX_TYPED
from core.practice.exercise_types import Exercise, Part
from core.practice.tally import Attempt, Tally

MAX_RECORDS = 300  # the newest kept: a lesson's practice is a few dozen checks; replaying 300 takes well under 1 s
FIELDS = ("ex", "numbers", "part", "typed", "at")


def to_records(tally: Tally) -> list[dict]:
    """Every attempt of ``tally`` as a record, oldest first (at most the newest ``MAX_RECORDS``)."""
    rows = [{"ex": a.exercise, "numbers": a.seed, "part": a.part, "typed": a.typed, "at": a.at} for a in tally.attempts]
    return rows[-MAX_RECORDS:]


@functools.lru_cache(maxsize=256)
def _exercise(ex_id: str, seed: int) -> Exercise:
    return catalogue.make(ex_id, seed)


def _valid(r) -> bool:
    """A record of the right shape naming an exercise, numbers and part that exist."""
    if not isinstance(r, dict) or set(r) != set(FIELDS):
        return False
    ex, seed, part, typed, at = (r[k] for k in FIELDS)
    if not (isinstance(ex, str) and ex in catalogue.catalogue() and isinstance(part, str) and isinstance(typed, str)):
        return False
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= catalogue.MAX_SEED:
        return False
    if isinstance(at, bool) or not isinstance(at, int | float) or not math.isfinite(at) or at < 0:
        return False
    return 0 < len(typed) <= MAX_TYPED and typed.strip() != "" and any(p.key == part for p in _exercise(ex, seed).parts)


def part_of(a: Attempt) -> Part:
    """The part an attempt answered."""
    return next(p for p in _exercise(a.exercise, a.seed).parts if p.key == a.part)


def from_browser(raw) -> list[dict]:
    """The well-formed records among what a browser handed back (anything: it is untrusted), oldest first, at most
    ``MAX_RECORDS`` (the newest); an entry of another shape, an unknown exercise or part, numbers out of range, an
    empty or overlong answer or a time that is no time is dropped."""
    if not isinstance(raw, list):
        return []
    kept = [r for r in raw[-MAX_RECORDS:] if _valid(r)]
    return sorted(({k: r[k] for k in FIELDS} for r in kept), key=lambda r: r["at"])


def _identity(r: dict) -> tuple:
    return tuple(r[k] for k in FIELDS)


def merge(*lists: list[dict]) -> list[dict]:
    """The records of all ``lists``, each once (the same answer to the same part at the same time), oldest first, at
    most the newest ``MAX_RECORDS``."""
    seen, out = set(), []
    for r in (r for rows in lists for r in rows):
        if _identity(r) not in seen:
            seen.add(_identity(r))
            out.append(r)
    return sorted(out, key=lambda r: r["at"])[-MAX_RECORDS:]


def holds_all(tally: Tally, records: list[dict]) -> bool:
    """Whether every record is already one of ``tally``'s attempts."""
    have = {_identity(r) for r in to_records(tally)}
    return all(_identity(r) in have for r in records)


def replay(records: list[dict], hints: dict | None = None) -> Tally:
    """A fresh ``Tally`` with every record checked again, in order (``exercises.check``: the verdicts, named
    mistakes and counts are this code's, not the browser's), and ``hints`` (hints shown per instance) kept."""
    tally = Tally(hints=dict(hints or {}))
    for r in records:
        ex = _exercise(r["ex"], r["numbers"])
        part = next(p for p in ex.parts if p.key == r["part"])
        tally.record(ex, part, r["typed"], exercises.check(part, r["typed"]), at=r["at"])
    return tally
