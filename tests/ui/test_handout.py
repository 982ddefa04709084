"""The handout as built from a session's snapshot (``ui.handout.build``)."""

import json

from core import state
from core.decode.generate import SamplingConfig
from core.decode.session import start, step
from core.model.shipped import load_model, load_shipped_tokenizer
from core.model.tokenizer import encode
from ui import handout


def _snap(sess, tok) -> dict:
    return {
        state.LESSON: None,
        state.LESSON_NAME: None,
        state.LESSON_STOP: 0,
        state.HANDOUT_FIGURES: {},
        state.PRACTICE_TALLY: None,
        state.DECODE_SESSION: sess,
        state.DECODE_LAYER: 0,
        state.DECODE_HEAD: state.MEAN_HEADS,
        "tokenizer": tok,
    }


def test_handout_carries_the_two_speeds_figure_of_the_decode_request():
    """After Prefill and three Steps the handout has Ch. 19's two-phase figure of that request: 'prefill — the
    pause' over the prompt's positions, 'generation — the stream' with caches of n+1 … n+3; before a Step, none."""
    model, tok = load_model(), load_shipped_tokenizer()
    ids = encode(tok, state.DEFAULT_PROMPT)
    sess = start(model, ids, SamplingConfig())
    assert handout.SPEEDS_TITLE not in handout.build(_snap(sess, tok))
    for _ in range(3):
        sess = step(model, sess, check=False)
    html = handout.build(_snap(sess, tok))
    shown = lambda text: json.dumps(text)[1:-1] in html  # noqa: E731 — the figure's text as plotly's JSON writes it
    assert handout.SPEEDS_TITLE in html and shown("prefill — the pause") and shown("generation — the stream")
    n = len(ids)
    assert shown(f"{n + 1}, {n + 2}, then {n + 3} positions") and shown("same machine, two speeds")
