"""The decode page's widgets outside the stage: the prompt box, Settings, the layer/head picker and
the controls row. Each takes its key and default from ``ui.decode.keys``; changing one runs the page."""

import streamlit as st

from core.decode import settings as decode_settings
from ui.decode import actions
from ui.decode import keys as decode_keys
from ui.page import text_box


def prompt_open() -> bool:
    """Whether the prompt box is open. First visit, or back from another page (streamlit drops the
    state of a widget its run did not draw): open until a request runs, closed while one does, so
    the stage keeps its room."""
    ss = st.session_state
    if decode_keys.DECODE_PROMPT_OPEN not in ss:
        ss[decode_keys.DECODE_PROMPT_OPEN] = actions.session() is None
    return ss[decode_keys.DECODE_PROMPT_OPEN]


def prompt_box(present: bool) -> None:
    with st.expander("Prompt", icon=":material/edit:", key=decode_keys.DECODE_PROMPT_OPEN, on_change="rerun"):
        text_box(
            st,
            "Prompt (any text; it is tokenized byte by byte if needed)",
            limit=decode_settings.MAX_PROMPT_CHARS,
            area=True,
            key=decode_keys.DECODE_PROMPT,
            persist_state="session",
            height=120,
        )


def settings() -> None:
    # No tooltip: while the pointer rested on the button it covered the open panel's Temperature and float64.
    with st.popover("Settings", icon=":material/tune:", width="stretch"):
        st.caption("Sampling, precision, weights and Play pace: they apply at the next Prefill.")
        a, b = st.columns(2)
        a.radio(
            "Precision", ["float32", "float64"], key=decode_keys.DECODE_DTYPE, persist_state="session", horizontal=True
        )
        a.radio(
            "Weights",
            [decode_settings.FLOAT_WEIGHTS, 8, 4, 3, 2],
            key=decode_keys.DECODE_WEIGHT_BITS,
            persist_state="session",
            horizontal=True,
            format_func=lambda b: "float" if b == decode_settings.FLOAT_WEIGHTS else f"{b}-bit",
            help="Weight-only quantization, groups of 32.",
        )
        a.radio(
            "Choose the next token by", ["greedy", "sample"], key=decode_keys.DECODE_STRATEGY, persist_state="session"
        )
        greedy = st.session_state[decode_keys.DECODE_STRATEGY] == "greedy"
        b.slider(
            "Temperature",
            0.1,
            2.0,
            step=0.1,
            key=decode_keys.DECODE_TEMPERATURE,
            persist_state="session",
            disabled=greedy,
        )
        b.slider(
            "Top-k (0 = all tokens)", 0, 100, key=decode_keys.DECODE_TOP_K, persist_state="session", disabled=greedy
        )
        b.number_input("Seed", 0, 2**31 - 1, step=1, key=decode_keys.DECODE_SEED, persist_state="session")
        st.slider(
            "Play pace (seconds per token)", 0.2, 2.0, step=0.1, key=decode_keys.DECODE_PACE, persist_state="session"
        )


def view_picker(cfg) -> None:
    """Layer and head of the heatmap (outside the stage: a change draws the figure whole anyway)."""
    lc, hc = st.columns([1, 1.5])
    lc.selectbox(
        "Layer",
        range(cfg.n_layer),
        key=decode_keys.DECODE_LAYER,
        persist_state="session",
        label_visibility="collapsed",
        format_func=lambda x: f"Layer {x}",
    )
    group = cfg.n_head // cfg.n_kv_head
    hc.selectbox(
        "Head",
        [decode_settings.MEAN_HEADS, *range(cfg.n_head)],
        key=decode_keys.DECODE_HEAD,
        persist_state="session",
        label_visibility="collapsed",
        format_func=lambda h: (
            "Mean over heads" if h == decode_settings.MEAN_HEADS else f"Head {h} (KV head {h // group})"
        ),
    )


def controls() -> None:
    """Prefill, Play, Reset and Predict first run the whole page (each changes more than the stage).
    Step is the stage's own button: a Step reruns only the stage, and every element in it is
    resent per Step (fewer elements, less server time per Step: bench/stage_speed.py)."""
    playing, none = st.session_state[decode_keys.DECODE_PLAYING], actions.session() is None
    c = st.columns([1, 1, 0.9, 1.5, 1.4, 2.2], vertical_alignment="center")
    prefill = actions.prefill
    c[0].button(
        "Prefill", type="primary", key=decode_keys.DECODE_PREFILL, on_click=prefill, width="stretch", shortcut="P"
    )
    play = "Pause ❚❚" if playing else "Play ▶"
    c[1].button(
        play, key=decode_keys.DECODE_PLAY, on_click=actions.toggle_play, disabled=none, width="stretch", shortcut="K"
    )
    c[2].button("Reset", on_click=actions.reset, width="stretch")
    c[3].toggle(
        "Predict first",
        key=decode_keys.DECODE_PREDICT,
        persist_state="session",
        on_change=actions.predict_toggled,
        help="Before each step, a question; → reveals the answer, the next → asks again. Answer with 1–5.",
    )
    c[4].toggle(
        "Tables",
        key=decode_keys.DECODE_TABLES,
        persist_state="session",
        help="Below the text: the heatmap's newest row and the next-token bars as tables, the numbers they draw.",
    )
