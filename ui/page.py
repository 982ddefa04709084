"""Page helpers: a chart with its text alternative, a refusal or kept message, a row of buttons,
a Reset callback, the page's title. Not in core/ because it imports streamlit.
"""

from __future__ import annotations

import copy
import html
from collections.abc import Callable

import pandas as pd
import streamlit as st

from core.lesson.pages import PAGES
from core.text import markdown_literal, sentence
from core.viz.table import figure_table
from core.viz.theme import description_of
from ui.frame import TITLES
from ui.present import HIDDEN_UNTIL_REVEAL, answers_hidden, presenter_mode

HANDOUT_FIGURES = "handout.figures"  # {("page", title) | ("stop", k): go.Figure}: main figures as last drawn

HANDOUT_SLOTS = "handout.slots"  # where ui.chart keeps this run's first figure (set before the page runs)

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    HANDOUT_FIGURES: {},
    HANDOUT_SLOTS: (),
}


LONG_DESCRIPTION = 700  # characters: a text alternative longer than this is offered in an expander


def chart(fig, key: str, table: bool = True, present_max_px: int | None = None, states_answer: bool = False) -> None:
    """Draw a figure with the app's own template; in presenter mode with larger fonts.

    Under it, its text alternative: the sentence with the figure's real numbers that its ``core.viz``
    ``fig_*`` function gave it (``describe_*``), shown as text (literally: it may quote typed tokens; past
    ``LONG_DESCRIPTION`` characters in a closed expander, "The figure in words"),
    and, with ``table``, a "Show as table" toggle listing the numbers the figure draws. ``present_max_px``: in
    presenter mode at most this tall, so figure and caption fit the projector's first screen beside the controls.
    ``states_answer``: the words and the table state a lesson stop's answer (does it fit?): on a class's display
    before the reveal they are hidden (``ui.present.answers_hidden``)."""
    if presenter_mode():
        fig.update_layout(font_size=20, hoverlabel_font_size=20, title_font_size=24)
        height = int((fig.layout.height or 450) * 1.25)
        fig.update_layout(height=min(height, present_max_px or height))
    st.plotly_chart(fig, theme=None, key=key)
    keep_figure(fig)
    description = description_of(fig)
    if description is None:
        return
    if states_answer and answers_hidden():
        return st.caption(HIDDEN_UNTIL_REVEAL)
    row = st.container(horizontal=True, vertical_alignment="center", gap="small")
    if len(description) > LONG_DESCRIPTION:  # Figure 30.1's every column: offered, not printed in full
        words = row.expander("The figure in words", key=f"{key}.words")
        words.html(f'<p class="chart-desc">{html.escape(description)}</p>')
    else:
        row.html(f'<p class="chart-desc">{html.escape(description)}</p>')
    if table and row.toggle("Show as table", key=f"{key}.table"):
        st.dataframe(readable_table(figure_table(fig)), hide_index=True)


def readable_table(rows: list[dict]):
    """``rows`` as a DataFrame whose empty cells (a heatmap's masked, future positions) read "—", not
    "None": those columns become text, their numbers written with up to 6 significant digits."""
    df = pd.DataFrame(rows)
    for col in df.columns[df.isna().any()]:
        df[col] = [("—" if pd.isna(v) else f"{v:.6g}" if isinstance(v, float) else str(v)) for v in df[col]]
    return df


def keep_figure(fig) -> None:
    """Keep this run's first figure (the page's main one) where app.py asked (``HANDOUT_SLOTS``),
    for the handout: the figure as the learner left it."""
    for slot in st.session_state.pop(HANDOUT_SLOTS, ()):
        st.session_state[HANDOUT_FIGURES][slot] = fig


def title(page: str) -> None:
    """The page's heading: its name in the navigation (``SECTIONS``)."""
    st.title(TITLES[page])


def too_long(text: str | None, limit: int) -> str | None:
    """The polite refusal for a box's ``text`` longer than ``limit`` characters, or ``None`` when it fits."""
    if text is None or len(text) <= limit:
        return None
    return (
        f"This box takes at most {limit:,} characters, and the text in it is longer: shorten it. "
        "Nothing was computed from it."
    )


PASTE_ROOM = 4  # a box lets through a paste this many times its limit (at least 10,000 characters)


def browser_cap(limit: int) -> int:
    """The ``max_chars`` a box of ``limit`` characters is drawn with. The browser drops a paste longer than
    ``max_chars`` without a word (streamlit's box keeps its old text), so the box lets a paste of several times
    its limit through for the page to refuse in a sentence; streamlit cuts at ``max_chars`` on the server too,
    so a client sending 10 MB still costs one short string."""
    return max(PASTE_ROOM * limit, 10_000) + 1


def text_box(parent, label: str, *, limit: int, area: bool = False, **kwargs) -> str | None:
    """A text input (a text area with ``area``) in ``parent`` (``st``, a column, a form) that takes at most
    ``limit`` characters, or ``None`` after a polite refusal when its text is longer: the caller then does no
    work with it. A paste up to ``browser_cap`` reaches the page and is refused in words; a box with help says
    its limit there too ("At most 100,000 characters.": no help icon is added, it would rename the box for a
    screen reader's label search)."""
    box = parent.text_area if area else parent.text_input
    if kwargs.get("help"):
        kwargs["help"] = f"{kwargs['help']} At most {limit:,} characters."
    text = box(label, max_chars=browser_cap(limit), **kwargs)
    refusal = too_long(text, limit)
    if refusal:
        parent.warning(refusal)
        return None
    return text


def refuse(err, prefix: str = "", level: str = "error") -> None:
    """Show why input was refused, as a sentence: ``refuse(err, "Check the lengths: ")`` shows
    "Check the lengths: every request needs at least 1 position." (``level``: error, warning, info).
    Shown literally (``core.text.markdown_literal``): a message may quote what was typed or what a
    file holds (``'**1**' is not a number``, a header's ``:red[x]``), which must not act as markdown."""
    getattr(st, level)(markdown_literal(sentence(f"{prefix}{err}")))


def set_message(key: str, text, level: str = "warning") -> None:
    """Keep a message for ``show_message`` (callbacks run before the page draws)."""
    st.session_state[key] = (level, markdown_literal(sentence(text)))  # may quote typed text


def show_message(key: str) -> None:
    """Show the message kept under ``key`` (``set_message``), if any."""
    kept = st.session_state.get(key)
    if kept:
        level, text = kept
        getattr(st, level)(text)


def set_slots(page_title: str, stop: int | None) -> None:
    """Before a page runs: its first figure is kept as the page's and, when the page is the running lesson's stop
    ``stop``, as that stop's (for the handout)."""
    st.session_state[HANDOUT_SLOTS] = (("page", page_title), *((("stop", stop),) if stop is not None else ()))


def followable(
    page: str, keys: dict[str, str], defaults: dict
) -> tuple[Callable[[], object], Callable[[object], None]]:
    """A page owner's ``snapshot()`` and ``show(settings)`` (``ui.session``) for page ``page`` whose settings are
    plain session keys (``keys``: {setting: key}, ``defaults``: the owner's ``DEFAULTS``)."""

    def snapshot():
        """The page's settings as this session has them (a class's plan carries them to followers)."""
        return settings_now(page, keys)

    def show(settings) -> None:
        """Show ``settings`` (a lesson stop's, a class's plan's) on the page, before it runs."""
        show_settings(keys, defaults, settings)

    return snapshot, show


def drop_stop_figures() -> None:
    """Forget the lesson stops' figures kept for the handout (a new lesson starts)."""
    ss = st.session_state
    ss[HANDOUT_FIGURES] = {s: f for s, f in ss[HANDOUT_FIGURES].items() if s[0] != "stop"}


def put_back(defaults: dict, keys) -> None:
    """Put ``keys`` back to their ``defaults`` (the owner's ``DEFAULTS``), each a fresh copy."""
    st.session_state.update({k: copy.deepcopy(defaults[k]) for k in keys})


def reset(defaults: dict, *keys: str) -> Callable[[], None]:
    """A callback that puts ``keys`` back to their ``defaults`` (the owner's ``DEFAULTS``; a Reset button)."""
    return lambda: st.session_state.update({k: copy.deepcopy(defaults[k]) for k in keys})


def settings_now(page: str, keys: dict[str, str]):
    """Page ``page``'s typed settings (``core.lesson.pages.PageSpec.settings_type``) as this session has them;
    ``keys``: the owner's {setting: session key}."""
    ss = st.session_state
    return PAGES[page].make({name: ss.get(key) for name, key in keys.items()})


def show_settings(keys: dict[str, str], defaults: dict, settings) -> None:
    """Put typed ``settings`` into this session (a setting left None goes back to its default, so a lesson stop's
    note holds whatever the class did on the page before). For the owner's ``show``, before its page runs."""
    ss = st.session_state
    for name, key in keys.items():
        value = getattr(settings, name)
        ss[key] = copy.deepcopy(defaults[key]) if value is None else value


def button_row(*buttons: tuple[str, Callable[[], None]]) -> None:
    """One row of equal-width buttons (Prefill · Step · Reset and the like); the first is primary.

    Each button is ``(label, callback)``: the callback changes session state, then the page
    reruns once and draws the result."""
    for i, (col, (label, action)) in enumerate(zip(st.columns(len(buttons)), buttons, strict=True)):
        col.button(label, type="primary" if i == 0 else "secondary", on_click=action, width="stretch")


def chart_in(container, fig, key: str, table: bool = True, present_max_px: int | None = None) -> None:
    """``chart`` inside a column or other container."""
    with container:
        chart(fig, key, table, present_max_px)
