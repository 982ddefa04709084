"""Lesson mode: a guided lesson (``core.lesson.stops``) run over the app's pages. A slim bar on every page
says "stop k of n · title" and the question to ask, offers the speaker note in the teacher view
(``?teacher=1``), moves between stops (buttons; PageDown / PageUp, and → / ← off the decode page,
where → is Step), downloads the handout and leaves the lesson. Streamlit glue, called from app.py.

Moving to a stop writes its settings into session state (``Stop.state_updates``; the settings a
page could take but the stop leaves out go back to their defaults) and, in the next run before any
page widget exists, switches to the stop's page. A decode stop with ``step`` starts a fresh request
that ``ui.decode.actions.replay_link`` prefills and replays. The address carries ``?lesson=…&stop=k`` for
shipped lessons, so a teacher can share a link that opens a stop.
"""

from __future__ import annotations

import copy
import html
import re

import streamlit as st

import ui
from core import state
from core.lesson.pages import PAGES
from core.lesson.stops import load_shipped, shipped_lessons
from ui import handout, static
from ui.decode import actions

# Served with the stage's modules (ui.static: static/stage-<hash>/), so a rerun does not resend it.
_scroll = st.components.v2.component(
    "explainer_lesson_scroll", js=static.loader("lesson_scroll.js"), isolate_styles=False
)
# The clicker (frontend/clicker.js): one keydown listener per browser tab, so PageDown / PageUp, → / ←, P and K
# reach the lesson and the stage whatever control was touched last, and no press is lost while a page runs.
_clicker = st.components.v2.component("explainer_clicker", js=static.loader("clicker.js"), isolate_styles=False)
BAR_CSS = """
.st-key-lesson-bar { background: #f0f2f6; border-radius: 0.5rem; padding: 0.3rem 0.6rem; gap: 0.2rem; }
/* The bar takes the room above the title that streamlit leaves empty. */
[data-testid="stMainBlockContainer"] { padding-top: 3.6rem !important; }
.st-key-lesson-bar [data-testid="stCaptionContainer"] { margin-top: -0.4rem; }
.st-key-lesson-bar .lesson-text { line-height: 1.35; font-size: 1.05rem; margin: 0; }
.st-key-lesson-title .lesson-text { font-weight: 600; }
/* The bar shows once the clicker's keys work (frontend/clicker.js marks the page): on a fresh tab its text came
   ~2 s before its buttons and keys (8 s on a loaded machine), and a PageDown pressed at the sight of it was lost.
   Its texts are markdown (_text), drawn with this style sheet: as st.text they showed ~1 s before this rule
   arrived. Shown after 20 s anyway (the clicker's code could not load: static/ missing). */
html:not(.clicker-ready) .st-key-lesson-bar { visibility: hidden; animation: lesson-bar-show 0s linear 20s forwards; }
@keyframes lesson-bar-show { to { visibility: visible; } }
/* The hidden keys and components, and their rows too: an empty row still took a gap (21 px, presenting). */
.st-key-lesson-keys, .st-key-lesson-scroll { display: none; }
[data-testid="stLayoutWrapper"]:has(> .st-key-lesson-keys, > .st-key-lesson-scroll) { display: none; }
/* The decode stop: presenting, the stage is one screen without a lesson; under the bar it was 87 px taller than the
   screen, so the stop scrolled 95 px once its heatmap was drawn (seconds after arriving) and the title row, with
   Layer and Head, went under the bar (issue 37, item 9). Closer rows and a slimmer text line beside Step give back
   most of that room, the heatmap the rest (frontend/attention_heatmap.js). */
[data-testid="stMain"]:has(.st-key-clicker-decode)
  [data-testid="stMainBlockContainer"] > [data-testid="stVerticalBlock"],
[data-testid="stMain"]:has(.st-key-clicker-decode) [data-testid="stVerticalBlock"]:has(
  > [data-testid="stLayoutWrapper"] > [data-testid="stHorizontalBlock"] > [data-testid="stColumn"] .st-key-stage-step) {
  gap: 0.5rem; }
[data-testid="stMain"]:has(.st-key-clicker-decode) [data-testid="stHorizontalBlock"]:has(.st-key-stage-step) pre {
  padding-top: 0.4rem; padding-bottom: 0.4rem; }
/* The bar stays at the top (under streamlit's 3.75rem header) when the page scrolls. */
[data-testid="stLayoutWrapper"]:has(> .st-key-lesson-bar) { position: sticky; top: 3.75rem; z-index: 99; }
"""


@st.cache_resource
def shipped(name: str):
    """A shipped lesson (``core.lesson.stops.load_shipped``), parsed once and shared read-only."""
    return load_shipped(name)


def _lesson():
    return st.session_state[state.LESSON]


def link_params(k: int | None = None, for_students: bool = False) -> dict:
    """The address of stop ``k`` (default: the one on screen): ``lesson`` and ``stop`` for a
    shipped lesson (an uploaded file cannot travel in a link), plus ``teacher`` and ``present`` as
    on now unless ``for_students``."""
    ss = st.session_state
    out = {}
    if ss[state.LESSON_NAME]:
        out = {"lesson": ss[state.LESSON_NAME], "stop": str((ss[state.LESSON_STOP] if k is None else k) + 1)}
    if not for_students:
        if ss[state.LESSON_TEACHER]:
            out["teacher"] = "1"
        if ss[state.PRESENT]:
            out["present"] = "1"
    return out


def go(k: int) -> None:
    """Move to stop ``k`` (from 0): apply its settings now, switch to its page before it runs."""
    ss, lesson = st.session_state, _lesson()
    if lesson is None:
        return
    k = max(0, min(k, len(lesson.stops) - 1))
    if ss[state.LESSON_STOP] != k and lesson.stops[ss[state.LESSON_STOP]].page == "decode":
        handout.keep_decode_stop(ss[state.LESSON_STOP])
    stop = lesson.stops[k]
    # Settings this stop leaves out go back to their defaults, so the speaker note's numbers hold
    # whatever the class did on the page before.
    for setting in PAGES[stop.page].settings.values():
        if setting.key in state.DEFAULTS:
            ss[setting.key] = copy.deepcopy(state.DEFAULTS[setting.key])
    if stop.page == "latency":  # the chapter's trace as the note has it, not the class's edits of it
        for key in [key for key in ss if str(key).startswith((state.LATENCY_EDITS, "lat.editor."))]:
            del ss[key]
    if stop.page == "decode" and "step" in stop.settings:
        actions.reset()  # a fresh request: the replay prefills it and takes `step` steps
    ss.update(stop.state_updates())
    ss[state.LESSON_STOP], ss[state.LESSON_GOTO] = k, True
    ss[state.LESSON_ARRIVAL] += 1  # the browser scrolls the stop's main figure into view once per arrival
    st.query_params.from_dict(link_params(k))


def move(by: int) -> None:
    """Move ``by`` stops from the one the session is on now, not the one a (possibly stale) bar showed:
    two clicker presses in quick succession go two stops on, never the same move twice."""
    if _lesson() is not None:
        go(st.session_state[state.LESSON_STOP] + by)


def clicker(key: str) -> None:
    """Install the clicker's key listener in this browser tab (once; a hidden element)."""
    with st.container(key=f"clicker-{key}"):
        _clicker(data={"on": True}, key=f"clicker.{key}")


def start(lesson, name: str | None, k: int = 0) -> None:
    """Run ``lesson`` (``name``: its shipped name, None for an upload) from stop ``k``."""
    ss = st.session_state
    ss[state.HANDOUT_FIGURES] = {s: f for s, f in ss[state.HANDOUT_FIGURES].items() if s[0] != "stop"}
    ss.update({state.LESSON: lesson, state.LESSON_NAME: name, state.LESSON_STOP: k, state.LESSON_MESSAGE: None})
    ss[state.LESSON_PROBLEMS] = None
    go(k)


def leave() -> None:
    st.session_state.update(
        {state.LESSON: None, state.LESSON_NAME: None, state.LESSON_STOP: 0, state.LESSON_GOTO: False}
    )
    st.query_params.clear()


def keep_in_url() -> None:
    """Keep ``?lesson=…&stop=k`` (and ``teacher``) in the address bar while a shipped lesson runs.
    Streamlit drops a page's query parameters when the top bar switches pages, so a teacher who
    wandered to another page and reloaded lost the lesson. Other parameters (a share link's, an
    exercise's) stay; set only when it differs, as each change is one more message to the browser. A share
    link in the bar is left as written (``ui.share_link_in_url``)."""
    ss = st.session_state
    if not ss[state.LESSON_NAME] or ui.share_link_in_url():
        return
    want = link_params(for_students=True)
    if ss[state.LESSON_TEACHER]:
        want["teacher"] = "1"
    if any(st.query_params.get(k) != v for k, v in want.items()):
        st.query_params.update(want)
    if not ss[state.LESSON_TEACHER] and "teacher" in st.query_params:  # the sidebar's toggle turned it off
        del st.query_params["teacher"]


def from_url() -> None:
    """Once per session: a lesson link (``?lesson=fifteen-minutes&stop=3&teacher=1``) starts that
    stop. A malformed value is named in a note; what can be used still is."""
    ss = st.session_state
    if "lesson.url_read" in ss:
        return
    ss["lesson.url_read"] = True
    params, notes = st.query_params.to_dict(), []
    if "teacher" in params:
        if params["teacher"] in ("0", "1"):
            ss[state.LESSON_TEACHER] = params["teacher"] == "1"
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
        ss[state.URL_IGNORED] = [*ss.get(state.URL_IGNORED, []), *notes]


# ---- the bar (starting a lesson from the sidebar: ui.lesson_start) --------------------------------


def _text(text: str) -> None:
    """``text`` (a lesson file's, literal) in the bar. Drawn with the bar's style sheet (a markdown element), not
    before it as ``st.text`` was: on a fresh tab the bar's text showed ~1 s before the style that keeps the bar
    hidden until the clicker's keys work, and a PageDown pressed at its sight was lost (issue 37, item 2). An HTML
    block: its escaped text is shown as written, no markdown, icons, colours or math read into it."""
    one_line = " ".join(text.split())
    st.markdown(f'<p class="lesson-text">{html.escape(one_line)}</p>', unsafe_allow_html=True)


def bar(nav) -> None:
    """Every full run, before the page: go to the stop's page if a move asked for it, keep the
    page's first figure for the handout, and draw the bar while a lesson runs."""
    ss, lesson = st.session_state, _lesson()
    if lesson is not None and ss.pop(state.LESSON_GOTO, False):
        stop = lesson.stops[ss[state.LESSON_STOP]]
        if nav.title != PAGES[stop.page].title:
            st.switch_page(stop.script, query_params=link_params())
    ss[state.LESSON_GOTO] = False
    handout.set_slots(nav.title)
    if lesson is None:
        return
    ui.style_sheet(BAR_CSS)
    k, n = ss[state.LESSON_STOP], len(lesson.stops)
    stop, on_decode = lesson.stops[k], nav.title == ui.TITLES["decode"]
    keys = "PgDn / PgUp · → is Step" if on_decode else "PgDn / PgUp or → / ←"
    with st.container(key="lesson-bar"):
        nav_col, text, tools = st.columns([2.7, 7.6, 2.4], vertical_alignment="center", gap="small")
        with nav_col.container(horizontal=True, gap="small"):
            st.button(
                "←",
                key="lesson.prev",
                on_click=move,
                args=(-1,),
                disabled=k == 0 or ss[state.CLASS_LOCKED],
                shortcut="PageUp",
                help=f"Previous stop. Keys: {keys}",
            )
            st.button(
                "→",
                key="lesson.next",
                on_click=move,
                args=(1,),
                disabled=k == n - 1 or ss[state.CLASS_LOCKED],
                shortcut="PageDown",
                help=f"Next stop. Keys: {keys}",
                type="primary",
            )
        nav_col.caption(keys)
        with text:
            with st.container(key="lesson-title"):
                _text(f"Stop {k + 1} of {n} · {stop.title}")  # the lesson file's text, shown literally
            _text(f"Ask: {stop.question_now(ss)}")  # a Practice stop's "New numbers" changes its question
            if nav.title != PAGES[stop.page].title:  # the class went elsewhere through the top bar
                st.button(
                    f"Back to stop {k + 1}",
                    key="lesson.back",
                    on_click=go,
                    args=(k,),
                    type="tertiary",
                    icon=":material/undo:",
                )
        with tools, st.container(horizontal=True, gap="small", horizontal_alignment="right"):
            if ss[state.LESSON_TEACHER]:
                # Keyed by the stop: a note opened at one stop is a closed popover at the next, so the
                # projector never shows the next stop's answers unasked.
                note = {"icon": ":material/speaker_notes:", "help": "The speaker note (teacher view)"}
                with st.popover("Note", key=f"lesson-note-{k}", **note):
                    st.text(stop.note)
            with st.popover(
                "", icon=":material/menu:", help="The lesson: go to a stop, download the handout, a link for students"
            ):
                menu(lesson, k)
            st.button(
                "",
                key="lesson.leave",
                on_click=leave,
                disabled=ss[state.CLASS_LOCKED],  # a following student stays in the teacher's lesson
                icon=":material/close:",
                help="Leave the lesson (the pages keep their settings)",
            )
    with st.container(key="lesson-scroll"):
        close = ss[state.LESSON_CLOSE_SIDEBAR]
        ss[state.LESSON_CLOSE_SIDEBAR] = False
        _scroll(
            data={"arrival": ss[state.LESSON_ARRIVAL], "page": nav.title, "closeSidebar": close}, key="lesson.scroll"
        )
        clicker("lesson")
    if not on_decode and not ss[state.CLASS_LOCKED]:  # → / ← are the stage's own keys on the decode page
        with st.container(key="lesson-keys"):
            st.button("next stop", key="lesson.right", on_click=move, args=(1,), shortcut="Right")
            st.button("previous stop", key="lesson.left", on_click=move, args=(-1,), shortcut="Left")


def menu(lesson, k: int) -> None:
    """The bar's menu: go to any stop, the handout, the students' link, what the keys do."""
    st.text(lesson.title)
    st.selectbox(
        "Go to stop",
        range(len(lesson.stops)),
        index=k,
        format_func=lambda i: f"{i + 1}. {lesson.stops[i].title}",
        key=f"lesson.jump.{k}",
        on_change=lambda: go(st.session_state[f"lesson.jump.{k}"]),
    )
    handout.download_button("lesson.handout")
    if st.session_state[state.LESSON_NAME]:
        query = "&".join(f"{a}={b}" for a, b in link_params(for_students=True).items())
        st.caption("This stop for students (add it to this server's address):")
        st.code(f"/?{query}", language=None)
    else:
        st.caption("Your own lesson file runs in this browser only: a link cannot carry it.")
    st.caption(
        "Keys: PageDown / PageUp (what presenter clickers send) move between stops; so do → / ←, except on the "
        "decode page, where → is Step (in predict mode: reveal, then ask). ✕ leaves the lesson; the pages keep "
        "their settings."
    )
