"""The console's roster (under More): who has answered the open question, by seat number and nickname, and the
teacher's removal of a seat (a script's, a prank's: its place is freed and its answers no longer count). The
console's eyes only, never scores, and hidden in presenter mode."""

from __future__ import annotations

import streamlit as st

from core.classroom.rules import ClassNotFound, NotTeacher, StoreUnavailable
from core.text import markdown_literal
from ui.classroom import identity
from ui.classroom import keys as class_keys
from ui.present import presenter_mode


def roster(q) -> None:
    """Who has answered the open question ``q`` (None: no question), and a seat to remove."""
    if presenter_mode():
        return st.caption("Who has answered: hidden in presenter mode (this screen may be on the projector).")
    ss = st.session_state
    qid, round_ = ("no-question", 1) if q is None else (q.id, q.round)  # nobody has answered "no-question"
    rows = identity.store().roster(identity.code(), ss[class_keys.CLASS_KEY], qid, round_)
    if not rows:
        return st.caption("No students yet.")
    st.dataframe(
        [{"seat": r.number, "nickname": r.nickname or "—", "answered": "yes" if r.answered else ""} for r in rows],
        hide_index=True,
    )
    names = {r.number: f"Seat {r.number}" + (f" · {r.nickname}" if r.nickname else "") for r in rows}
    left, right = st.columns([3, 2], vertical_alignment="bottom")
    left.selectbox(
        "Remove a seat", list(names), index=None, format_func=names.get, key=class_keys.CLASS_REMOVE_SEAT,
        placeholder="Choose a seat", help="Its place is freed for another student; its answers no longer count.",
    )  # fmt: skip
    right.button("Remove", icon=":material/person_remove:", on_click=_remove, args=(names,), width="stretch")


def _remove(names: dict[int, str]) -> None:
    """Remove the chosen seat; what happened is said in a toast (the popover redraws with the class's count)."""
    ss = st.session_state
    number = ss[class_keys.CLASS_REMOVE_SEAT]
    if number is None:
        return
    try:
        gone = identity.store().remove_seat(identity.code(), ss[class_keys.CLASS_KEY], number)
    except (ClassNotFound, NotTeacher, StoreUnavailable) as err:
        st.toast(markdown_literal(f"{names[number]} was not removed: {err}"), icon=":material/error:")
        return
    ss[class_keys.CLASS_REMOVE_SEAT] = None
    said = f"{names[number]} removed: its place is free." if gone else f"{names[number]} had already left."
    st.toast(markdown_literal(said), icon=":material/person_remove:")
