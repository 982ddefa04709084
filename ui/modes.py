"""The frame's modes, in the order they run: presenter mode (a projector's size), lesson mode (a guided lesson's
stops), class mode (a console, a display and students) and the class engine's restart notice. Each mode has a hook
per phase of a full run; ``app.py`` calls each phase once, and the phase runs the modes' hooks in this order, so the
order is code, not comments:

1. ``from_url``: once per session, what the address names (a lesson's stop, a class's code).
2. ``style``: the page's style sheets (after the address: a class's display turns presenter mode on).
3. ``before_page(nav)``: before any page widget exists: a follower shows the teacher's plan.
4. ``sidebar()``: the sidebar's sections (start a lesson, start or pair a class).
5. ``above_page(nav)``: above the page: the lesson bar (it switches to the stop's page first), then the class
   strip (the join form, the console's class bar, a follower's line), then the class engine's restart (a session
   that has used Serve the class hears it on every page).
6. ``keep_in_url()``: each mode's parameters back in the address bar after a page switch cleared them.
7. ``after_page(nav)``: after the page ran: the console publishes its plan when it changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from ui.classroom import console, display, follow, identity, strip
from ui.lesson import draw, moves
from ui.lesson import start as lesson_start
from ui.present import apply_presenter_style, keep_presenter_in_url
from ui.serve_class import restart


def _nothing(*_) -> None:
    return None


@dataclass(frozen=True)
class Mode:
    """A mode's hooks, one per phase (``_nothing`` where the mode has nothing to do)."""

    name: str
    from_url: Callable[[], None] = _nothing
    style: Callable[[], None] = _nothing
    before_page: Callable[[object], None] = _nothing
    sidebar: Callable[[], None] = _nothing
    above_page: Callable[[object], None] = _nothing
    keep_in_url: Callable[[], None] = _nothing
    after_page: Callable[[object], None] = _nothing


def _class_before_page(nav) -> None:
    strip.before_page(nav)  # a follower: the teacher's page, stop, settings, request and step
    display.setup()  # the projector's display: presenter size, no sidebar, answers hidden until the reveal


def _lesson_sidebar() -> None:
    # A follower (a student the teacher leads) is not offered a lesson of its own, nor the speaker notes' switch.
    if not follow.following():
        lesson_start.sidebar()


def _class_sidebar() -> None:
    with st.sidebar:
        strip.sidebar()


def _serve_above_page(nav) -> None:
    restart.notice(nav, identity.code() if identity.role() else None)  # a class's room, else this browser's


MODES = (
    Mode("presenter", style=apply_presenter_style, keep_in_url=keep_presenter_in_url),
    Mode(
        "lesson",
        from_url=moves.from_url,  # ?lesson=…&stop=k
        sidebar=_lesson_sidebar,
        above_page=draw.bar,  # switch to the stop's page before it runs; the bar
        keep_in_url=moves.keep_in_url,
    ),
    Mode(
        "class",
        from_url=identity.from_url,  # ?class=new, ?class=CODE (the role this browser's cookies give), &view=display
        before_page=_class_before_page,
        sidebar=_class_sidebar,
        above_page=strip.strip,
        keep_in_url=identity.keep_in_url,  # a class's code (never a key or a seat: those are the browser's cookies)
        after_page=console.publish,  # a class's teacher: the plan its followers show, when it changed
    ),
    Mode("serve", above_page=_serve_above_page),  # the class engine restarted: said above any page (issue 56)
)


def from_url() -> None:
    for mode in MODES:
        mode.from_url()


def style() -> None:
    for mode in MODES:
        mode.style()


def before_page(nav) -> None:
    for mode in MODES:
        mode.before_page(nav)


def sidebar() -> None:
    for mode in MODES:
        mode.sidebar()


def above_page(nav) -> None:
    for mode in MODES:
        mode.above_page(nav)


def keep_in_url() -> None:
    for mode in MODES:
        mode.keep_in_url()


def after_page(nav) -> None:
    for mode in MODES:
        mode.after_page(nav)


def after_fragment() -> None:
    """After a page's own fragment ran alone (the ruler's controls): the modes' ``after_page`` with the page
    unchanged, so a class's console publishes the settings the fragment changed."""
    for mode in MODES:
        mode.after_page(None)
