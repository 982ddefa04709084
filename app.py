"""The frame: page config, the shared sidebar (model card), navigation over app_pages/ (one script per page)."""

from pathlib import Path

import streamlit as st

from serve import gc_freeze
from serve.version import app_version
from ui import lesson_start, practice_saved
from ui.classroom import follow, link, strip, teacher
from ui.frame import (
    init_state,
    navigation_pages,
    note_lost_session,
    sidebar_controls,
    sidebar_model_card,
    track_page,
    url_notes,
)
from ui.lesson import draw, moves
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
init_state()
# class mode: ?class=new, ?class=CODE (join), &key= (teacher), &seat= (student); first: the lesson rewrites the URL
link.from_url()
moves.from_url()  # lesson mode: ?lesson=…&stop=k
apply_presenter_style()

nav = st.navigation(navigation_pages(), position="top")
track_page(nav)
follow.follow(nav)  # a class's student: the teacher's page, stop, request and step, before any widget
sidebar_controls()
lesson_start.sidebar()
with st.sidebar:
    teacher.panel()
sidebar_model_card()
practice_saved.keep()  # the Practice attempts this browser kept, back in a fresh session (a reload, a shared link)
draw.bar(nav)  # lesson mode: switch to the stop's page before it runs; the bar
strip.strip()  # class mode: the join form, a student's line and question, the teacher's live count
url_notes()  # after the bar: a lesson link switches page first, and its notes must survive that
keep_presenter_in_url()  # after the bar's page switch, which clears the address bar's parameters
moves.keep_in_url()  # the same for a running lesson's stop
link.keep_in_url()  # and a class's code with this browser's key or seat
nav.run()
teacher.publish(nav)  # a class's teacher: the plan students follow, when it changed
gc_freeze.settle()  # after a run that imported modules: freeze them, so full GC passes skip them
