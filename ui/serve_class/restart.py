"""An engine restart said on every page (issue 56): a session that has used the class engine (it holds its room's
state) hears the engine's pulse above any other page too, in a fragment that the pulse reruns only when the engine
restarted (``frontend/serve_pulse.js``, epoch only); it then says so there, with a link back to Serve the class.
The Serve page says it itself, in its room view."""

from __future__ import annotations

import streamlit as st

from ui.frame import TITLES
from ui.serve_class import client, keys

SERVE_PAGE = "app_pages/serve_class.py"
RESTART_KEY = "serve-restart"  # the notice's container (its CSS class: st-key-serve-restart)
RESTARTED = "The class engine restarted: requests sent before it are gone. Press Send again."
ELSEWHERE = "The class engine restarted: a request you sent before it is gone. Send it again on Serve the class."


def notice(nav, code: str | None) -> None:
    """Above page ``nav`` (a ``st.Page``; None: the page is unchanged): for a session that has used the engine,
    listen for its restart (in class ``code``'s room; None: this browser's own) and say it, unless ``nav`` is Serve
    the class."""
    if st.session_state[keys.SERVE_STATE] is None or getattr(nav, "title", None) == TITLES["serve_class"]:
        return
    _listen(code)


@st.fragment
def _listen(code: str | None) -> None:
    # keyed: assets/style/a11y.css folds the fragment away until it says something (a page's first screen is
    # measured in presenter mode, and an empty fragment's block still took a gap above the title)
    with st.container(key=RESTART_KEY):
        client.pulse(code, epoch_only=True)
        if st.session_state[keys.SERVE_RESTARTED]:
            st.warning(ELSEWHERE, icon=":material/restart_alt:")
            st.page_link(SERVE_PAGE, label="Serve the class", icon=":material/dns:")
