"""Who this session is in which class: read from the address once per session (``?class=new``,
``?class=CODE``, ``?class=CODE&key=…`` for the teacher, ``?class=CODE&seat=…`` for a seated
student), kept in the address across page changes (a reconnect to another replica reads it again
and rejoins), joined and left from the class strip's buttons."""

from __future__ import annotations

import streamlit as st

from core import state
from core.classroom.plan import Plan
from core.classroom.rules import ClassFull, ClassNotFound, JoiningClosed, NotSeated, TooManyJoins, normalize_code
from core.classroom.store import default_url, open_store
from ui import models
from ui.frame import PAGES

ROLE_PARAMS = ("class", "key", "seat")  # the address's class parameters (only these are ever written here)


@st.cache_resource(show_spinner=False)
def _store(url: str):
    return open_store(url)


def store():
    """The class store every replica shares (``--class-store URL``, else ``default_url()``)."""
    args, _ = models.app_args()
    return _store(getattr(args, "class_store", None) or default_url())


def say(level: str, text: str) -> None:
    st.session_state[state.CLASS_MESSAGE] = (level, text)


def role() -> str | None:
    return st.session_state[state.CLASS_ROLE]


def code() -> str | None:
    return st.session_state[state.CLASS_CODE]


def forget(message: str | None = None) -> None:
    """Leave the class in this session (ended, expired, or left), saying why."""
    st.session_state.update({k: state.CLASS[k] for k in (state.CLASS_CODE, state.CLASS_ROLE, state.CLASS_KEY)})
    st.session_state.update({k: state.CLASS[k] for k in (state.CLASS_TOKEN, state.CLASS_SEAT, state.CLASS_APPLIED)})
    for name in ROLE_PARAMS:
        if name in st.query_params:
            del st.query_params[name]
    if message:
        say("info", message)


def from_url() -> None:
    """Once per session: take the class role the address gives. Refusals are said, never raised."""
    ss = st.session_state
    if state.CLASS_URL_READ in ss:
        return
    ss[state.CLASS_URL_READ] = True
    params = st.query_params.to_dict()
    raw = params.get("class")
    if raw is None:
        return
    if raw == "new":
        return open_class()
    found = normalize_code(raw)
    if found is None:
        return say("warning", "That class code is not one this app makes (six letters and digits, e.g. K7QX2M).")
    try:
        if "key" in params and store().is_teacher(found, params["key"]):
            ss.update({state.CLASS_CODE: found, state.CLASS_ROLE: "teacher", state.CLASS_KEY: params["key"]})
            _, plan = store().plan(found) or (0, Plan())  # a reload keeps the class paused, released or recalled
            ss[state.CLASS_MODE] = plan.mode
            ss[state.CLASS_RECALL] = plan.recall
            return
        if "seat" in params and (seat := store().seat(found, params["seat"])) is not None:
            ss.update({state.CLASS_CODE: found, state.CLASS_ROLE: "student", state.CLASS_TOKEN: params["seat"]})
            ss[state.CLASS_SEAT] = seat
            return
    except ClassNotFound:
        return say("info", f"Class {found} has ended (or never existed): ask your teacher for the code.")
    ss[state.CLASS_JOIN_CODE] = found  # the students' link: the join form opens with the code filled in


def open_class() -> None:
    """Open a new class with this session as its teacher; the key goes into this browser's address only."""
    ss = st.session_state
    found, key = store().open_class()
    ss.update({state.CLASS_CODE: found, state.CLASS_ROLE: "teacher", state.CLASS_KEY: key})
    ss.update({state.CLASS_MODE: "follow", state.CLASS_RECALL: 0, state.CLASS_ROUNDS: {}, state.CLASS_PUBLISHED: None})
    ss[state.CLASS_MESSAGE] = None


def join() -> None:
    """The join form's button: seat this session in the class its code box names."""
    ss = st.session_state
    found = normalize_code(ss[state.CLASS_JOIN_CODE])
    if found is None:
        return say("warning", "A class code is six letters and digits (e.g. K7QX2M): check it on the projector.")
    try:
        seat = store().join(found, ss[state.CLASS_NICKNAME], client=client_id())
    except ClassNotFound:
        return say("warning", f"No class {found} is running: check the code on the projector.")
    except (TooManyJoins, JoiningClosed, ClassFull) as err:
        return say("warning", str(err))
    ss.update({state.CLASS_CODE: found, state.CLASS_ROLE: "student", state.CLASS_TOKEN: seat.token})
    ss.update({state.CLASS_SEAT: seat.number, state.CLASS_APPLIED: None, state.CLASS_MESSAGE: None})


def client_id() -> str:
    """Whom wrong codes are counted against (``core.classroom.store`` refuses a client's 21st wrong
    code in a minute): the browser's address; behind the class server's nginx (a loopback peer) the
    address nginx appended last to X-Forwarded-For (earlier entries are the client's own say)."""
    peer = st.context.ip_address or ""
    forwarded = st.context.headers.get("X-Forwarded-For", "")
    if forwarded and peer in ("", "127.0.0.1", "::1"):
        return forwarded.split(",")[-1].strip()
    return peer


def keep_in_url() -> None:
    """Keep this session's class in its own address (page changes drop query parameters): the
    teacher's ``class``+``key``, a student's ``class``+``seat``. Written only when it differs."""
    ss = st.session_state
    if ss[state.CLASS_CODE] is None:
        return
    secret = ("key", ss[state.CLASS_KEY]) if role() == "teacher" else ("seat", ss[state.CLASS_TOKEN])
    want = {"class": ss[state.CLASS_CODE], secret[0]: secret[1]}
    if any(st.query_params.get(k) != v for k, v in want.items()):
        st.query_params.update(want)


def students_link() -> str:
    """The address students open: this app's own address with only ``?class=CODE`` (never a key)."""
    base = (st.context.url or "").split("?", 1)[0]
    if base.rstrip("/").rsplit("/", 1)[-1] in {p.removeprefix("app_pages/").removesuffix(".py") for p in _pages()}:
        base = base.rstrip("/").rsplit("/", 1)[0] + "/"  # the students' link opens the app, not this page
    return f"{base}?class={code()}"


def _pages() -> set[str]:
    return {path for path, _, _ in PAGES}


def seat_refused(err: Exception) -> None:
    """A store call refused this student's seat (class ended, seat unknown): leave, saying why."""
    if isinstance(err, ClassNotFound | NotSeated):
        forget("The class has ended: you are exploring on your own now.")
