"""The frame: page config, the shared sidebar (model card), navigation over app_pages/ (one script per page), and
the modes (presenter, lesson, class: ``ui.modes``) around the page, phase by phase."""

from pathlib import Path

import streamlit as st

from serve import gc_freeze
from serve.version import app_version
from ui import modes, practice_saved, session
from ui.frame import (
    navigation_pages,
    note_lost_session,
    sidebar_controls,
    sidebar_model_card,
    track_page,
    url_notes,
)

st.set_page_config(
    page_title="Inference, efficiently",
    # A file shipped in assets/: a material-icon favicon is fetched from the web (offline: none).
    page_icon=str(Path(__file__).parent / "assets" / "icon.png"),
    layout="wide",
    # The pages are in the top bar; the sidebar (presenter toggle, model card) starts closed so every
    # page gets the full width of a laptop screen.
    initial_sidebar_state="collapsed",
    menu_items={"About": f"**Inference, efficiently** {app_version()}: an interactive explainer of LLM inference."},
)
note_lost_session()
session.init_state()
modes.from_url()
modes.style()

nav = st.navigation(navigation_pages(), position="top")
track_page(nav)
modes.before_page(nav)
sidebar_controls()
modes.sidebar()
sidebar_model_card()
practice_saved.keep()  # the Practice attempts this browser kept, back in a fresh session (a reload, a shared link)
modes.above_page(nav)
url_notes()  # after the lesson bar: a lesson link switches page first, and its notes must survive that
modes.keep_in_url()  # after the bar's page switch, which clears the address bar's parameters
nav.run()
modes.after_page(nav)
gc_freeze.settle()  # after a run that imported modules: freeze them, so full GC passes skip them
