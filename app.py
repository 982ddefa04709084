"""The frame: page config, the shared sidebar (model card), navigation over pages/."""

import streamlit as st

import ui

st.set_page_config(page_title="Inference, efficiently", page_icon="🧮", layout="wide")
ui.init_state()

pages = [
    st.Page("pages/decode.py", title="Prefill & decode", icon="▶️", default=True),
]
nav = st.navigation(pages)
ui.sidebar_model_card()
nav.run()
