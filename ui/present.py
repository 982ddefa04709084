"""Presenter mode and the app's own style sheets: larger text for a projector (``?present=1``), the
address bar that keeps it, and the note on a screen narrower than its layout.
"""

from __future__ import annotations

import streamlit as st

from core.model import shipped as assets

PRESENT = "ui.present"  # presenter mode: larger text and figures, fewer controls

ANSWERS_HIDDEN = "answers.hidden"  # bool: the display hides this lesson stop's answer lines until the reveal

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    PRESENT: False,
    ANSWERS_HIDDEN: False,
}


# The app's own style sheets, read once at start-up (never a path from a user).
A11Y_CSS = (assets.ASSETS / "style" / "a11y.css").read_text(encoding="utf-8")
PRESENTER_CSS = (assets.ASSETS / "style" / "presenter.css").read_text(encoding="utf-8")


def presenter_mode() -> bool:
    return bool(st.session_state.get(PRESENT))


def turn_on() -> None:
    """Presenter mode on (``?present=1``; a class's display), before the page runs."""
    st.session_state[PRESENT] = True


def hide_answers(hidden: bool) -> None:
    """Hide (or show) the lines that state a lesson stop's answer on this page (a class's display)."""
    st.session_state[ANSWERS_HIDDEN] = hidden


def answers_hidden() -> bool:
    """Whether this page hides the lines that state the answer to the lesson stop's question: a class's display
    before the teacher's reveal (``ui.classroom.display`` sets it each run). A page draws those lines only when
    this is False."""
    return bool(st.session_state.get(ANSWERS_HIDDEN))


HIDDEN_UNTIL_REVEAL = "Hidden on the display until your teacher reveals the answer."


def share_link_in_url() -> bool:
    """Whether the address bar holds a share link (``core.decode.share.link_for`` always writes ``step``). The
    page says "copy it from there": nothing may add to it, or the students' link would open the
    teacher's presenter mode or lesson view."""
    return "step" in st.query_params


def keep_presenter_in_url() -> None:
    """Keep ``?present=1`` in the address bar exactly while presenter mode is on. Streamlit drops
    a page's query parameters when the menu switches pages, so without this a teacher who reloads
    the projected tab after moving on lands back in laptop mode. Set only when it differs: each
    change is one more message to the browser. A share link in the bar is left as written."""
    if share_link_in_url():
        return
    on = presenter_mode()
    if on and st.query_params.get("present") != "1":
        st.query_params["present"] = "1"
    elif not on and "present" in st.query_params:
        del st.query_params["present"]


def apply_presenter_style() -> None:
    """The app's accessibility style on every page (``assets/style/a11y.css``) and, in presenter mode,
    larger text for a projector (``presenter.css``). The CSS is the app's own file, never user text."""
    style_sheet(A11Y_CSS + (PRESENTER_CSS if presenter_mode() else ""))
    if presenter_mode():  # shown by presenter.css only on a screen narrower than the layout's 1920 px
        st.markdown(f'<div class="present-narrow-note" role="note">{NARROW_NOTE}</div>', unsafe_allow_html=True)


# Presenter mode's larger text is laid out for a 1920 × 1080 screen; on a 1280 × 800 projector controls were cut
# ("Setti…", "Predict f…") and the stage ran below the screen. The laptop layout fits that screen, and so does
# presenter mode at the browser's 67 % zoom (a 1920-px-wide page). The app's own text, never user input.
NARROW_NOTE = (
    "This screen is narrower than presenter mode's 1920 × 1080 layout, so parts of the page are cut off. "
    "Zoom the browser out (Ctrl + −, to 67 % on a 1280-pixel-wide screen) until this note disappears, or turn "
    "<b>Presenter mode</b> off in the sidebar (») for the laptop layout, which fits 1280 × 800."
)


def style_sheet(css: str) -> None:
    """Put the app's own CSS (never user text) on the page, in a markdown element rather than st.html: streamlit
    draws markdown with the page's first text, while st.html's component is loaded on first use and on a fresh
    tab was drawn 3–4 s after the page's text (a reloaded projector tab showed laptop-size text meanwhile).
    a11y.css folds the empty element away so it leaves no gap."""
    st.markdown(f"<style>\n{css.strip()}\n</style>", unsafe_allow_html=True)


def beside(widths: tuple[float, float] = (1, 2)) -> tuple:
    """(controls, figure): in presenter mode two columns, compact controls left and the figure right, so a page's
    figure is on the projector's first 1920 × 1080 screen (issue 37: under full-width controls and text it started
    at 770–2,850 px); on a laptop two boxes one under the other, the layout as it was."""
    if presenter_mode():
        return tuple(st.columns(widths, gap="large"))
    return st.container(), st.container()


def swapped(parent=None) -> tuple:
    """(a, b): two boxes in ``parent`` (default: the page), a above b on a laptop and b above a in presenter mode,
    where the figure (b) goes before the text that leads up to it."""
    parent = parent if parent is not None else st.container()
    first, second = parent.container(), parent.container()
    return (second, first) if presenter_mode() else (first, second)


def button_rows(buttons: list, per_row: int) -> None:
    """``ui.button_row``'s ``(label, callback)`` buttons, ``per_row`` to a row, the first primary. Presenter mode's
    narrow control column cut four in a row to "Prefill th…", "Step ▸ (o…"; a laptop keeps one row (per_row = all)."""
    for i in range(0, len(buttons), per_row):
        row = buttons[i : i + per_row]
        for j, (col, (label, action)) in enumerate(zip(st.columns(per_row), row, strict=False)):
            col.button(label, type="primary" if i + j == 0 else "secondary", on_click=action, width="stretch")
