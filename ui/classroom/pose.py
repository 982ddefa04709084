"""Practice posed to a class (issue 41): the teacher puts one answer box of the exercise on screen to
the class as a multiple-choice question whose options are the right answer and the exercise's own
named mistakes (``core.practice``'s ``Mistake``: a GiB read as GB, a missing factor 2, …); students
answer on their laptops like a predict-first question, and the reveal shows the class's histogram
and, to each student, the mistake behind their pick."""

from __future__ import annotations

import dataclasses

import streamlit as st

from core.classroom.plan import Question
from core.practice.exercise_text import bytes_text, format_value
from ui.classroom import identity
from ui.classroom import keys as class_keys
from ui.classroom import question as class_question

PRACTICE = "app_pages/practice.py"
SERVE = "app_pages/serve_class.py"  # Serve the class asks before a long document (ui.serve_class.predict)
KINDS = ("bytes", "time", "percent", "number")  # answers a class can pick among (lists and words are typed)


def _text(p, value) -> str:
    """An option as short as a button wants it: "768 MiB", "100 ms", "11.8 %", "10"."""
    if p.kind == "bytes":
        return bytes_text(float(value))
    return format_value(p.kind, value, p.unit)


def choices(p) -> tuple[list[str], int, list[str]]:
    """The part's options (the right answer and up to four named mistakes, distinct as shown,
    smallest first), the right one's index, and per option the mistake's name ("" for the right one)."""
    found = {_text(p, p.answer): (float(p.answer), "")}
    for m in p.mistakes:
        found.setdefault(_text(p, m.value), (float(m.value), m.name))
        if len(found) == 5:
            break
    ranked = sorted(found.items(), key=lambda kv: kv[1][0])
    texts = [t for t, _ in ranked]
    return texts, texts.index(_text(p, p.answer)), [name for _, (_, name) in ranked]


def gradable(ex) -> list:
    """The parts a class can answer by picking: one number, with at least one named mistake."""
    number = (int, float)
    return [
        p
        for p in ex.parts
        if p.kind in KINDS and p.mistakes and isinstance(p.answer, number)
        if all(isinstance(m.value, number) for m in p.mistakes)
    ]


def question(ex, p, revealed: bool = False) -> Question:
    """The plan's question for part ``p`` of exercise ``ex``; the answer and the mistakes' names only
    once ``revealed``."""
    options, answer, misses = choices(p)
    base = Question(
        id=f"practice:{ex.id}:{ex.seed}:{p.key}", kind="practice", text=f"{ex.title}: {p.label}", options=tuple(options)
    )
    if not revealed:
        return base
    return dataclasses.replace(
        base, revealed=True, answer=answer, explain=f"The answer is {options[answer]}.", misses=tuple(misses)
    )


def panel(ex) -> None:
    """On the Practice page, for a class's teacher: pose one answer box to the class, then reveal it."""
    if identity.role() != "teacher":
        return
    ss, parts = st.session_state, gradable(ex)
    posed = ss.get(class_keys.CLASS_POSED)
    if posed is not None and not posed.id.startswith(f"practice:{ex.id}:{ex.seed}:"):
        posed = ss[class_keys.CLASS_POSED] = None  # another exercise or other numbers: the posed one is gone
    box = st.container(border=True, key=class_keys.CLASS_POSE)
    if not parts:
        return box.caption("Class: this exercise's answers are typed lists or words; none can be posed as a choice.")
    if posed is None:
        a, b = box.columns([3, 1], vertical_alignment="bottom")
        key = a.selectbox("Pose to the class", [p.key for p in parts], format_func=lambda k: _label(parts, k))
        b.button("Pose", type="primary", on_click=_pose, args=(ex, _part(parts, key)), width="stretch")
        return
    part = _part(parts, posed.id.rsplit(":", 1)[1])
    if not posed.revealed:
        a, b = box.columns([3, 1], vertical_alignment="center")
        a.markdown(f"Posed to the class: **{part.label}** — the count is above the page.")
        b.button("Reveal to the class", type="primary", on_click=_reveal, args=(ex, part), width="stretch")
        return
    with box:
        verdict = class_question.class_answers(posed)
        st.caption(f"{verdict} {posed.explain}")
        st.button("Pose another", on_click=_clear)


def _label(parts, key: str) -> str:
    return _part(parts, key).label


def _part(parts, key: str):
    return next(p for p in parts if p.key == key)


def _pose(ex, p) -> None:
    st.session_state[class_keys.CLASS_POSED] = question(ex, p)


def _reveal(ex, p) -> None:
    st.session_state[class_keys.CLASS_POSED] = question(ex, p, revealed=True)


def _clear() -> None:
    put(None)


def posed_now() -> Question | None:
    return st.session_state.get(class_keys.CLASS_POSED)


def put(q: Question | None) -> None:
    """Pose ``q`` to the class from another page that asks its own (Serve the class's long document); None: nothing
    posed. The console's plan carries it; students answer it as any question."""
    st.session_state[class_keys.CLASS_POSED] = q


def leave_page(page: str | None) -> None:
    """A teacher off the pages that pose questions has nothing posed (the decode stage asks its own questions)."""
    if page not in (PRACTICE, SERVE):
        st.session_state[class_keys.CLASS_POSED] = None
