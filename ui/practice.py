"""The Practice page's glue (``app_pages/practice.py`` stays layout): switching instances, one answer box with
its verdict, and the Check button's callback. Answers, mistakes and feedback come from ``core.practice``."""

from __future__ import annotations

import streamlit as st

from core import state
from core.practice import exercises
from core.practice.exercise_types import Exercise, Part
from core.practice.tally import Attempt, Tally
from ui.page import text_box

BADGES = {
    "right": ":green-badge[:material/check: right]",
    "unreadable": ":red-badge[:material/help: couldn't read]",
    "wrong": ":gray-badge[not quite]",
}


def show(ex_id: str, seed: int) -> None:
    """Switch to an instance and write it into the address (read back on the next run)."""
    st.session_state[state.PRACTICE_EX], st.session_state[state.PRACTICE_SEED] = ex_id, seed
    st.query_params.update({"ex": ex_id, "numbers": str(seed)})


def field(ex: Exercise, p: Part) -> str:
    """The session-state key of one part's answer box."""
    return box_key(ex.id, ex.seed, p.key)


def box_key(ex_id: str, seed: int, part: str) -> str:
    """The session-state key of the answer box of exercise ``ex_id`` with numbers ``seed``, part ``part``."""
    return f"{state.PRACTICE_IN}.{ex_id}.{seed}.{part}"


def check_all(ex: Exercise, tally: Tally) -> None:
    """Check every box of ``ex`` and record it in ``tally``."""
    typed = [(p, st.session_state.get(field(ex, p))) for p in ex.parts]
    for p, text in typed:
        tally.record(ex, p, text, exercises.check(p, text))
    # Every box empty: nothing to record, but the press deserves an answer (said below the form).
    st.session_state[state.PRACTICE_NOTHING_TYPED] = not any(str(text or "").strip() for _, text in typed)


def said(p: Part, last: Attempt | None) -> None:
    """The last Check's verdict for one part (messages quote typed text only as code spans)."""
    if last is None:
        return
    if last.status == "noted":
        st.info(f"**Model answer.** {p.answer}")
        return
    badge = BADGES.get(last.status, f":orange-badge[:material/lightbulb: {last.mistake}]")
    st.markdown(badge if last.status == "right" else f"{badge} {last.message}")


def answer_box(ex: Exercise, p: Part, tally: Tally) -> None:
    """One part's box (text, radio or text area) with its last verdict under it."""
    last = tally.last(ex, p.key)
    typed = last.typed if last else ""
    unit = {"B": "bytes", "×": ""}.get(p.unit, p.unit)
    with_unit = unit and unit not in p.label and p.kind not in ("choice", "explain")
    label = f"{p.label} ({unit})" if with_unit else p.label
    # The box's own state, once it has one, is what it shows (ui.practice_saved fills it with an answer a browser
    # kept): a default beside it would be ignored, and streamlit logs a warning when given both.
    own = field(ex, p) in st.session_state
    start = {"value": None if own else typed}
    if p.kind == "explain":
        text_box(st, label, limit=2_000, area=True, key=field(ex, p), height=90, **start)
    elif p.options:
        index = p.options.index(typed) if typed in p.options and not own else None
        st.radio(label, p.options, index=index, key=field(ex, p), horizontal=True)
    else:
        bare = f" A bare number means {p.unit}." if p.kind == "bytes" else ""
        help_text = f"Counts as right: {p.tolerance.describe(p.unit)}.{bare}"
        text_box(
            st,
            label,
            limit=exercises.answers.MAX_TYPED,
            key=field(ex, p),
            placeholder=p.placeholder,
            help=help_text,
            **start,
        )
    said(p, last if str(st.session_state.get(field(ex, p), typed) or "").strip() else None)  # emptied: no verdict
