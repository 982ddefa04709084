"""The frame: page config, the shared sidebar (model card), navigation over app_pages/ (one script per page)."""

from pathlib import Path

import streamlit as st

from serve import gc_freeze
from serve.version import app_version
from ui import practice_saved, session
from ui.classroom import console, display, identity, strip
from ui.frame import (
    navigation_pages,
    note_lost_session,
    sidebar_controls,
    sidebar_model_card,
    track_page,
    url_notes,
)
from ui.lesson import draw, moves
from ui.lesson import start as lesson_start
from ui.present import apply_presenter_style, keep_presenter_in_url

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
# class mode: ?class=new (start), ?class=CODE (the role this browser's cookies give), &view=display (the projector)
identity.from_url()
moves.from_url()  # lesson mode: ?lesson=…&stop=k
apply_presenter_style()

nav = st.navigation(navigation_pages(), position="top")
track_page(nav)
strip.before_page(nav)  # a follower: the teacher's page, stop, request and step; a console: its class taken back
display.setup()  # the projector's display: presenter size, no sidebar, answers hidden until the reveal
sidebar_controls()
lesson_start.sidebar()
with st.sidebar:
    strip.sidebar()
sidebar_model_card()
practice_saved.keep()  # the Practice attempts this browser kept, back in a fresh session (a reload, a shared link)
draw.bar(nav)  # lesson mode: switch to the stop's page before it runs; the bar
strip.strip(nav)  # class mode: the join form or start panel; the console's class bar; a follower's line
url_notes()  # after the bar: a lesson link switches page first, and its notes must survive that
keep_presenter_in_url()  # after the bar's page switch, which clears the address bar's parameters
moves.keep_in_url()  # the same for a running lesson's stop
identity.keep_in_url()  # and a class's code (never a key or a seat: those are this browser's cookies)
nav.run()
console.publish(nav)  # a class's teacher: the plan its followers show, when it changed
gc_freeze.settle()  # after a run that imported modules: freeze them, so full GC passes skip them
