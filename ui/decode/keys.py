"""The decode page's session keys and their defaults (one learner's view; never shared): its request's settings,
the stage's objects (the request, a held-back step, the predict-first question) and its elements' keys."""

from __future__ import annotations

from core.decode.settings import DEFAULTS as SETTING_DEFAULTS

DECODE_SESSION = "decode.session"  # core.decode.session.DecodeSession | None

DECODE_PROMPT = "decode.prompt"  # the prompt text, kept across page changes

DECODE_PLAYING = "decode.playing"  # bool: Play is stepping on its own

DECODE_MESSAGE = "decode.message"  # (level, text) | None: the last refusal, shown once

DECODE_DTYPE = "decode.dtype"

DECODE_WEIGHT_BITS = "decode.weight_bits"  # core.decode.settings.FLOAT_WEIGHTS or 8/4/3/2: weight-only quantization

DECODE_STRATEGY = "decode.strategy"

DECODE_TEMPERATURE = "decode.temperature"

DECODE_TOP_K = "decode.top_k"

DECODE_SEED = "decode.seed"

DECODE_PACE = "decode.pace_s"

DECODE_LAYER = "decode.layer"

DECODE_HEAD = "decode.head"  # a query head index, or core.decode.settings.MEAN_HEADS

DECODE_PREDICT = "decode.predict"  # bool: ask a question before each step (predict, then reveal)

DECODE_TABLES = "decode.show_tables"  # bool: the stage's figures also as tables (their long text alternative)

LINK_PRESENT = "decode.link_present"  # bool: the share link opens in presenter mode

URL_STEP = "url.step"  # decode steps to replay after an automatic prefill (from ?step=N)

DECODE_VIEW = "decode.view"  # (figure id, rows the browser holds, last payload): what this session's heatmap shows

DECODE_PENDING_STEP = "decode.pending_step"  # core.decode.session.PendingStep computed and held back, or None

DECODE_QUESTION = "decode.question"  # core.decode.predict.Question on screen, or None

DECODE_PICK = "decode.pick"  # the option the learner chose (index), or None

DECODE_REVEALED = "decode.revealed"  # (Question, pick) just revealed, or None

DECODE_TALLY = "decode.tally"  # core.decode.predict.Tally

DECODE_ATTENTION = "decode.attention"

DECODE_FORCE_FULL = "decode.force_full"  # the browser asked for the whole figure (it missed a drawing)

DECODE_LINK_WRITTEN = "decode.link_written"  # (request uid, step, query) of the link last put in the address bar

DECODE_MORE = "decode.more"

DECODE_NEXT_PLAY = "decode.next_play"  # time.monotonic() when Play's next step is due

DECODE_PANEL = "decode.panel"

DECODE_PLAY = "decode-play"

DECODE_PREFILL = "decode-prefill"

DECODE_PROMPT_OPEN = "decode.prompt_open"  # the prompt expander is open (closed by Prefill: the stage needs the room)

DECODE_SHOW_CLOCK = "decode.show_clock"

DECODE_STEPPED = "decode.stepped"  # this rerun's Step click has advanced already (Play then does not)

DECODE_TWO_SPEEDS = "decode.two_speeds"

DECODE_TWO_SPEEDS_OPEN = "decode.two_speeds_open"

DECODE_CACHE_OPEN = "decode.cache_open"  # "Inside the cache" is open (its rows are read only while it is)

DECODE_CACHE_ROWS = "decode.cache_rows"

DECODE_CACHE_NEWEST = "decode.cache_newest"  # the newest rows enlarged with their values (a chart key)

DECODE_CACHE_NUMBERS = "decode.cache_numbers"  # bool: the newest rows enlarged with their values are shown

STAGE_ANSWER = "stage.answer"

STAGE_FULLTEXT = "stage-fulltext"

STAGE_QUESTION = "stage-question"

STAGE_STEP = "stage-step"

# The request's settings (core.decode.settings; "step": decode steps replayed after an automatic prefill) -> key.
SETTINGS = {
    "prompt": DECODE_PROMPT,
    "seed": DECODE_SEED,
    "strategy": DECODE_STRATEGY,
    "temperature": DECODE_TEMPERATURE,
    "top_k": DECODE_TOP_K,
    "dtype": DECODE_DTYPE,
    "bits": DECODE_WEIGHT_BITS,
    "layer": DECODE_LAYER,
    "head": DECODE_HEAD,
    "predict": DECODE_PREDICT,
    "step": URL_STEP,
}
# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    **{key: SETTING_DEFAULTS[name] for name, key in SETTINGS.items() if name in SETTING_DEFAULTS},
    DECODE_SESSION: None,
    DECODE_PLAYING: False,
    DECODE_MESSAGE: None,
    DECODE_PACE: 0.5,
    DECODE_TABLES: False,
    LINK_PRESENT: False,
    DECODE_PENDING_STEP: None,
    DECODE_QUESTION: None,
    DECODE_PICK: None,
    DECODE_REVEALED: None,
    DECODE_TALLY: None,  # core.decode.predict.Tally, made on the first answer
}
# Objects computed with one model: back to their defaults when a session switches models.
MODEL_BOUND = (
    DECODE_SESSION,
    DECODE_PLAYING,
    DECODE_MESSAGE,
    DECODE_PENDING_STEP,
    DECODE_QUESTION,
    DECODE_PICK,
    DECODE_REVEALED,
)
# Choices that depend on the model's shape (layer 3 does not exist in a 2-layer model).
MODEL_SHAPED = (
    DECODE_LAYER,
    DECODE_HEAD,
)
