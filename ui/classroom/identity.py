"""Who this session is in which class: read once per session from the address (``?class=CODE``, and
``&view=display`` on the projector) and this browser's cookies, checked against the class store.

The right to teach a class and a student's seat live in HttpOnly cookies the app's class routes set
(``serve.class_routes``); this session reads them (``st.context.cookies``), keeps what the store accepted in its own
state, and never writes a key or a seat token into an address, a page or a message. The address carries only the
class's code (``keep_in_url``). Refusals are said (``say``), never raised.
"""

from __future__ import annotations

import copy

import streamlit as st

from core.classroom.rules import ClassNotFound, NotSeated, StoreUnavailable, normalize_code
from core.classroom.store import default_url, open_store
from serve.addresses import lan_address, students_link
from serve.class_routes import SEAT, TEACHER, credential
from ui import frame, models, present
from ui.classroom import keys as class_keys
from ui.lesson import moves

DISPLAY = "display"  # ?view=display: the projector's page, following the teacher's console


@st.cache_resource(show_spinner=False)
def _store(url: str):
    return open_store(url)


def store():
    """The class store every replica shares (``--class-store URL``, else ``default_url()``)."""
    args, _ = models.app_args()
    return _store(args.class_store or default_url())


def say(level: str, text: str) -> None:
    st.session_state[class_keys.CLASS_MESSAGE] = (level, text)


def role() -> str | None:
    """ "teacher" (the console), "student", "display" (the projector), or None: not in a class."""
    return st.session_state[class_keys.CLASS_ROLE]


def code() -> str | None:
    return st.session_state[class_keys.CLASS_CODE]


def follower() -> bool:
    """A student or the display: a session that shows the teacher's plan on its own model."""
    return role() in ("student", DISPLAY)


def forget(message: str | None = None) -> None:
    """Leave the class in this session (ended, expired, or left), saying why; the address keeps nothing of it. A
    display stays a display (no control on the projector), saying the class has ended."""
    if role() == DISPLAY:
        st.session_state[class_keys.CLASS_DISPLAY_ENDED] = True
    st.session_state.update({k: class_keys.DEFAULTS[k] for k in class_keys.CLASS_IDENTITY})
    for name in ("class", "view"):
        if name in st.query_params:
            del st.query_params[name]
    if message:
        say("info", message)


def from_url() -> None:
    """Once per session: class mode's own keys seeded (``ui.classroom.keys.DEFAULTS``), then the class this address
    names, in the role this browser's cookies give."""
    ss = st.session_state
    if class_keys.CLASS_URL_READ in ss:
        return
    ss.update({key: copy.deepcopy(value) for key, value in class_keys.DEFAULTS.items() if key not in ss})
    ss[class_keys.CLASS_URL_READ] = True
    raw = frame.first_address().get("class")
    if raw is None:
        return
    if raw == "new":
        ss[class_keys.CLASS_STARTING] = True  # the console's Start panel opens (ui.classroom.join)
        return
    found = normalize_code(raw)
    if found is None:
        return say("warning", f"“{raw[:20]}” is not a class code: a code is six letters and digits, e.g. K7QX2M.")
    try:
        _take_role(found)
    except StoreUnavailable as err:
        ss[class_keys.CLASS_JOIN_CODE] = found
        say("warning", f"{err}. Reload the page in a moment to join class {found}.")


def browser_cookies():
    """This browser's cookies, as its session's first request carried them (the class routes set them)."""
    return st.context.cookies


def _take_role(found: str) -> None:
    ss, cookies = st.session_state, browser_cookies()
    if store().info(found) is None:
        return say("warning", f"No class {found} is running: it has ended, or the code is mistyped. Ask your teacher.")
    if frame.first_address().get("view") == DISPLAY:
        ss.update({class_keys.CLASS_CODE: found, class_keys.CLASS_ROLE: DISPLAY})
        present.turn_on()
        return
    teacher = credential(cookies.get(TEACHER))
    if teacher and teacher[0] == found and store().is_teacher(found, teacher[1]):
        ss.update({class_keys.CLASS_CODE: found, class_keys.CLASS_ROLE: "teacher", class_keys.CLASS_KEY: teacher[1]})
        moves.teacher_view(True)  # the console shows the lesson's speaker notes
        ss[class_keys.CLASS_RESUMING] = True  # the console takes the class's plan back (a reload, another replica)
        return
    seat = credential(cookies.get(SEAT))
    if seat and seat[0] == found and (number := store().seat(found, seat[1])) is not None:
        ss.update({class_keys.CLASS_CODE: found, class_keys.CLASS_ROLE: "student", class_keys.CLASS_TOKEN: seat[1]})
        ss[class_keys.CLASS_SEAT] = number
        return
    ss[class_keys.CLASS_JOIN_CODE] = found  # the students' link: the join form opens with the code filled in


def keep_in_url() -> None:
    """Keep this session's class in its own address (page changes drop query parameters): the code, and on the
    projector the view. Written only when it differs."""
    ss = st.session_state
    if ss[class_keys.CLASS_CODE] is None:
        return
    want = {"class": ss[class_keys.CLASS_CODE], **({"view": DISPLAY} if role() == DISPLAY else {})}
    if any(st.query_params.get(k) != v for k, v in want.items()):
        st.query_params.update(want)


def join_link() -> tuple[str, str | None]:
    """(the address students open, a warning when it is this machine's loopback only)."""
    args, _ = models.app_args()
    proxied = "x-forwarded-for" in {name.lower() for name in st.context.headers}  # nginx (python -m serve) listens
    listening = "" if proxied else str(st.get_option("server.address") or "")
    return students_link(st.context.url or "http://localhost/", code(), args.public_url, lan_address(), listening)


def display_link() -> str:
    """The projector's page for this class (a link that grants no teacher power): relative to this page."""
    return f"./?class={code()}&view={DISPLAY}&present=1"


def seat_refused(err: Exception) -> None:
    """A store call refused this student's seat (class ended, seat unknown): leave, saying why."""
    if isinstance(err, ClassNotFound | NotSeated):
        forget("The class has ended: you are exploring on your own now.")
