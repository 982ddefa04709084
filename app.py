"""The frame: page config, the shared sidebar (model card), navigation over lessons/ (one script per page)."""

from pathlib import Path

import streamlit as st

import heap
import ui
import ui_lesson
import ui_lesson_start

st.set_page_config(
    page_title="Inference, efficiently",
    # A file shipped in assets/: a material-icon favicon is fetched from the web (offline: none).
    page_icon=str(Path(__file__).parent / "assets" / "icon.png"),
    layout="wide",
    # The pages are in the top bar; the sidebar (presenter toggle, model card) starts closed so every
    # page gets the full width of a laptop screen.
    initial_sidebar_state="collapsed",
)
ui.note_lost_session()
ui.init_state()
ui_lesson.from_url()  # lesson mode: ?lesson=…&stop=k
ui.apply_presenter_style()

pages = {
    section: [st.Page(path, title=name, icon=icon, default=path == "lessons/decode.py") for path, name, icon in entries]
    for section, entries in ui.SECTIONS.items()
}
nav = st.navigation(pages, position="top")
ui.track_page(nav)
ui.sidebar_controls()
ui_lesson_start.sidebar()
ui.sidebar_model_card()
ui_lesson.bar(nav)  # lesson mode: switch to the stop's page before it runs; the bar
ui.url_notes()  # after the bar: a lesson link switches page first, and its notes must survive that
ui.keep_presenter_in_url()  # after the bar's page switch, which clears the address bar's parameters
ui_lesson.keep_in_url()  # the same for a running lesson's stop
nav.run()
heap.settle()  # after a run that imported modules: freeze them, so full GC passes skip them
