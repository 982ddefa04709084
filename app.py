"""The frame: page config, the shared sidebar (model card), navigation over lessons/ (one script per page)."""

from pathlib import Path

import streamlit as st

import ui

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
ui.apply_presenter_style()

pages = {
    "Decode": [
        st.Page("lessons/decode.py", title="Prefill & decode", icon=":material/play_arrow:", default=True),
        st.Page("lessons/worked.py", title="The worked example", icon=":material/calculate:"),
        st.Page("lessons/context.py", title="The context window", icon=":material/width_full:"),
        st.Page("lessons/latency.py", title="Latency on a timeline", icon=":material/timer:"),
        st.Page("lessons/batching.py", title="Batching", icon=":material/stacks:"),
        st.Page("lessons/speculative.py", title="Speculative decoding", icon=":material/fast_forward:"),
        st.Page("lessons/paged.py", title="Paged KV cache", icon=":material/grid_view:"),
    ],
    "Cost & memory": [
        st.Page("lessons/cost.py", title="The bill per token", icon=":material/show_chart:"),
        st.Page("lessons/memory.py", title="KV-cache memory", icon=":material/memory:"),
        st.Page("lessons/weights.py", title="Weights & model cards", icon=":material/balance:"),
    ],
    "Quantization": [
        st.Page("lessons/quantize.py", title="The quantization ruler", icon=":material/straighten:"),
        st.Page("lessons/quant_model.py", title="Quantizing the model", icon=":material/compress:"),
    ],
    "Practice": [st.Page("lessons/practice.py", title="Practice", icon=":material/quiz:")],
}
nav = st.navigation(pages, position="top")
ui.track_page(nav)
ui.sidebar_controls()
ui.url_notes()
ui.sidebar_model_card()
nav.run()
