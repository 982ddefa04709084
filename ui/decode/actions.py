"""The decode page's actions (Prefill, Step, predict-then-reveal, share links) on this session's
state. Streamlit glue: every number comes from ``core.decode.session`` / ``core.decode.predict``."""

from __future__ import annotations

import time
import urllib.parse

import streamlit as st

from core.decode import predict as prediction
from core.decode import settings as decode_settings
from core.decode import share
from core.decode.generate import SamplingConfig
from core.decode.session import check_due, commit, preview_step, restart, step, step_block_reason
from core.decode.session_types import DecodeSession, ModelKey
from core.model.tokenizer import encode, end_token_id, token_labels, token_text
from serve import step_queue
from ui import models
from ui.decode import keys as decode_keys


def say(level: str, text: str) -> None:
    st.session_state[decode_keys.DECODE_MESSAGE] = (level, text)


def session() -> DecodeSession | None:
    return st.session_state[decode_keys.DECODE_SESSION]


def model_of(sess: DecodeSession):
    """The model this request was prefilled with, whatever the widgets say now."""
    return models.model_for(sess.model_key)


def head_of(value) -> int | None:
    """The selected head as an index, None for the mean over heads."""
    return None if value == decode_settings.MEAN_HEADS else int(value)


def head_label(value) -> str:
    return "mean over heads" if value == decode_settings.MEAN_HEADS else f"head {value}"


def _clear_question() -> None:
    st.session_state.update(
        {decode_keys.DECODE_PENDING_STEP: None, decode_keys.DECODE_QUESTION: None, decode_keys.DECODE_PICK: None}
    )


def prefill() -> None:
    """Prefill the prompt box's text as a new request (reusing the cache where still valid), and
    close the prompt box: the stage needs the room."""
    # A click right after picking a model can cut that choice's rerun short; this callback then runs
    # before the page's own switch, which would drop the request it builds: switch first.
    models.resolve()
    st.session_state[decode_keys.DECODE_PLAYING] = False
    _clear_question()
    st.session_state[decode_keys.DECODE_REVEALED] = None
    text = st.session_state[decode_keys.DECODE_PROMPT]
    if not text.strip():
        return say("warning", "The prompt is empty: type a few words first.")
    ss = st.session_state
    sampling = SamplingConfig(
        ss[decode_keys.DECODE_STRATEGY],
        ss[decode_keys.DECODE_TEMPERATURE],
        ss[decode_keys.DECODE_TOP_K],
        ss[decode_keys.DECODE_SEED],
    )
    bits = ss[decode_keys.DECODE_WEIGHT_BITS] or None  # K.FLOAT_WEIGHTS: float weights (ModelKey says None)
    key = ModelKey(ss[decode_keys.DECODE_DTYPE], bits, models.chosen_source())
    old = session()
    try:
        too_slow = quantize_refusal(key)
        if too_slow:
            raise ValueError(too_slow)
        sess, reuse = restart(models.model_for(key), old, encode(models.chosen_tokenizer(), text), sampling, key, text)
    except ValueError as err:
        return say("error", f"Prefill refused: {err}.")
    ss[decode_keys.DECODE_SESSION], ss[decode_keys.DECODE_MESSAGE] = sess, None
    ss[decode_keys.DECODE_PROMPT_OPEN] = False
    if old is not None:  # say what the cache kept (Ch. 30 §30.4: cache validity)
        n = reuse.reused
        say(
            "info",
            # Short: a toast shows about three lines (the rest behind "view more"); the check against a
            # fresh prefill stands in the stage's badge.
            f"Cache reuse: {n} position{'s' * (n != 1)} kept their keys and values, {reuse.recomputed} recomputed "
            f"(outlined): {reuse.reason}."
            if n
            else f"Whole cache recomputed: {reuse.reason}.",
        )
    if ss[decode_keys.DECODE_PREDICT]:
        ask()


def quantize_refusal(key: ModelKey) -> str | None:
    """Why weight-only quantization of a loaded checkpoint is not offered here, or None: it copies
    and rounds every block weight (about 2 s for 135 M parameters on this machine, and a second
    copy of the model in memory), so past ``QUANTIZE_MAX_PARAMS`` it would stall the page."""
    if key.source is None or key.weight_bits is None:
        return None
    n = models.chosen_model().n_params()
    if n <= QUANTIZE_MAX_PARAMS:
        return None
    return (
        f"quantizing this checkpoint's weights is refused on this page: it has {n:,} parameters, over the "
        f"{QUANTIZE_MAX_PARAMS:,} that round in a few seconds here; choose float weights in Settings"
    )


QUANTIZE_MAX_PARAMS = 400_000_000


def _blocked() -> bool:
    sess = session()
    reason = step_block_reason(sess, end_token_id(models.chosen_tokenizer())) if sess else "Run prefill first."
    if reason:
        st.session_state[decode_keys.DECODE_PLAYING] = False
        say("info", reason)
    return bool(reason)


def _step_now() -> None:
    """One step of the session's request, recomputed without the cache when ``check_due`` says so
    (every step on a quiet server; every 10th while other sessions' steps wait in line, or while the
    last check waited for a core as long as it ran)."""
    sess = session()
    step(model_of(sess), sess, check=check_due(model_of(sess), sess, queued=step_queue.waiting()))


def catch_up(steps: int) -> None:
    """Take up to ``steps`` more decode steps of this session's request (a class's student reaching
    the teacher's step); stops where the request cannot step (its message says why)."""
    for _ in range(steps):
        if session() is None or _blocked():
            return
        _step_now()


def ask() -> None:
    """Compute the next step, hold it back, and put the question about it on screen."""
    if _blocked():
        return
    sess, layer, head = session(), st.session_state[decode_keys.DECODE_LAYER], st.session_state[decode_keys.DECODE_HEAD]
    pending = preview_step(model_of(sess), sess, check=check_due(model_of(sess), sess, queued=step_queue.waiting()))
    tok = models.chosen_tokenizer()
    labels = token_labels(tok, [*sess.consumed, sess.pending])
    q = prediction.ask(
        prediction.kind_for(sess.n_steps + 1),
        sess,
        pending,
        model_of(sess).cfg,
        lambda t: token_text(tok, t),
        labels,
        layer,
        head_of(head),
        head_label(head),
    )
    st.session_state.update(
        {
            decode_keys.DECODE_PENDING_STEP: pending,
            decode_keys.DECODE_QUESTION: q,
            decode_keys.DECODE_PICK: None,
            decode_keys.DECODE_REVEALED: None,
        }
    )


def reveal() -> None:
    """Commit the held-back step; mark the right answer and the learner's pick."""
    ss = st.session_state
    commit(session(), ss[decode_keys.DECODE_PENDING_STEP])
    ss[decode_keys.DECODE_TALLY] = ss[decode_keys.DECODE_TALLY] or prediction.Tally()
    ss[decode_keys.DECODE_TALLY].record(ss[decode_keys.DECODE_QUESTION], ss[decode_keys.DECODE_PICK])
    ss[decode_keys.DECODE_REVEALED] = (ss[decode_keys.DECODE_QUESTION], ss[decode_keys.DECODE_PICK])
    _clear_question()


def advance() -> None:
    """Step (→): a plain step, or in predict mode ask the next question / reveal the open one."""
    ss = st.session_state
    ss[decode_keys.DECODE_REVEALED] = None if not ss[decode_keys.DECODE_PREDICT] else ss[decode_keys.DECODE_REVEALED]
    if ss[decode_keys.DECODE_PREDICT] and ss[decode_keys.DECODE_QUESTION] is not None:
        return reveal()
    if ss[decode_keys.DECODE_PREDICT]:
        return ask()
    if not _blocked():
        _step_now()


def play_due() -> bool:
    """Whether Play should step in this rerun: at most once per pace. Any full run of the page (a
    switch, the layer) also runs the stage; without this, toggling *Tables* four times while
    playing consumed four tokens."""
    ss = st.session_state
    due, ss[decode_keys.DECODE_NEXT_PLAY] = play_schedule(
        time.monotonic(), ss.get(decode_keys.DECODE_NEXT_PLAY, 0.0), ss[decode_keys.DECODE_PACE]
    )
    return due


def play_schedule(now: float, next_due: float, pace: float) -> tuple[bool, float]:
    """Play's clock: whether a rerun at ``now`` (s) steps, and when the next step is due. The browser
    asks for a rerun every ``pace`` s by its own clock, but they reach the server a little early or
    late; the rule this replaces (step only 0.9 pace after the last step) skipped every tick that came
    early after a late one (10 steps in 20 ticks jittered by ±10 %). So steps keep to a grid ``pace``
    apart, a rerun up to a quarter pace early counts, and a grid fallen behind (a slow rerun, a pause)
    restarts from now."""
    if now < next_due - 0.25 * pace:
        return False, next_due
    return True, (next_due + pace if now < next_due + pace else now + pace)


def step_clicked() -> None:
    """Step (→ or the button): advance once, and tell a playing stage that this rerun has stepped
    already (otherwise Play's own step in the same rerun made one press consume two tokens)."""
    st.session_state[decode_keys.DECODE_STEPPED] = True
    advance()


def pick(i: int) -> None:
    st.session_state[decode_keys.DECODE_PICK] = i


def predict_toggled() -> None:
    """Predict mode on: ask about the next step now; off: drop the held-back step (it is
    recomputed identically when needed: the generator state was copied, not advanced)."""
    _clear_question()
    st.session_state[decode_keys.DECODE_REVEALED] = None
    st.session_state[decode_keys.DECODE_PLAYING] = False
    if st.session_state[decode_keys.DECODE_PREDICT] and session() is not None:
        ask()


def reset() -> None:
    st.session_state.update(
        {
            decode_keys.DECODE_SESSION: None,
            decode_keys.DECODE_MESSAGE: None,
            decode_keys.DECODE_PLAYING: False,
            decode_keys.DECODE_REVEALED: None,
        }
    )
    _clear_question()


def toggle_play() -> None:
    ss = st.session_state
    ss[decode_keys.DECODE_PLAYING] = not ss[decode_keys.DECODE_PLAYING]
    ss[decode_keys.DECODE_MESSAGE] = None
    if ss[decode_keys.DECODE_PLAYING] and ss[decode_keys.DECODE_PREDICT]:
        # Play steps on its own: nothing to predict. Said, not done silently (the switch just went off).
        ss[decode_keys.DECODE_PREDICT] = False
        open_question = ss.get(decode_keys.DECODE_QUESTION) is not None
        _clear_question()
        say(
            "info",
            "Predict first is off while Play steps on its own"
            + (": the open question was put away" if open_question else "")
            + ". Pause, then turn it on again to predict.",
        )


def continue_past_end() -> None:
    session().past_end = True
    say(
        "info",
        # Two lines of a projector's toast: longer ones covered the stage's KV caption.
        "Past the end token: it is fed back in as input, and what follows is the model's guess at a new "
        "text (a server would have stopped here).",
    )


def replay_link() -> None:
    """A shared link or a lesson stop with ?step=N: prefill and replay N steps, so the view matches. Runs at the
    top of the page, before any of its widgets exist. The target is kept until it is reached: a run cut short
    mid-replay (a rerun asked for meanwhile, on a busy machine) goes on from the step it reached in the next run
    (it stalled there: the lesson's stop 2 stayed at step 3 of 11)."""
    ss = st.session_state
    steps = ss.get(decode_keys.URL_STEP)
    if steps is None:
        return
    predict, ss[decode_keys.DECODE_PREDICT] = ss[decode_keys.DECODE_PREDICT], False
    try:
        if session() is None:
            prefill()
        while session() is not None and session().n_steps < steps:
            if ss[decode_keys.DECODE_MESSAGE] or _blocked():
                break
            _step_now()
    finally:
        ss[decode_keys.DECODE_PREDICT] = predict  # also when the run is cut short: the next run goes on
    ss.pop(decode_keys.URL_STEP, None)
    sess, message = session(), ss[decode_keys.DECODE_MESSAGE]
    short = sess is not None and message is not None and sess.n_steps < steps
    if short:  # say why the view is short of the link
        said = f"The link asked for {steps:,} steps; this request stopped after {sess.n_steps:,}."
        say("link" if message[0] == "info" else message[0], f"{said} {message[1]}")
    if predict and sess is not None and not short:  # a stopped request has no next step to ask about
        ask()


def write_link() -> None:
    """Put a link to the request on screen in the address bar (written on request only: writing
    query parameters reruns the page, which would race the stepping)."""
    sess = session()
    if sess is None:
        return
    ss = st.session_state
    name = None if sess.model_key.source is None else models.active().name
    params = share.link_for(
        sess,
        ss[decode_keys.DECODE_LAYER],
        ss[decode_keys.DECODE_HEAD],
        ss[decode_keys.DECODE_PREDICT],
        ss[decode_keys.LINK_PRESENT],
        name,
    )
    st.query_params.from_dict(params)
    ss[decode_keys.DECODE_LINK_WRITTEN] = (
        sess.uid,
        sess.n_steps,
        "?" + urllib.parse.urlencode(params),
    )  # said under the button
