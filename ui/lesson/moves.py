"""Moving through a lesson: the shipped lessons (``shipped``), the stop's address (``link_params``),
going to a stop (``go``, ``move``: its settings written into session state, its page switched to in
the next run), starting and leaving a lesson, and the address bar (``keep_in_url``, ``from_url``).
"""

from __future__ import annotations

import re

import streamlit as st

from core.lesson.stops import load_shipped, shipped_lessons
from ui import frame, handout, session
from ui import page as page_ui
from ui import present as present_keys
from ui.lesson import keys as lesson_keys
from ui.present import share_link_in_url


@st.cache_resource
def shipped(name: str):
    """A shipped lesson (``core.lesson.stops.load_shipped``), parsed once and shared read-only."""
    return load_shipped(name)


def _lesson():
    return st.session_state[lesson_keys.LESSON]


def link_params(k: int | None = None, for_students: bool = False) -> dict:
    """The address of stop ``k`` (default: the one on screen): ``lesson`` and ``stop`` for a
    shipped lesson (an uploaded file cannot travel in a link), plus ``teacher`` and ``present`` as
    on now unless ``for_students``."""
    ss = st.session_state
    out = {}
    if ss[lesson_keys.LESSON_NAME]:
        out = {
            "lesson": ss[lesson_keys.LESSON_NAME],
            "stop": str((ss[lesson_keys.LESSON_STOP] if k is None else k) + 1),
        }
    if not for_students:
        if ss[lesson_keys.LESSON_TEACHER]:
            out["teacher"] = "1"
        if ss[present_keys.PRESENT]:
            out["present"] = "1"
    return out


def go(k: int) -> None:
    """Move to stop ``k`` (from 0): apply its settings now, switch to its page before it runs."""
    ss, lesson = st.session_state, _lesson()
    if lesson is None:
        return
    k = max(0, min(k, len(lesson.stops) - 1))
    if ss[lesson_keys.LESSON_STOP] != k and lesson.stops[ss[lesson_keys.LESSON_STOP]].page == "decode":
        handout.keep_decode_stop(ss[lesson_keys.LESSON_STOP])
    stop = lesson.stops[k]
    # Settings this stop leaves out go back to their defaults (the owner's show), so the speaker note's numbers
    # hold whatever the class did on the page before.
    session.show(stop.page, stop.typed())
    ss[lesson_keys.LESSON_STOP], ss[lesson_keys.LESSON_GOTO] = k, True
    arrive()
    st.query_params.from_dict(link_params(k))


def arrive() -> None:
    """The browser scrolls the stop's main figure into view (once per arrival)."""
    st.session_state[lesson_keys.LESSON_ARRIVAL] += 1


def teacher_view(on: bool) -> None:
    """The lesson's teacher view: the speaker note offered (``?teacher=1``, the sidebar's toggle, a console)."""
    st.session_state[lesson_keys.LESSON_TEACHER] = on


def lock(locked: bool) -> None:
    """A following session: the lesson bar's moves and leave are the teacher's (class mode)."""
    st.session_state[lesson_keys.CLASS_LOCKED] = locked


def move(by: int) -> None:
    """Move ``by`` stops from the one the session is on now, not the one a (possibly stale) bar showed:
    two clicker presses in quick succession go two stops on, never the same move twice."""
    if _lesson() is not None:
        go(st.session_state[lesson_keys.LESSON_STOP] + by)


def start(lesson, name: str | None, k: int = 0) -> None:
    """Run ``lesson`` (``name``: its shipped name, None for an upload) from stop ``k``."""
    ss = st.session_state
    page_ui.drop_stop_figures()
    ss.update(
        {
            lesson_keys.LESSON: lesson,
            lesson_keys.LESSON_NAME: name,
            lesson_keys.LESSON_STOP: k,
            lesson_keys.LESSON_MESSAGE: None,
        }
    )
    ss[lesson_keys.LESSON_PROBLEMS] = None
    go(k)


def leave() -> None:
    st.session_state.update(
        {
            lesson_keys.LESSON: None,
            lesson_keys.LESSON_NAME: None,
            lesson_keys.LESSON_STOP: 0,
            lesson_keys.LESSON_GOTO: False,
        }
    )
    st.query_params.clear()


def keep_in_url() -> None:
    """Keep ``?lesson=…&stop=k`` (and ``teacher``) in the address bar while a shipped lesson runs.
    Streamlit drops a page's query parameters when the top bar switches pages, so a teacher who
    wandered to another page and reloaded lost the lesson. Other parameters (a share link's, an
    exercise's) stay; set only when it differs, as each change is one more message to the browser. A share
    link in the bar is left as written (``ui.share_link_in_url``)."""
    ss = st.session_state
    if not ss[lesson_keys.LESSON_NAME] or share_link_in_url():
        return
    want = link_params(for_students=True)
    if ss[lesson_keys.LESSON_TEACHER]:
        want["teacher"] = "1"
    if any(st.query_params.get(k) != v for k, v in want.items()):
        st.query_params.update(want)
    if not ss[lesson_keys.LESSON_TEACHER] and "teacher" in st.query_params:  # the sidebar's toggle turned it off
        del st.query_params["teacher"]


def from_url() -> None:
    """Once per session: a lesson link (``?lesson=fifteen-minutes&stop=3&teacher=1``) starts that
    stop. A malformed value is named in a note; what can be used still is."""
    ss = st.session_state
    if lesson_keys.LESSON_URL_READ in ss:
        return
    ss[lesson_keys.LESSON_URL_READ] = True
    params, notes = frame.first_address(), []
    if "teacher" in params:
        if params["teacher"] in ("0", "1"):
            ss[lesson_keys.LESSON_TEACHER] = params["teacher"] == "1"
        else:
            notes.append("teacher= takes 0 or 1")
    name, stop = params.get("lesson"), params.get("stop")
    if name is not None:
        if name in shipped_lessons():
            lesson = shipped(name)
            n, k = len(lesson.stops), 0
            if stop is not None:
                if re.fullmatch(r"[0-9]{1,4}", stop) and 1 <= int(stop) <= n:  # not "²": isdigit() says yes
                    k = int(stop) - 1
                else:
                    notes.append(f"stop= must be a stop of this lesson, 1 … {n}: it opens at stop 1")
            start(lesson, name, k)
        else:
            notes.append(f"lesson= names no shipped lesson (there are: {', '.join(shipped_lessons())})")
    elif stop is not None:
        notes.append("stop= needs lesson=… beside it")
    if notes:
        frame.note_ignored(notes)
