"""Prefill & decode: type a prompt, prefill, then step one token at a time (the stage)."""

import streamlit as st

import turns
import ui
import ui_decode as D
import ui_decode_widgets as W
import ui_models
import ui_question as Q
import ui_stage as V
from core import state as K
from core.tokenizer import end_token_id

tok, present = ui_models.chosen_tokenizer(), ui.presenter_mode()
if ui.came_from_another_page():
    V.forget_view()  # the heatmap element was unmounted: draw it whole again
V.stage_style()


@st.fragment(run_every=st.session_state[K.DECODE_PACE] if st.session_state[K.DECODE_PLAYING] else None)
@turns.one_at_a_time  # a class's Steps in line, not all at once (turns.py)
def stage() -> None:
    stepped = st.session_state.pop(D.STEPPED, False)  # a Step click ran before this rerun
    if st.session_state[K.DECODE_PLAYING] and not stepped and D.play_due():
        D.advance()
        if not st.session_state[K.DECODE_PLAYING]:
            st.rerun()  # Play stopped itself (end token, full window): the page's button says Play again
    sess = D.session()
    V.message(sess)
    ended = sess is not None and sess.pending == end_token_id(tok) and not sess.past_end
    step, text, *more = st.columns([1, 5.2, 1.8] if ended else [1, 7], vertical_alignment="center")
    step.button(
        "Step ▸", key="stage-step", on_click=D.step_clicked, disabled=sess is None, width="stretch", shortcut="Right"
    )
    if sess is None:
        return text.info(
            "Press **Prefill** (or P) to run the prompt through the model: the whole lower triangle of "
            "attention appears at once. Then each **Step ▸** (or →) adds one row."
        )
    with text:
        V.text_so_far(sess, tok, (88 if present else 96) - 25 * ended)
    if ended:
        more[0].button(
            "Continue past the end token",
            on_click=D.continue_past_end,
            help="The model chose the end token: a server would stop here. Stepping on feeds it back in.",
        )
    head, predicting = st.session_state[K.DECODE_HEAD], st.session_state[K.DECODE_PREDICT]
    # On a projector, or under a lesson's bar (which takes ~100 px of a laptop's 800), the question runs across
    # the stage: beside the panel it pushed the work counts, the badge and the KV line off the screen.
    if across := predicting and (present or st.session_state[K.LESSON] is not None):
        Q.question_panel(present, across=True)
    # Under a laptop's question row, a wider panel wraps the KV and shelf lines less: they stay on the screen.
    left, right = st.columns([3, 2] if present else [9, 11] if across else [11, 9], gap="medium")
    with left:
        layer = st.session_state[K.DECODE_LAYER]
        V.heatmap_panel(sess, tok, layer, D.head_of(head), D.head_label(head), present, compact=across)
    with right:
        if not across:
            Q.question_panel(present)
        V.right_panel(sess, tok, D.model_of(sess), present, compact=predicting)
    V.below_stage(sess, tok)


D.replay_link()
# Open, the prompt box takes the room (it was 3 short lines) beside a whole "Head 0 (KV head 0)"; on a 1280-px
# laptop the title wraps then, beside a box taller than its two lines. Closed, the prompt is a button.
widths = [1.3, 2.6, 1.85, 0.8] if W.prompt_open() else [1.55, 1.15, 2.3, 0.9]
title, prompt, view, more = st.columns(widths, vertical_alignment="center")
with title:
    ui.title("decode")
with prompt:
    W.prompt_box(present)
with view:
    W.view_picker((D.model_of(D.session()) if D.session() else ui_models.chosen_model()).cfg)
with more:
    W.settings()
W.controls()
stage()
st.caption(
    "Prefill reads the whole prompt in one parallel pass and fills the KV cache; each decode step consumes one "
    "chosen token, computes one new attention row and reads every earlier key and value from the cache "
    "(Ch. 19 “Two speeds, one model”, Ch. 30 §30.2). Keys: P prefills, → steps, K plays or pauses, 1–5 answer."
)
