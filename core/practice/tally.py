"""The per-session practice tally: every Check of every part (what was typed, the verdict, the
right answer), counts of right answers, named mistakes and unreadable input, and hints taken.
One ``Tally`` lives in each browser session's state; it is never shared between sessions."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field, fields

from core.practice.exercise_types import Exercise, Feedback, Part
from core.practice.exercises import format_answer


@dataclass(frozen=True)
class Attempt:
    """One Check of one part: what was typed (kept verbatim; escape it when showing), the
    verdict and the right answer as text, and when (``at``, seconds since the epoch: the browser's
    copy of the attempts, ``core.practice.saved``, orders and tells attempts apart by it)."""

    exercise: str
    seed: int
    title: str
    part: str
    label: str
    typed: str
    status: str
    message: str
    right: str
    mistake: str | None = None  # the named mistake, if it was one
    at: float = 0.0


@dataclass
class Tally:
    """This session's practice (one per browser session, kept in its session state; never shared; its
    attempts also kept in the student's own browser and replayed into a later session of it,
    ``core.practice.saved``): checks, right answers, named mistakes by name, unreadable inputs, hints
    taken, every attempt."""

    checked: int = 0
    right: int = 0
    unreadable: int = 0
    mistakes: Counter = field(default_factory=Counter)
    hints: dict = field(default_factory=dict)
    attempts: list = field(default_factory=list)

    def record(self, ex: Exercise, p: Part, typed: str, fb: Feedback, at: float | None = None) -> None:
        """Count one Check of part ``p`` made at ``at`` (seconds since the epoch; now if None): nothing for an
        empty box or for the same text as this part's last attempt (Check pressed again counted every unchanged
        box once more)."""
        if fb.status == "empty":
            return
        last = self.last(ex, p.key)
        if last is not None and last.typed == str(typed):
            return  # Check pressed again over an unchanged box: the same answer, not another attempt
        self.attempts.append(
            Attempt(
                ex.id,
                ex.seed,
                ex.title,
                p.key,
                p.label,
                str(typed),
                fb.status,
                fb.message,
                p.answer if p.kind == "explain" else format_answer(p),
                fb.mistake,
                time.time() if at is None else at,
            )
        )
        if fb.status == "unreadable":
            self.unreadable += 1
            return
        if fb.status == "noted":
            return
        self.checked += 1
        self.right += fb.status == "right"
        if fb.mistake:
            self.mistakes[fb.mistake] += 1

    def become(self, other: Tally) -> None:
        """Take ``other``'s counts, hints and attempts, in place: a callback that holds this object (the Check
        button's) records into the tally the page shows."""
        for f in fields(self):
            setattr(self, f.name, getattr(other, f.name))

    def last(self, ex: Exercise, part_key: str) -> Attempt | None:
        return next(
            (a for a in reversed(self.attempts) if (a.exercise, a.seed, a.part) == (ex.id, ex.seed, part_key)), None
        )

    def attempted(self, ex: Exercise) -> bool:
        return any((a.exercise, a.seed) == (ex.id, ex.seed) for a in self.attempts)

    def take_hint(self, ex: Exercise) -> int:
        """Show one more hint of this instance; returns how many are shown now."""
        k = (ex.id, ex.seed)
        self.hints[k] = min(self.hints.get(k, 0) + 1, len(ex.hints))
        return self.hints[k]

    def hints_shown(self, ex: Exercise) -> int:
        return self.hints.get((ex.id, ex.seed), 0)

    def latest(self) -> list[Attempt]:
        """The last attempt of every part tried, in the order first tried (for the handout)."""
        out: dict[tuple, Attempt] = {}
        for a in self.attempts:
            out.pop((a.exercise, a.seed, a.part), None)
            out[(a.exercise, a.seed, a.part)] = a
        return list(out.values())
