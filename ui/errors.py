"""No traceback on any page: the handler ``main.py`` gives ``st.App(on_script_error=…)``, streamlit's public hook
for an exception a page or a widget's callback raised. The page shows a plain sentence and a short reference;
the traceback goes to the server's log under the same reference, never to a screen (it names the server's files)."""

from __future__ import annotations

import logging
import secrets

import streamlit as st

from core.classroom.rules import StoreUnavailable

LOG = logging.getLogger("inference_explainer")
LOST_CLASS = "Lost the connection to the class: retrying…"  # the class store is down; the page resumes by itself


def on_script_error(exc: BaseException) -> bool:
    """Say what happened in a sentence, log the traceback, and return True (streamlit then shows nothing else)."""
    ref = secrets.token_hex(4)
    LOG.error("page error %s: %s", ref, type(exc).__name__, exc_info=exc)
    if isinstance(exc, StoreUnavailable):
        st.warning(LOST_CLASS, icon=":material/sync_problem:")
    else:
        st.error(
            "Something went wrong on this page and it stopped here. Reload the page to start it again; "
            f"if it happens again, tell whoever runs this server the reference {ref} (the details are in its log).",
            icon=":material/error:",
        )
    return True
