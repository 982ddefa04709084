"""The handout as built from a session's snapshot (``ui.handout.build``)."""

import json

from core.decode import settings as decode_settings
from core.decode.generate import SamplingConfig
from core.decode.session import start, step
from core.model.shipped import load_model, load_shipped_tokenizer
from core.model.tokenizer import encode
from ui import handout, page, practice_saved
from ui.decode import keys as decode_keys
from ui.lesson import keys as lesson_keys


def _snap(sess, tok) -> dict:
    return {
        lesson_keys.LESSON: None,
        lesson_keys.LESSON_NAME: None,
        lesson_keys.LESSON_STOP: 0,
        page.HANDOUT_FIGURES: {},
        practice_saved.PRACTICE_TALLY: None,
        decode_keys.DECODE_SESSION: sess,
        decode_keys.DECODE_LAYER: 0,
        decode_keys.DECODE_HEAD: decode_settings.MEAN_HEADS,
        "tokenizer": tok,
    }


def test_handout_carries_the_two_speeds_figure_of_the_decode_request():
    """After Prefill and three Steps the handout has Ch. 19's two-phase figure of that request: 'prefill — the
    pause' over the prompt's positions, 'generation — the stream' with caches of n+1 … n+3; before a Step, none."""
    model, tok = load_model(), load_shipped_tokenizer()
    ids = encode(tok, decode_settings.DEFAULT_PROMPT)
    sess = start(model, ids, SamplingConfig())
    assert handout.SPEEDS_TITLE not in handout.build(_snap(sess, tok))
    for _ in range(3):
        sess = step(model, sess, check=False)
    html = handout.build(_snap(sess, tok))
    shown = lambda text: json.dumps(text)[1:-1] in html  # noqa: E731 — the figure's text as plotly's JSON writes it
    assert handout.SPEEDS_TITLE in html and shown("prefill — the pause") and shown("generation — the stream")
    n = len(ids)
    assert shown(f"{n + 1}, {n + 2}, then {n + 3} positions") and shown("same machine, two speeds")
