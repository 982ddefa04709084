"""Lesson mode's two components-v2 elements, each registered once, at import: ``_scroll`` (frontend/
lesson_scroll.js: brings a stop's main figure into view, closes the sidebar at the start) and
``_clicker`` (frontend/clicker.js: the key listener behind PageDown / PageUp, → / ←), installed in a
tab by ``clicker``. Their code is served with the stage's modules (``ui.static``).
"""

from __future__ import annotations

import streamlit as st

from ui import static
from ui.lesson import keys as lesson_keys

# Served with the stage's modules (ui.static: static/stage-<hash>/), so a rerun does not resend it.
_scroll = st.components.v2.component(
    "explainer_lesson_scroll", js=static.loader("lesson_scroll.js"), isolate_styles=False
)
# The clicker (frontend/clicker.js): one keydown listener per browser tab, so PageDown / PageUp, → / ←, P and K
# reach the lesson and the stage whatever control was touched last, and no press is lost while a page runs.
_clicker = st.components.v2.component("explainer_clicker", js=static.loader("clicker.js"), isolate_styles=False)


def clicker(key: str) -> None:
    """Install the clicker's key listener in this browser tab (once; a hidden element)."""
    with st.container(key=f"{lesson_keys.CLICKER}-{key}"):
        _clicker(data={"on": True}, key=f"{lesson_keys.CLICKER}.{key}")
