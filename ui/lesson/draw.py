"""The lesson's bar, drawn on every page while a lesson runs: its style sheet (``BAR_CSS``), its texts
(``_text``), the bar itself (``bar``: the stop, the question, the moves, the speaker note, the
hidden keys and components) and its menu (``menu``: any stop, the handout, the students' link).
"""

from __future__ import annotations

import html
from dataclasses import asdict

import streamlit as st

from core.lesson.pages import PAGES
from core.text import markdown_literal
from ui import handout, session
from ui.frame import TITLES
from ui.lesson import keys as lesson_keys
from ui.lesson.components import _scroll, clicker
from ui.lesson.moves import _lesson, go, leave, link_params, move
from ui.page import set_slots
from ui.present import style_sheet

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
    if lesson is not None and ss.pop(lesson_keys.LESSON_GOTO, False):
        stop = lesson.stops[ss[lesson_keys.LESSON_STOP]]
        if nav.title != PAGES[stop.page].title:
            st.switch_page(stop.script, query_params=link_params())
    ss[lesson_keys.LESSON_GOTO] = False
    k = ss[lesson_keys.LESSON_STOP]
    set_slots(nav.title, k if lesson is not None and handout.stop_title(lesson, k) == nav.title else None)
    if lesson is None:
        return
    style_sheet(BAR_CSS)
    k, n = ss[lesson_keys.LESSON_STOP], len(lesson.stops)
    stop, on_decode = lesson.stops[k], nav.title == TITLES["decode"]
    keys = "PgDn / PgUp or ← · → is Step" if on_decode else "PgDn / PgUp or → / ←"
    with st.container(key=lesson_keys.LESSON_BAR):
        nav_col, text, tools = st.columns([2.7, 7.6, 2.4], vertical_alignment="center", gap="small")
        with nav_col.container(horizontal=True, gap="small"):
            st.button(
                "←",
                key=lesson_keys.LESSON_PREV,
                on_click=move,
                args=(-1,),
                disabled=k == 0 or ss[lesson_keys.CLASS_LOCKED],
                shortcut="PageUp",
                help=f"Previous stop. Keys: {keys}",
            )
            st.button(
                "→",
                key=lesson_keys.LESSON_NEXT,
                on_click=move,
                args=(1,),
                disabled=k == n - 1 or ss[lesson_keys.CLASS_LOCKED],
                shortcut="PageDown",
                help=f"Next stop. Keys: {keys}",
                type="primary",
            )
        nav_col.caption(keys)
        with text:
            with st.container(key=lesson_keys.LESSON_TITLE):
                _text(f"Stop {k + 1} of {n} · {stop.title}")  # the lesson file's text, shown literally
            ask = stop.question_now(asdict(session.snapshot("practice")))  # "New numbers" changes a Practice stop's
            _text(f"Ask: {ask}")
            if ss[lesson_keys.LESSON_TEACHER] and k + 1 < n:  # the teacher's view (a class's console): what comes next
                st.caption(markdown_literal(f"Next: stop {k + 2} · {lesson.stops[k + 1].title}"))  # the file's text
            if nav.title != PAGES[stop.page].title:  # the class went elsewhere through the top bar
                st.button(
                    f"Back to stop {k + 1}",
                    key=lesson_keys.LESSON_BACK,
                    on_click=go,
                    args=(k,),
                    type="tertiary",
                    icon=":material/undo:",
                )
        with tools, st.container(horizontal=True, gap="small", horizontal_alignment="right"):
            if ss[lesson_keys.LESSON_TEACHER]:
                # Keyed by the stop: a note opened at one stop is a closed popover at the next, so the
                # projector never shows the next stop's answers unasked.
                note = {"icon": ":material/speaker_notes:", "help": "The speaker note (teacher view)"}
                with st.popover("Note", key=f"{lesson_keys.LESSON_NOTE}-{k}", **note):
                    st.text(stop.note)
            with st.popover(
                "", icon=":material/menu:", help="The lesson: go to a stop, download the handout, a link for students"
            ):
                menu(lesson, k)
            st.button(
                "",
                key=lesson_keys.LESSON_LEAVE,
                on_click=leave,
                disabled=ss[lesson_keys.CLASS_LOCKED],  # a following student stays in the teacher's lesson
                icon=":material/close:",
                help="Leave the lesson (the pages keep their settings)",
            )
    with st.container(key=lesson_keys.LESSON_SCROLL):
        close = ss[lesson_keys.LESSON_CLOSE_SIDEBAR]
        ss[lesson_keys.LESSON_CLOSE_SIDEBAR] = False
        _scroll(
            data={"arrival": ss[lesson_keys.LESSON_ARRIVAL], "page": nav.title, "closeSidebar": close},
            key=lesson_keys.LESSON_SCROLL_KEY,
        )
        clicker("lesson")
    if not on_decode and not ss[lesson_keys.CLASS_LOCKED]:  # → / ← are the stage's own keys on the decode page
        with st.container(key=lesson_keys.LESSON_KEYS):
            st.button("next stop", key=lesson_keys.LESSON_RIGHT, on_click=move, args=(1,), shortcut="Right")
            st.button("previous stop", key=lesson_keys.LESSON_LEFT, on_click=move, args=(-1,), shortcut="Left")


def menu(lesson, k: int) -> None:
    """The bar's menu: go to any stop, the handout, the students' link, what the keys do."""
    st.text(lesson.title)
    st.selectbox(
        "Go to stop",
        range(len(lesson.stops)),
        index=k,
        format_func=lambda i: f"{i + 1}. {lesson.stops[i].title}",
        key=f"{lesson_keys.LESSON_JUMP}.{k}",
        on_change=lambda: go(st.session_state[f"{lesson_keys.LESSON_JUMP}.{k}"]),
    )
    handout.download_button(lesson_keys.LESSON_HANDOUT)
    if st.session_state[lesson_keys.LESSON_NAME]:
        query = "&".join(f"{a}={b}" for a, b in link_params(for_students=True).items())
        st.caption("This stop for students (add it to this server's address):")
        st.code(f"/?{query}", language=None)
    else:
        st.caption("Your own lesson file runs in this browser only: a link cannot carry it.")
    st.caption(
        "Keys: PageDown / PageUp (what presenter clickers send) move between stops; so do → / ←, except that on the "
        "decode page → is Step (in predict mode: reveal, then ask); ← always goes back a stop. ✕ leaves the lesson; "
        "the pages keep their settings."
    )
