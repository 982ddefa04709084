"""The Practice page's glue (``app_pages/practice.py`` stays layout): switching instances, one answer box with
its verdict, and the Check button's callback. Answers, mistakes and feedback come from ``core.practice``."""

from __future__ import annotations

import streamlit as st

from core.lesson.pages import PAGES
from core.practice import exercises
from core.practice.bank.latency import CH30_1
from core.practice.exercise_types import Exercise, Part
from core.practice.tally import Attempt, Tally
from ui.page import settings_now, show_settings, text_box

# The page reads ?ex=<id>&numbers=<seed> itself ("numbers", not "seed": ?seed= already sets the
# decode page's sampling seed, core/decode/share.py).
PRACTICE_EX = "practice.ex"  # exercise id, a key of core.practice.catalogue.catalogue()

PRACTICE_SEED = "practice.seed"  # 0 = the chapter's own numbers; any other = fresh numbers

PRACTICE_IN = "practice.in"  # + exercise id, seed and part: one answer box

PRACTICE_NOTHING_TYPED = "practice.nothing_typed"

PRACTICE_PICK = "practice.pick"

PRACTICE_HANDOUT = "practice.handout"

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    PRACTICE_EX: CH30_1,
    PRACTICE_SEED: 0,
}
# The page's settings (core.lesson.pages.PAGES["practice"]) -> their session keys.
SETTINGS = {
    "ex": PRACTICE_EX,
    "numbers": PRACTICE_SEED,
}


BADGES = {
    "right": ":green-badge[:material/check: right]",
    "unreadable": ":red-badge[:material/help: couldn't read]",
    "wrong": ":gray-badge[not quite]",
}


def open_exercise(ex_id: str, seed: int) -> None:
    """Switch to an instance and write it into the address (read back on the next run)."""
    show(settings_type()(ex=ex_id, numbers=seed))


def field(ex: Exercise, p: Part) -> str:
    """The session-state key of one part's answer box."""
    return box_key(ex.id, ex.seed, p.key)


def box_key(ex_id: str, seed: int, part: str) -> str:
    """The session-state key of the answer box of exercise ``ex_id`` with numbers ``seed``, part ``part``."""
    return f"{PRACTICE_IN}.{ex_id}.{seed}.{part}"


def check_all(ex: Exercise, tally: Tally) -> None:
    """Check every box of ``ex`` and record it in ``tally``."""
    typed = [(p, st.session_state.get(field(ex, p))) for p in ex.parts]
    for p, text in typed:
        tally.record(ex, p, text, exercises.check(p, text))
    # Every box empty: nothing to record, but the press deserves an answer (said below the form).
    st.session_state[PRACTICE_NOTHING_TYPED] = not any(str(text or "").strip() for _, text in typed)


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


def snapshot():
    """The page's settings as this session has them (a class's plan carries them to followers)."""
    return settings_now("practice", SETTINGS)


def show(settings) -> None:
    """Show ``settings`` (a lesson stop's, a class's plan's) on the page, before it runs, and write the exercise
    into the address (the page reads ``?ex=…&numbers=…`` first)."""
    show_settings(SETTINGS, DEFAULTS, settings)
    ex_id, seed = st.session_state[PRACTICE_EX], str(st.session_state[PRACTICE_SEED])
    if st.query_params.get("ex") != ex_id or st.query_params.get("numbers") != seed:
        st.query_params.update({"ex": ex_id, "numbers": seed})


def settings_type() -> type:
    return PAGES["practice"].settings_type
