"""Entering a class from a page outside one: the students' join form (the code, an optional nickname), the
teacher's start panel (``?class=new``, or the sidebar: a class, or the console and display for a teacher alone),
the sidebar's "Join a class" box (a student with only the code) and its pairing box (a second teacher device).
Each sends its form to a class route (``ui.classroom.wire.post``), which sets this browser's cookie; the browser
then opens the class's address.
"""

from __future__ import annotations

import streamlit as st

from core.classroom.rules import SEAT_CAP, normalize_code, normalize_pair_code
from core.text import markdown_literal
from ui import models
from ui.classroom import keys as class_keys
from ui.classroom import wire
from ui.page import text_box


def _query(**extra: str) -> dict[str, str]:
    """The address after entering: the class's code with this page's other parameters (a lesson, presenter mode)."""
    keep = {k: v for k, v in st.query_params.to_dict().items() if k not in ("class", "view", "key", "seat")}
    return {**keep, "class": "{code}", **extra}


def _send(action: str, body: dict, then: dict[str, str]) -> None:
    """POST the form once it was submitted; a refusal is said under it and the form stays."""
    refused = wire.post(action, body, then)
    if refused:
        st.session_state[class_keys.CLASS_SUBMITTED] = None
        st.warning(refused)


def join_form() -> None:
    """The students' link: the code (filled in from the link) and a nickname; Join sends them to the join route."""
    ss = st.session_state
    with st.form("class-join", border=True):
        st.markdown(
            "**Join the class**: the code is on the projector. A nickname is optional; only your teacher sees it."
        )
        a, b, c = st.columns([1, 2, 1], vertical_alignment="bottom")
        typed = text_box(a, "Class code", limit=12, key=class_keys.CLASS_JOIN_CODE)
        nick = text_box(b, "Nickname (optional)", limit=40, key=class_keys.CLASS_NICKNAME)
        if c.form_submit_button("Join", type="primary", width="stretch") and typed is not None and nick is not None:
            ss[class_keys.CLASS_SUBMITTED] = ("join", {"code": typed, "nickname": nick})
    submitted = ss.get(class_keys.CLASS_SUBMITTED)
    if submitted and submitted[0] == "join":
        if normalize_code(submitted[1]["code"]) is None:
            ss[class_keys.CLASS_SUBMITTED] = None
            return st.warning("A class code is six letters and digits (e.g. K7QX2M): check it on the projector.")
        _send("join", submitted[1], _query())


def start_panel() -> None:
    """Start a class (students join with its code), or present alone (a console here, a display on the projector;
    no one can join). A server started with a teacher password asks for it."""
    ss = st.session_state
    args, _ = models.app_args()
    with st.form("class-start", border=True):
        st.markdown(
            "**Start a class**: students join with a code and follow your steps; a display shows the projector."
        )
        a, b = st.columns(2, vertical_alignment="bottom")
        seats = a.number_input(
            "Seats", 1, 10_000, SEAT_CAP, key=class_keys.CLASS_SEATS, help="The most students who can join."
        )
        password = text_box(b, "Teacher password", limit=200, type="password") if args.teacher_password else ""
        c, d = st.columns(2)
        start = c.form_submit_button("Start a class", type="primary", icon=":material/groups:", width="stretch")
        alone = d.form_submit_button("Present alone (console and display)", icon=":material/cast:", width="stretch")
    if (start or alone) and password is not None:
        ss[class_keys.CLASS_SUBMITTED] = ("open", {"seats": int(seats), "joining": not alone, "password": password})
    submitted = ss.get(class_keys.CLASS_SUBMITTED)
    if submitted and submitted[0] == "open":
        _send("open", submitted[1], _query())


CODE_SHAPE = "A class code is six letters and digits (e.g. K7QX2M): check it on the projector."
NOT_A_CODE = "“{typed}” is a teacher's one-time pairing code, not a class code. " + CODE_SHAPE
NOT_A_PAIR = (
    "“{typed}” is a class code: students join with it under “Join a class” above. The console's one-time "
    "code (under More) is six digits."
)


def code_box() -> None:
    """The sidebar's "Join a class": a student who has only the code (read off the projector, not a link) types it
    and an optional nickname, and joins from here (a phone's sidebar covers the page: nothing to find under it)."""
    ss = st.session_state
    with st.form("class-code", border=False):
        typed = text_box(st, "Code on the projector", limit=12, key=class_keys.CLASS_CODE_TYPED)
        nick = text_box(st, "Name for your teacher (optional)", limit=40, key=class_keys.CLASS_CODE_NICKNAME)
        sent = st.form_submit_button("Join a class", icon=":material/login:", width="stretch")
        if sent and typed is not None and nick is not None:
            _code_typed(typed.strip(), nick)
    says("code")
    submitted = ss.get(class_keys.CLASS_SUBMITTED)
    if submitted and submitted[0] == "join-sidebar":
        refused = wire.post("join", submitted[1], _query())
        if refused:
            ss[class_keys.CLASS_SUBMITTED] = None
            st.warning(markdown_literal(refused))


def _code_typed(typed: str, nickname: str) -> None:
    ss = st.session_state
    found = normalize_code(typed)
    if found is None:
        shown = NOT_A_CODE if normalize_pair_code(typed) else CODE_SHAPE
        ss[class_keys.CLASS_SIDEBAR_SAYS] = ("code", shown.format(typed=typed))
        return
    ss[class_keys.CLASS_SIDEBAR_SAYS] = None
    ss[class_keys.CLASS_SUBMITTED] = ("join-sidebar", {"code": found, "nickname": nickname})


def says(box: str) -> None:
    """The refusal of the sidebar's ``box`` ("code" or "pair"), under it, shown literally (it quotes what was typed)."""
    said = st.session_state[class_keys.CLASS_SIDEBAR_SAYS]
    if said and said[0] == box:
        st.warning(markdown_literal(said[1]))


def pair_box() -> None:
    """The sidebar's box for a second teacher device: the one-time code the console shows. A class code typed here
    is pointed to "Join a class" (it is not sent as a wrong pairing code)."""
    ss = st.session_state
    with st.form("class-pair", border=False):
        typed = text_box(
            st, "Teacher's one-time code (from the console's More)", limit=12, key=class_keys.CLASS_PAIR_TYPED
        )
        if st.form_submit_button("Use this device as the console", width="stretch") and typed:
            if normalize_code(typed) and not normalize_pair_code(typed):
                ss[class_keys.CLASS_SIDEBAR_SAYS] = ("pair", NOT_A_PAIR.format(typed=typed.strip()))
            else:
                ss[class_keys.CLASS_SIDEBAR_SAYS] = None
                ss[class_keys.CLASS_SUBMITTED] = ("pair", {"pair": typed.strip()})
    says("pair")
    submitted = ss.get(class_keys.CLASS_SUBMITTED)
    if submitted and submitted[0] == "pair":
        _send("pair", submitted[1], _query())
