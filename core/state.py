"""Session-state keys and their defaults for every page, as plain data (one learner's view; never shared).

One way to keep settings: each widget takes its key from here and ``persist_state="session"``
(streamlit keeps the value across page changes), and ``ui.init_state`` seeds every default below
once per session. Keys are prefixed by page so pages never collide. Non-widget keys hold a page's
objects (a request, a batch, a measurement) and start as ``None``.
"""

from __future__ import annotations

DEFAULT_PROMPT = (
    "User: Hello, my name is Mira. I am planning a trip to Lyon.\n"
    "Assistant: Hello Mira. The travel limit is 750 yuan per day.\n"
    "User: The hotel in Lyon costs 620 yuan. Is that allowed?\n"
    "Assistant:"
)
MAX_PROMPT_CHARS = 200_000  # far past the context window; the token count gives the message

# ---- Prefill & decode -------------------------------------------------------------------------
DECODE_SESSION = "decode.session"  # core.session.DecodeSession | None
DECODE_PROMPT = "decode.prompt"  # the prompt text, kept across page changes
DECODE_PLAYING = "decode.playing"  # bool: Play is stepping on its own
DECODE_MESSAGE = "decode.message"  # (level, text) | None: the last refusal, shown once
DECODE_DTYPE = "decode.dtype"
DECODE_WEIGHT_BITS = "decode.weight_bits"  # FLOAT_WEIGHTS or 8/4/3/2: weight-only quantization
# The float choice of that radio. Not None: streamlit shows a radio whose value is None with no
# option selected, so a fresh page looked as if it had no weights chosen.
FLOAT_WEIGHTS = 0
DECODE_STRATEGY = "decode.strategy"
DECODE_TEMPERATURE = "decode.temperature"
DECODE_TOP_K = "decode.top_k"
DECODE_SEED = "decode.seed"
DECODE_PACE = "decode.pace_s"
DECODE_LAYER = "decode.layer"
DECODE_HEAD = "decode.head"  # a query head index, or MEAN_HEADS
MEAN_HEADS = "mean over heads"
DECODE_PREDICT = "decode.predict"  # bool: ask a question before each step (predict, then reveal)
DECODE_TABLES = "decode.show_tables"  # bool: the stage's figures also as tables (their long text alternative)
LINK_PRESENT = "decode.link_present"  # bool: the share link opens in presenter mode
PRESENT = "ui.present"  # presenter mode: larger text and figures, fewer controls
URL_STEP = "url.step"  # decode steps to replay after an automatic prefill (from ?step=N)

DECODE = {
    DECODE_SESSION: None,
    DECODE_PROMPT: DEFAULT_PROMPT,
    DECODE_PLAYING: False,
    DECODE_MESSAGE: None,
    DECODE_DTYPE: "float32",
    DECODE_WEIGHT_BITS: FLOAT_WEIGHTS,
    DECODE_STRATEGY: "greedy",
    DECODE_TEMPERATURE: 0.8,
    DECODE_TOP_K: 20,
    DECODE_SEED: 0,
    DECODE_PACE: 0.5,
    # Looks back at the traveller's name when about to write it: on the default prompt, at decode
    # step 2 (choosing output token 3, " Mira") it puts 0.997 of the new row on the name's two
    # prompt positions (tests/test_shipped_model.py; `python -m bench.shipped_model` lists every head).
    DECODE_LAYER: 3,
    DECODE_HEAD: 0,
    PRESENT: False,
    DECODE_PREDICT: False,
    DECODE_TABLES: False,
    LINK_PRESENT: False,
    "decode.pending_step": None,
    "decode.question": None,
    "decode.pick": None,
    "decode.revealed": None,
    "decode.tally": None,  # core.predict.Tally, made on the first answer
}

# ---- the worked example, the context window, latency ------------------------------------------
WORKED = {"worked.scaled": False, "worked.ask_first": False}  # ask_first: shares hidden until revealed
CONTEXT = {
    "ctx.policy": "sliding window",
    "ctx.window": 64,
    "ctx.n_new": 80,
    "ctx.stop_at_end": False,  # off: generation reaches the wall; the page says where the text had ended
    "ctx.layer": 2,
    "ctx.head": 3,
}
LATENCY = {"lat.source": "Ch. 30 example", "lat.n_new": 12, "lat.measured": None}
# The latency page's edited rows per trace (a list of row dicts), kept when the page is left: the editor's
# own state is dropped by streamlit whenever another page runs. A lesson stop on the page clears them.
LATENCY_EDITS = "lat.edits."  # + the trace's name

# ---- batching, speculative decoding -----------------------------------------------------------
BATCH_PROMPTS_DEFAULT = (
    "The cat sat on the\nUser: Hello, my name is Ravi. I am planning a trip to Oslo.\n"
    "Ana asked: Which country is Lyon in?\nThe dog"
)
BATCHING = {
    "batch.prompts": BATCH_PROMPTS_DEFAULT,
    "batch.budgets": "12, 20, 6, 16",
    "batch.layout": "padded",
    "batch.obj": None,
    "batch.error": None,
    "batch.speed": None,
}
SPECULATIVE = {
    "spec.k": 4,
    "spec.t": 0.0,
    "spec.seed": 0,
    "spec.n": 5_000,
    "spec.obj": None,
    "spec.msg": None,
    "spec.dist": None,
    "spec.speed": None,
}

# ---- paged KV cache ---------------------------------------------------------------------------
PAGED = {
    "paged.preset": "eight students, one system prompt",  # one of core.paged_presets.PRESETS
    "paged.policy": "continuous",
    "paged.block_size": 16,
    "paged.n_blocks": 48,
    "paged.engine": None,  # core.scheduler.Engine | None: the requests being stepped
    "paged.built": None,  # (preset, block size, pool) of the engine shown
    "paged.settings": None,  # (preset, policy, block size, pool) the engine was built with
    "paged.message": None,  # the last refusal, shown until the settings change
}

# ---- cost, memory, weights --------------------------------------------------------------------
COST = {
    "cost.layers": 1,
    "cost.heads": 1,
    "cost.n_max": 10_000,
    "cost.n_prompt": 1_000,
    "cost.m_new": 100,
    "cost.measured": None,
}
# The memory page's plan from a .gguf file: where the file comes from, and the plan's terms.
GGUF_EXPORTS, GGUF_FOLDER, GGUF_UPLOAD = "this app's exports", "the models folder (--models-dir)", "upload a .gguf"
KV_F16 = "16-bit (2 B) = llama.cpp f16"  # a label of core.cost.kv_value_choices()
MEMORY = {
    "memory.preset": "Ch. 30 two-layer example",
    "memory.gguf_source": GGUF_EXPORTS,
    "memory.gguf_export": "Q4_0",
    "memory.gguf_file": None,  # a name listed in the models folder
    "memory.gguf_n_ctx": 4096,
    "memory.gguf_shown": None,  # (name, bytes) of the file whose context length set n_ctx
    "memory.gguf_cache_type": "f16",
    "memory.gguf_budget_gb": 8.0,
}
CARD_ARCH_AUTO = "assumed from the parameter count"  # the weights page uses the card's kv_shape
CHOSEN_PRESET = "The model in use (sidebar)"  # the memory page's preset for a loaded checkpoint
WEIGHTS = {
    "weights.billions": 7.0,
    "weights.group": 32,
    "weights.scale_bits": 16,
    "weights.card": "7B, Q4, 8K",
    "weights.arch": CARD_ARCH_AUTO,
    "weights.grouped": True,
    "weights.kv_type": KV_F16,
    "weights.export_format": "Q4_0",
    "weights.batch": 1,
    "weights.overhead_gb": 1.0,
    "weights.budget_gb": 8.0,
}

# ---- quantization -----------------------------------------------------------------------------
QUANT_DEFAULT_PRESET = "Ch. 19: four weights, scale 0.1"


def quant_preset_state(values: str, scale: float) -> dict:
    """The ruler's settings for one of the chapters' cases: its values and scale, 4-bit symmetric,
    half to even, clipping on (Ch. 30's rules)."""
    return {
        "quant.values": values,
        "quant.scale": scale,
        "quant.scale_step": scale,  # the log slider's stop; the page snaps it to the nearest one
        "quant.zero_point": 0,
        "quant.scale_mode": "set by hand",
        "quant.bits": 4,
        "quant.kind": "symmetric",
        "quant.rounding": "half_even",
        "quant.clip": True,
    }


QUANTIZE = {
    "quant.preset": QUANT_DEFAULT_PRESET,
    **quant_preset_state("0.34, -0.12, 0.7, 0.23", 0.1),
    "quant.paris": 0.6,
    "quant.lyon": 0.7,
    "quant.tie_scale": 0.5,
    "quant.group": 4,
    "quant.scale_bytes": 4,
    "quant.block_format": "Q4_0",  # the real-format block under the ruler (core.ruler_block.BLOCK_FORMATS)
    "quant.block": 0,  # which block of 32 values
}
QUANT_MODEL = {
    "qm.group": 32,
    "qm.rounding": "half_even",
    "qm.diverge_bits": 2,
    "qm.n_new": 40,
    "qm.evaluated": None,  # the checkpoint folder whose (slow) evaluation this session asked for
}

# ---- the model a session runs (ui_models.py) -------------------------------------------------------
MODEL_CHOICE = "model.choice"  # the picker's name (core.model_choice.ModelOption.name); None: not chosen yet
MODEL_ACTIVE = "model.active"  # the ModelOption the pages use (loaded); None: the shipped model
MODEL = {MODEL_CHOICE: None, MODEL_ACTIVE: None}
# Objects computed with one model, and choices that depend on its shape: put back to their
# defaults when a session switches models (a request's tokens mean nothing to another tokenizer;
# layer 3 does not exist in a 2-layer model).
MODEL_BOUND = (
    DECODE_SESSION,
    DECODE_PLAYING,
    DECODE_MESSAGE,
    "decode.pending_step",
    "decode.question",
    "decode.pick",
    "decode.revealed",
    "spec.obj",
    "spec.msg",
    "spec.dist",
    "spec.speed",
    "batch.obj",
    "batch.error",
    "batch.speed",
    "paged.engine",
    "paged.built",
    "paged.settings",
    "paged.message",
    "cost.measured",
    "lat.measured",
)
MODEL_SHAPED = (DECODE_LAYER, DECODE_HEAD, "ctx.layer", "ctx.head", "ctx.window")

# ---- Practice page (lessons/practice.py) ---------------------------------------------------------
# The page reads ?ex=<id>&numbers=<seed> itself ("numbers", not "seed": ?seed= already sets the
# decode page's sampling seed, core/share.py).
PRACTICE_EX = "practice.ex"  # exercise id, a key of core.exercises.catalogue()
PRACTICE_SEED = "practice.seed"  # 0 = the chapter's own numbers; any other = fresh numbers
PRACTICE_TALLY = "practice.tally"  # core.exercises.Tally, made per session (a default object would be shared)
PRACTICE = {PRACTICE_EX: "ch30-1", PRACTICE_SEED: 0, PRACTICE_TALLY: None}

# ---- lesson mode and the handout (ui_lesson.py, ui_handout.py) -----------------------------------
# The lesson link is ?lesson=<shipped name>&stop=<k from 1>[&teacher=1] (read once per session).
LESSON = "lesson.lesson"  # core.lesson.Lesson running in this session, or None
LESSON_NAME = "lesson.name"  # its shipped name (it goes into the address), None for an uploaded file
LESSON_STOP = "lesson.stop"  # the stop on screen, counted from 0
LESSON_GOTO = "lesson.goto"  # True: a move asked for the stop's page (st.switch_page before the page runs)
LESSON_ARRIVAL = "lesson.arrival"  # moves so far: the browser scrolls to the stop's figure once per move
LESSON_TEACHER = "lesson.teacher"  # teacher view (?teacher=1, or the sidebar's toggle): the speaker note is offered
LESSON_CLOSE_SIDEBAR = "lesson.close_sidebar"  # True once: started from the sidebar, the browser closes it
LESSON_MESSAGE = "lesson.message"  # (level, text) | None: why a lesson file or link was refused
LESSON_PICK = "lesson.pick"  # the sidebar's choice of shipped lesson
LESSON_UPLOAD = "lesson.upload"  # the sidebar's file uploader (a widget value: never seeded here)
LESSON_PROBLEMS = "lesson.problems"  # the refused file's problems (text shown literally), or None
HANDOUT_FIGURES = "handout.figures"  # {("page", title) | ("stop", k): go.Figure}: main figures as last drawn
HANDOUT_SLOTS = "handout.slots"  # where ui.chart keeps this run's first figure (set before the page runs)
LESSON_STATE = {
    LESSON: None,
    LESSON_NAME: None,
    LESSON_STOP: 0,
    LESSON_GOTO: False,
    LESSON_ARRIVAL: 0,
    LESSON_TEACHER: False,
    LESSON_CLOSE_SIDEBAR: False,
    LESSON_MESSAGE: None,
    LESSON_PROBLEMS: None,
    LESSON_PICK: "fifteen-minutes",
    HANDOUT_FIGURES: {},
    HANDOUT_SLOTS: (),
}

DEFAULTS = {
    **DECODE,
    **WORKED,
    **CONTEXT,
    **LATENCY,
    **BATCHING,
    **SPECULATIVE,
    **PAGED,
    **COST,
    **MEMORY,
    **WEIGHTS,
    **QUANTIZE,
    **QUANT_MODEL,
    **PRACTICE,
    **LESSON_STATE,
    **MODEL,
}
