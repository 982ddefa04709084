"""Prefill & decode: type a prompt, prefill, then step one token at a time (the stage)."""

import streamlit as st

import ui
import ui_decode as D
import ui_models
import ui_stage as V
from core import state as K
from core.tokenizer import end_token_id

tok, present = ui_models.chosen_tokenizer(), ui.presenter_mode()
if ui.came_from_another_page():
    V.forget_view()  # the heatmap element was unmounted: draw it whole again
V.stage_style()


def prompt_box() -> None:
    with st.expander("Prompt", icon=":material/edit:", key=D.PROMPT_OPEN, on_change="rerun"):
        st.text_area(
            "Prompt (any text; it is tokenized byte by byte if needed)",
            key=K.DECODE_PROMPT,
            persist_state="session",
            height=110 if present else 96,
            max_chars=K.MAX_PROMPT_CHARS,
        )


def settings() -> None:
    with st.popover(
        "Settings",
        icon=":material/tune:",
        help="Sampling, precision, weights and Play pace; they apply at the next Prefill.",
        width="stretch",
    ):
        a, b = st.columns(2)
        a.radio("Precision", ["float32", "float64"], key=K.DECODE_DTYPE, persist_state="session", horizontal=True)
        a.radio(
            "Weights",
            [None, 8, 4, 3, 2],
            key=K.DECODE_WEIGHT_BITS,
            persist_state="session",
            horizontal=True,
            format_func=lambda b: "float" if b is None else f"{b}-bit",
            help="Weight-only quantization, groups of 32.",
        )
        a.radio("Choose the next token by", ["greedy", "sample"], key=K.DECODE_STRATEGY, persist_state="session")
        greedy = st.session_state[K.DECODE_STRATEGY] == "greedy"
        b.slider("Temperature", 0.1, 2.0, step=0.1, key=K.DECODE_TEMPERATURE, persist_state="session", disabled=greedy)
        b.slider("Top-k (0 = all tokens)", 0, 100, key=K.DECODE_TOP_K, persist_state="session", disabled=greedy)
        b.number_input("Seed", 0, 2**31 - 1, step=1, key=K.DECODE_SEED, persist_state="session")
        st.slider("Play pace (seconds per token)", 0.2, 2.0, step=0.1, key=K.DECODE_PACE, persist_state="session")


def view_picker(cfg) -> None:
    """Layer and head of the heatmap (outside the stage: a change draws the figure whole anyway)."""
    lc, hc = st.columns([1, 1.5])
    lc.selectbox(
        "Layer",
        range(cfg.n_layer),
        key=K.DECODE_LAYER,
        persist_state="session",
        label_visibility="collapsed",
        format_func=lambda x: f"Layer {x}",
    )
    group = cfg.n_head // cfg.n_kv_head
    hc.selectbox(
        "Head",
        [K.MEAN_HEADS, *range(cfg.n_head)],
        key=K.DECODE_HEAD,
        persist_state="session",
        label_visibility="collapsed",
        format_func=lambda h: "Mean over heads" if h == K.MEAN_HEADS else f"Head {h} (KV head {h // group})",
    )


def controls(sess) -> None:
    """The stage's own buttons: inside its fragment, so a Step reruns only the stage."""
    playing = st.session_state[K.DECODE_PLAYING]
    c = st.columns([1, 1, 1, 0.9, 1.5, 2.6], vertical_alignment="center")
    c[0].button("Prefill", type="primary", on_click=D.prefill, width="stretch", shortcut="P")
    c[1].button("Step ▸", on_click=D.advance, disabled=sess is None, width="stretch", shortcut="Right")
    if c[2].button("Pause ❚❚" if playing else "Play ▶", disabled=sess is None, width="stretch", shortcut="K"):
        D.toggle_play()
        st.rerun()  # Play started or stopped: the fragment's timer is set by a full run
    c[3].button("Reset", on_click=D.reset, width="stretch")
    c[4].toggle(
        "Predict first",
        key=K.DECODE_PREDICT,
        persist_state="session",
        on_change=D.predict_toggled,
        help="Before each step, a question; → reveals the answer, the next → asks again. Answer with 1–5.",
    )


@st.fragment(run_every=st.session_state[K.DECODE_PACE] if st.session_state[K.DECODE_PLAYING] else None)
def stage() -> None:
    if st.session_state.pop(D.RERUN_APP, False):
        st.rerun()  # Prefill closed the prompt box, which is outside this fragment
    if st.session_state[K.DECODE_PLAYING]:
        D.advance()
    sess = D.session()
    controls(sess)
    V.message(sess)
    if sess is None:
        return st.info(
            "Press **Prefill** (or P) to run the prompt through the model: the whole lower triangle of "
            "attention appears at once. Then each **Step ▸** (or →) adds one row."
        )
    ended = sess.pending == end_token_id(tok) and not sess.past_end
    text, more = st.columns([5, 1.3] if ended else [1, 0.001], vertical_alignment="center")
    with text:
        V.text_so_far(sess, tok, (100 if present else 110) - 25 * ended)
    if ended:
        more.button(
            "Continue past the end token",
            on_click=D.continue_past_end,
            help="The model chose the end token: a server would stop here. Stepping on feeds it back in.",
        )
    head, predicting = st.session_state[K.DECODE_HEAD], st.session_state[K.DECODE_PREDICT]
    if across := present and predicting:  # on a projector the question runs across the stage
        V.question_panel(present, across=True)
    left, right = st.columns([3, 2] if present else [11, 9], gap="medium")
    with left:
        layer = st.session_state[K.DECODE_LAYER]
        V.heatmap_panel(sess, tok, layer, D.head_of(head), D.head_label(head), present, compact=across)
    with right:
        if not across:
            V.question_panel(present)
        V.right_panel(sess, tok, D.model_of(sess), present, compact=predicting)
    V.below_stage(sess, tok)


D.replay_link()
title, prompt, view, more = st.columns([1.55, 1.75, 1.7, 0.9], vertical_alignment="center")
with title:
    ui.title("decode")
with prompt:
    prompt_box()
with view:
    view_picker((D.model_of(D.session()) if D.session() else ui_models.chosen_model()).cfg)
with more:
    settings()
stage()
st.caption(
    "Prefill reads the whole prompt in one parallel pass and fills the KV cache; each decode step consumes one "
    "chosen token, computes one new attention row and reads every earlier key and value from the cache "
    "(Ch. 19 “Two speeds, one model”, Ch. 30 §30.2). Keys: P prefills, → steps, K plays or pauses, 1–5 answer."
)
