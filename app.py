"""The frame: page config, the shared sidebar (model card), navigation over lessons/ (one script per page)."""

from pathlib import Path

import streamlit as st

import ui

st.set_page_config(
    page_title="Inference, efficiently",
    # A file shipped in assets/: a material-icon favicon is fetched from the web (offline: none).
    page_icon=str(Path(__file__).parent / "assets" / "icon.png"),
    layout="wide",
    initial_sidebar_state="collapsed" if st.query_params.get("present") == "1" else "auto",
)
ui.init_state()
ui.apply_presenter_style()

pages = [st.Page(path, title=name, icon=icon, default=i == 0) for i, (path, name, icon) in enumerate(ui.PAGES)]
nav = st.navigation(pages)
ui.sidebar_controls()
ui.sidebar_model_card()
nav.run()
