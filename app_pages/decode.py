"""Prefill & decode: type a prompt, prefill, then step one token at a time (the stage)."""

import streamlit as st

from core.lesson.summary import YOU_LL_NEED
from core.model.tokenizer import end_token_id
from serve import step_queue
from ui import cache_demo, models
from ui.classroom import console, follow, identity, strip
from ui.classroom import question as class_question
from ui.decode import actions, question, widgets
from ui.decode import keys as decode_keys
from ui.decode.cache_view import inside_the_cache
from ui.decode.stage import below_stage, forget_view, heatmap_panel, message, right_panel, stage_style, text_so_far
from ui.frame import came_from_another_page
from ui.lesson import keys as lesson_keys
from ui.lesson.components import clicker
from ui.page import refuse, title
from ui.present import presenter_mode

tok, present = models.chosen_tokenizer(), presenter_mode()
if came_from_another_page():
    forget_view()  # the heatmap element was unmounted: draw it whole again
stage_style()


@st.fragment(
    run_every=st.session_state[decode_keys.DECODE_PACE] if st.session_state[decode_keys.DECODE_PLAYING] else None
)
@step_queue.one_at_a_time  # a class's Steps in line, not all at once (serve/step_queue.py)
def stage() -> None:
    if identity.follower():
        strip.live()  # a class's follower: its line, question and the teacher's Steps (the class's stream reruns this)
    stepped = st.session_state.pop(decode_keys.DECODE_STEPPED, False)  # a Step click ran before this rerun
    if st.session_state[decode_keys.DECODE_PLAYING] and not stepped and actions.play_due():
        actions.advance()
        if not st.session_state[decode_keys.DECODE_PLAYING]:
            st.rerun()  # Play stopped itself (end token, full window): the page's button says Play again
    question.settle()  # Predict first on with nothing asked: a cut-short switch callback
    sess = actions.session()
    message(sess)
    ended = sess is not None and sess.pending == end_token_id(tok) and not sess.past_end
    step, text, *more = st.columns([1, 5.2, 1.8] if ended else [1, 7], vertical_alignment="center")
    step.button(
        "Step ▸",
        key=decode_keys.STAGE_STEP,
        on_click=actions.step_clicked,
        disabled=sess is None or follow.locked(),
        width="stretch",
        shortcut="Right",
    )
    if sess is None and follow.locked():
        return text.info("Your teacher has not prefilled a prompt yet: the stage appears here when they do.")
    if sess is None:
        return text.info(
            "Press **Prefill** (or P) to run the prompt through the model: the whole lower triangle of "
            "attention appears at once. Then each **Step ▸** (or →) adds one row."
        )
    with text:
        text_so_far(sess, tok, (88 if present else 96) - 25 * ended)
    if ended:
        more[0].button(
            "Continue past the end token",
            on_click=actions.continue_past_end,
            help="The model chose the end token: a server would stop here. Stepping on feeds it back in.",
        )
    head, predicting = st.session_state[decode_keys.DECODE_HEAD], st.session_state[decode_keys.DECODE_PREDICT]
    # A class's console asks its students: the reveal shows the class's answers, not the teacher's own pick.
    ask = {"class_answers": lambda: class_question.class_answers(console.open_question(sess))}
    ask = ask if identity.role() == "teacher" else {}
    # On a projector, or under a lesson's bar (which takes ~100 px of a laptop's 800), the question runs across
    # the stage: beside the panel it pushed the work counts, the badge and the KV line off the screen.
    if across := predicting and (present or st.session_state[lesson_keys.LESSON] is not None):
        question.question_panel(present, across=True, **ask)
    # Under a laptop's question row, a wider panel wraps the KV and shelf lines less: they stay on the screen.
    left, right = st.columns([3, 2] if present else [9, 11] if across else [11, 9], gap="medium")
    with left:
        layer = st.session_state[decode_keys.DECODE_LAYER]
        heatmap_panel(sess, tok, layer, actions.head_of(head), actions.head_label(head), present, compact=across)
    with right:
        if not across:
            question.question_panel(present, **ask)
        right_panel(sess, tok, actions.model_of(sess), present, compact=predicting)
    below_stage(sess, tok)
    inside_the_cache(sess, tok)  # the stored K and V rows, built only while open
    console.publish()  # a class's teacher: this Step's plan (a Step reruns only this stage)


actions.replay_link()
# Open, the prompt box takes the room (it was 3 short lines) beside a whole "Head 0 (KV head 0)"; on a 1280-px
# laptop the title wraps then, beside a box taller than its two lines. Closed, the prompt is a button.
locked = follow.locked()  # a class's follower: the teacher leads this request (no prompt box, no settings)
widths = [1.3, 2.6, 1.85, 0.8] if widgets.prompt_open() and not locked else [1.55, 1.15, 2.3, 0.9]
heading, prompt, view, more = st.columns(widths, vertical_alignment="center")
with heading:
    title("decode")
with prompt:
    if not locked:
        widgets.prompt_box(present)
with view:
    widgets.view_picker((actions.model_of(actions.session()) if actions.session() else models.chosen_model()).cfg)
with more:
    if not locked:
        widgets.settings()
    clicker("decode")  # the clicker's keys whatever control was touched last (frontend/clicker.js)
if not locked:
    widgets.controls()
stage()
st.caption(
    "Prefill reads the whole prompt in one parallel pass and fills the KV cache; each decode step consumes one "
    "chosen token, computes one new attention row and reads every earlier key and value from the cache "
    "(Ch. 19 “Two speeds, one model”, Ch. 30 §30.2). Keys: P prefills, → steps, K plays or pauses, 1–5 answer."
)
with st.expander("You'll need (Ch. 19): what this chapter builds on"):  # where a learner starts
    st.markdown("\n".join(f"- {item}" for item in YOU_LL_NEED))
# Drawn only while open: building its figure took a third of a class replica's time on every full run.
speeds = st.expander(
    "Two speeds, one model: this prompt's prefill and its first three steps", key=decode_keys.DECODE_TWO_SPEEDS_OPEN,
    on_change="rerun",
)  # fmt: skip
if speeds.open:
    with speeds:
        try:  # the same run as the cache page's, on this page's prompt (drawn from the model, not a picture)
            passes = cache_demo.two_speeds(st.session_state[decode_keys.DECODE_PROMPT])
            cache_demo.two_speeds_chart(passes, key=decode_keys.DECODE_TWO_SPEEDS)
        except ValueError as err:
            refuse(err)
