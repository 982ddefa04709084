"""What a checked exercise is made of (``core.practice.exercises`` builds, checks and lists them): the
kinds of answer box, a tolerance, a known mistake, a part (one box), an exercise instance and the
feedback a typed answer gets. Frozen dataclasses: an instance is shared by every reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KINDS = ("bytes", "time", "percent", "number", "int_list", "number_list", "time_list", "choice", "explain")


@dataclass(frozen=True)
class Tolerance:
    """How close a typed value must be: |typed − right| ≤ max(abs, rel·|right|) (per entry for lists)."""

    rel: float = 0.0
    abs: float = 0.0

    def accepts(self, typed: float, right: float) -> bool:
        # 1e-9 relative slack: 0.1 + 0.2 typed is 0.30000000000000004, and that is right.
        return abs(typed - right) <= max(self.abs, self.rel * abs(right), 1e-9 * abs(right))

    def describe(self, unit: str = "") -> str:
        if self.rel == 0 and self.abs == 0:
            return "exact"
        if self.rel:
            return f"within {self.rel * 100:g} %"
        if unit == "%":
            return f"within ±{self.abs:g} percentage points"
        return f"within ±{self.abs:g}{(' ' + unit) if unit else ''}"


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer: the value it produces (same kind as the part's answer; words for a
    choice), a short ``name`` for the tally and the ``message`` a student sees."""

    value: Any
    name: str
    message: str


@dataclass(frozen=True)
class Part:
    """One answer box. ``kind`` is one of ``KINDS``; ``answer`` is bytes (float) for "bytes",
    ms for "time", percent for "percent", a tuple for lists, accepted words for "choice" and the
    model answer (Markdown) for "explain" (shown after an attempt, never graded). ``unit`` is
    what a bare number means (e.g. "MiB") and is shown in the label."""

    key: str
    label: str
    kind: str
    answer: Any
    unit: str = ""
    tolerance: Tolerance = Tolerance()
    mistakes: tuple[Mistake, ...] = ()
    options: tuple[str, ...] = ()
    placeholder: str = ""


@dataclass(frozen=True)
class Exercise:
    """One instance: ``id`` ("ch30-3"), ``seed``, a title, the source section, the question
    (Markdown), its parts, hints (in order), the worked solution (Markdown) and ``params``: the
    numbers it was built from, so a test can recompute every answer independently."""

    id: str
    seed: int
    title: str
    source: str
    question: str
    parts: tuple[Part, ...]
    hints: tuple[str, ...]
    solution: str
    params: dict


@dataclass(frozen=True)
class Feedback:
    """``status``: "right", "mistake" (a named known mistake), "wrong", "unreadable", "noted"
    (an explain part: model answer shown), "empty". ``message`` is Markdown in which typed text
    only ever appears as a code span (``answers.quote``)."""

    status: str
    message: str
    mistake: str | None = None
