"""A student's Practice attempts kept in their own browser (``core.practice.saved``; ``frontend/practice_saved.js``
keeps them in localStorage): a reload, or an exercise opened from its shared address, starts a fresh session, and
that session gets them back, so the Practice page counts them and the handout lists them all.

Nothing is kept on the server across sessions: the records travel between this session and its own browser only
(the component's data and its state value), and each is checked again here before it counts. Hints shown are not
kept.
"""

from __future__ import annotations

import secrets

import streamlit as st

from core.practice import saved
from core.practice.tally import Tally
from ui import static
from ui.practice import box_key

PRACTICE_TALLY = "practice.tally"  # core.practice.exercises.Tally, made per session (a default object would be shared)

# The attempts kept in the student's browser (ui/practice_saved.py, frontend/practice_saved.js).
PRACTICE_SAVED = "practice.saved"  # the hidden component: its state value "saved" is what the browser had stored

PRACTICE_SAVED_BOX = "practice-saved"  # its container (assets/style/a11y.css hides it)

PRACTICE_SAVED_SENT = "practice.saved_sent"  # the records last sent to the browser (sent again only when changed)

PRACTICE_SAVED_TAB = "practice.saved_tab"  # this session's random name: the browser hands its records back once

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    PRACTICE_TALLY: None,
}


# Served with the stage's modules (ui.static), so a rerun does not resend the code.
_saved = st.components.v2.component(
    "explainer_practice_saved", js=static.loader("practice_saved.js"), isolate_styles=False
)


def tally() -> Tally:
    """This session's practice tally (made on first use: a default object would be shared between sessions)."""
    if st.session_state.get(PRACTICE_TALLY) is None:
        st.session_state[PRACTICE_TALLY] = Tally()
    return st.session_state[PRACTICE_TALLY]


def keep() -> None:
    """Every run, on every page (a hidden element in the sidebar): send this session's attempts to the browser when
    they changed, and take back, once per session, the attempts the browser kept from earlier sessions, checked
    again (``core.practice.saved.replay``) and merged with this session's own."""
    ss = st.session_state
    records = saved.to_records(tally())
    tab = ss.setdefault(PRACTICE_SAVED_TAB, secrets.token_hex(8))
    changed = records != ss.get(PRACTICE_SAVED_SENT)
    with st.sidebar.container(key=PRACTICE_SAVED_BOX):
        result = _saved(
            data={"tab": tab, "records": records if changed else None},
            key=PRACTICE_SAVED,
            on_saved_change=lambda: None,  # a rerun, which takes them in below
        )
    ss[PRACTICE_SAVED_SENT] = records
    kept, mine = saved.from_browser(result.get("saved")), tally()
    if kept and not saved.holds_all(mine, kept):
        mine.become(saved.replay(saved.merge(saved.to_records(mine), kept), mine.hints))
        for a in mine.latest():  # an empty box shows its last answer again, with its verdict (as before a reload)
            key, options = box_key(a.exercise, a.seed, a.part), saved.part_of(a).options
            if not str(ss.get(key) or "").strip() and (not options or a.typed in options):
                ss[key] = a.typed
