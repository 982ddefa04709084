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
DECODE_SESSION = "decode.session"  # core.decode.session.DecodeSession | None
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
DECODE_VIEW = "decode.view"  # (figure id, rows the browser holds, last payload): what this session's heatmap shows

DECODE_PENDING_STEP = "decode.pending_step"  # core.decode.session.PendingStep computed and held back, or None
DECODE_QUESTION = "decode.question"  # core.decode.predict.Question on screen, or None
DECODE_PICK = "decode.pick"  # the option the learner chose (index), or None
DECODE_REVEALED = "decode.revealed"  # (Question, pick) just revealed, or None
DECODE_TALLY = "decode.tally"  # core.decode.predict.Tally
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
    # prompt positions (tests/core/model/test_shipped.py; `python -m bench.shipped_model` lists every head).
    DECODE_LAYER: 3,
    DECODE_HEAD: 0,
    PRESENT: False,
    DECODE_PREDICT: False,
    DECODE_TABLES: False,
    LINK_PRESENT: False,
    DECODE_PENDING_STEP: None,
    DECODE_QUESTION: None,
    DECODE_PICK: None,
    DECODE_REVEALED: None,
    DECODE_TALLY: None,  # core.decode.predict.Tally, made on the first answer
}

# ---- the worked example, the context window, latency ------------------------------------------
WORKED_ASK_FIRST = "worked.ask_first"
WORKED_SCALED = "worked.scaled"
WORKED = {WORKED_SCALED: False, WORKED_ASK_FIRST: False}  # ask_first: shares hidden until revealed
CTX_WINDOW = "ctx.window"
CTX_POLICY = "ctx.policy"
CTX_N_NEW = "ctx.n_new"
CTX_STOP_AT_END = "ctx.stop_at_end"
CTX_LAYER = "ctx.layer"
CTX_HEAD = "ctx.head"
CONTEXT = {
    CTX_POLICY: "sliding window",
    CTX_WINDOW: 64,
    CTX_N_NEW: 80,
    CTX_STOP_AT_END: False,  # off: generation reaches the wall; the page says where the text had ended
    CTX_LAYER: 2,
    CTX_HEAD: 3,
}
LAT_MEASURED = "lat.measured"
LAT_SOURCE = "lat.source"
LAT_N_NEW = "lat.n_new"
LATENCY = {LAT_SOURCE: "Ch. 30 example", LAT_N_NEW: 12, LAT_MEASURED: None}
# The latency page's edited rows per trace (a list of row dicts), kept when the page is left: the editor's
# own state is dropped by streamlit whenever another page runs. A lesson stop on the page clears them.
LATENCY_EDITS = "lat.edits."  # + the trace's name

# ---- batching, speculative decoding -----------------------------------------------------------
BATCH_PROMPTS_DEFAULT = (
    "The cat sat on the\nUser: Hello, my name is Ravi. I am planning a trip to Oslo.\n"
    "Ana asked: Which country is Lyon in?\nThe dog"
)
BATCH_BUDGETS = "batch.budgets"
BATCH_ERROR = "batch.error"
BATCH_LAYOUT = "batch.layout"
BATCH_OBJ = "batch.obj"
BATCH_PROMPTS = "batch.prompts"
BATCH_SPEED = "batch.speed"
BATCHING = {
    BATCH_PROMPTS: BATCH_PROMPTS_DEFAULT,
    BATCH_BUDGETS: "12, 20, 6, 16",
    BATCH_LAYOUT: "padded",
    BATCH_OBJ: None,
    BATCH_ERROR: None,
    BATCH_SPEED: None,
}
SPEC_DIST = "spec.dist"
SPEC_MSG = "spec.msg"
SPEC_OBJ = "spec.obj"
SPEC_SPEED = "spec.speed"
SPEC_K = "spec.k"
SPEC_T = "spec.t"
SPEC_SEED = "spec.seed"
SPEC_N = "spec.n"
SPECULATIVE = {
    SPEC_K: 4,
    SPEC_T: 0.0,
    SPEC_SEED: 0,
    SPEC_N: 5_000,
    SPEC_OBJ: None,
    SPEC_MSG: None,
    SPEC_DIST: None,
    SPEC_SPEED: None,
}

# ---- paged KV cache ---------------------------------------------------------------------------
PAGED_BUILT = "paged.built"
PAGED_ENGINE = "paged.engine"
PAGED_MESSAGE = "paged.message"
PAGED_SETTINGS = "paged.settings"
PAGED_PRESET = "paged.preset"
PAGED_POLICY = "paged.policy"
PAGED_BLOCK_SIZE = "paged.block_size"
PAGED_N_BLOCKS = "paged.n_blocks"
PAGED = {
    PAGED_PRESET: "eight students, one system prompt",  # one of core.serving.paged_presets.PRESETS
    PAGED_POLICY: "continuous",
    PAGED_BLOCK_SIZE: 16,
    PAGED_N_BLOCKS: 48,
    PAGED_ENGINE: None,  # core.serving.scheduler.Engine | None: the requests being stepped
    PAGED_BUILT: None,  # (preset, block size, pool) of the engine shown
    PAGED_SETTINGS: None,  # (preset, policy, block size, pool) the engine was built with
    PAGED_MESSAGE: None,  # the last refusal, shown until the settings change
}

# ---- cost, memory, weights --------------------------------------------------------------------
COST_MEASURED = "cost.measured"
COST_LAYERS = "cost.layers"
COST_HEADS = "cost.heads"
COST_N_MAX = "cost.n_max"
COST_N_PROMPT = "cost.n_prompt"
COST_M_NEW = "cost.m_new"
COST = {
    COST_LAYERS: 1,
    COST_HEADS: 1,
    COST_N_MAX: 10_000,
    COST_N_PROMPT: 1_000,
    COST_M_NEW: 100,
    COST_MEASURED: None,
}
# The memory page's plan from a .gguf file: where the file comes from, and the plan's terms.
GGUF_EXPORTS, GGUF_FOLDER, GGUF_UPLOAD = "this app's exports", "the models folder (--models-dir)", "upload a .gguf"
KV_F16 = "16-bit (2 B) = llama.cpp f16"  # a label of core.cost.counts.kv_value_choices()
MEMORY_GGUF_FILE = "memory.gguf_file"
MEMORY_GGUF_N_CTX = "memory.gguf_n_ctx"
MEMORY_GGUF_SHOWN = "memory.gguf_shown"
MEMORY_PRESET = "memory.preset"
MEMORY_PASTED = "memory.pasted"  # a config.json's text, pasted (a widget value: never seeded here)
MEMORY_GGUF_SOURCE = "memory.gguf_source"
MEMORY_GGUF_EXPORT = "memory.gguf_export"
MEMORY_GGUF_CACHE_TYPE = "memory.gguf_cache_type"
MEMORY_GGUF_BUDGET_GIB = "memory.gguf_budget_gib"
MEMORY = {
    MEMORY_PRESET: "Ch. 30 two-layer example",
    MEMORY_GGUF_SOURCE: GGUF_EXPORTS,
    MEMORY_GGUF_EXPORT: "Q4_0",
    MEMORY_GGUF_FILE: None,  # a name listed in the models folder
    MEMORY_GGUF_N_CTX: 4096,
    MEMORY_GGUF_SHOWN: None,  # (name, bytes) of the file whose context length set n_ctx
    MEMORY_GGUF_CACHE_TYPE: "f16",
    MEMORY_GGUF_BUDGET_GIB: 8.0,  # GiB: the GGUF plan speaks MiB/GiB throughout
}
CARD_ARCH_AUTO = "assumed from the parameter count"  # the weights page uses the card's kv_shape
CHOSEN_PRESET = "The model in use (sidebar)"  # the memory page's preset for a loaded checkpoint
WEIGHTS_BILLIONS = "weights.billions"
WEIGHTS_GROUP = "weights.group"
WEIGHTS_SCALE_BITS = "weights.scale_bits"
WEIGHTS_CARD = "weights.card"
WEIGHTS_ARCH = "weights.arch"
WEIGHTS_GROUPED = "weights.grouped"
WEIGHTS_KV_TYPE = "weights.kv_type"
WEIGHTS_EXPORT_FORMAT = "weights.export_format"
WEIGHTS_BATCH = "weights.batch"
WEIGHTS_OVERHEAD_GB = "weights.overhead_gb"
WEIGHTS_BUDGET_GB = "weights.budget_gb"
WEIGHTS = {
    WEIGHTS_BILLIONS: 7.0,
    WEIGHTS_GROUP: 32,
    WEIGHTS_SCALE_BITS: 16,
    WEIGHTS_CARD: "7B, Q4, 8K",
    WEIGHTS_ARCH: CARD_ARCH_AUTO,
    WEIGHTS_GROUPED: True,
    WEIGHTS_KV_TYPE: KV_F16,
    WEIGHTS_EXPORT_FORMAT: "Q4_0",
    WEIGHTS_BATCH: 1,
    WEIGHTS_OVERHEAD_GB: 1.0,
    WEIGHTS_BUDGET_GB: 8.0,
}

# ---- quantization -----------------------------------------------------------------------------
QUANT_DEFAULT_PRESET = "Ch. 19: four weights, scale 0.1"


QUANT_SCALE = "quant.scale"
QUANT_SCALE_MODE = "quant.scale_mode"
QUANT_SCALE_STEP = "quant.scale_step"
QUANT_VALUES = "quant.values"
QUANT_ZERO_POINT = "quant.zero_point"


QUANT_BITS = "quant.bits"
QUANT_KIND = "quant.kind"
QUANT_ROUNDING = "quant.rounding"
QUANT_CLIP = "quant.clip"


def quant_preset_state(values: str, scale: float) -> dict:
    """The ruler's settings for one of the chapters' cases: its values and scale, 4-bit symmetric,
    half to even, clipping on (Ch. 30's rules)."""
    return {
        QUANT_VALUES: values,
        QUANT_SCALE: scale,
        QUANT_SCALE_STEP: scale,  # the log slider's stop; the page snaps it to the nearest one
        QUANT_ZERO_POINT: 0,
        QUANT_SCALE_MODE: "set by hand",
        QUANT_BITS: 4,
        QUANT_KIND: "symmetric",
        QUANT_ROUNDING: "half_even",
        QUANT_CLIP: True,
    }


QUANT_BLOCK = "quant.block"
QUANT_PRESET = "quant.preset"
QUANT_PARIS = "quant.paris"
QUANT_LYON = "quant.lyon"
QUANT_TIE_SCALE = "quant.tie_scale"
QUANT_GROUP = "quant.group"
QUANT_SCALE_BYTES = "quant.scale_bytes"
QUANT_BLOCK_FORMAT = "quant.block_format"
QUANTIZE = {
    QUANT_PRESET: QUANT_DEFAULT_PRESET,
    **quant_preset_state("0.34, -0.12, 0.7, 0.23", 0.1),
    QUANT_PARIS: 0.6,
    QUANT_LYON: 0.7,
    QUANT_TIE_SCALE: 0.5,
    QUANT_GROUP: 4,
    QUANT_SCALE_BYTES: 4,
    QUANT_BLOCK_FORMAT: "Q4_0",  # the real-format block under the ruler (core.quant.ruler_block.BLOCK_FORMATS)
    QUANT_BLOCK: 0,  # which block of 32 values
}
QM_EVALUATED = "qm.evaluated"
QM_GROUP = "qm.group"
QM_ROUNDING = "qm.rounding"
QM_DIVERGE_BITS = "qm.diverge_bits"
QM_N_NEW = "qm.n_new"
QUANT_MODEL = {
    QM_GROUP: 32,
    QM_ROUNDING: "half_even",
    QM_DIVERGE_BITS: 2,
    QM_N_NEW: 40,
    QM_EVALUATED: None,  # the checkpoint folder whose (slow) evaluation this session asked for
}

# ---- the model a session runs (ui/models.py) -------------------------------------------------------
MODEL_CHOICE = "model.choice"  # the picker's name (core.checkpoints.choice.ModelOption.name); None: not chosen yet
MODEL_ACTIVE = "model.active"  # the ModelOption the pages use (loaded); None: the shipped model
MODEL = {MODEL_CHOICE: None, MODEL_ACTIVE: None}
# Objects computed with one model, and choices that depend on its shape: put back to their
# defaults when a session switches models (a request's tokens mean nothing to another tokenizer;
# layer 3 does not exist in a 2-layer model).
MODEL_BOUND = (
    DECODE_SESSION,
    DECODE_PLAYING,
    DECODE_MESSAGE,
    DECODE_PENDING_STEP,
    DECODE_QUESTION,
    DECODE_PICK,
    DECODE_REVEALED,
    SPEC_OBJ,
    SPEC_MSG,
    SPEC_DIST,
    SPEC_SPEED,
    BATCH_OBJ,
    BATCH_ERROR,
    BATCH_SPEED,
    PAGED_ENGINE,
    PAGED_BUILT,
    PAGED_SETTINGS,
    PAGED_MESSAGE,
    COST_MEASURED,
    LAT_MEASURED,
)
MODEL_SHAPED = (DECODE_LAYER, DECODE_HEAD, CTX_LAYER, CTX_HEAD, CTX_WINDOW)

# ---- Practice page (app_pages/practice.py) ---------------------------------------------------------
# The page reads ?ex=<id>&numbers=<seed> itself ("numbers", not "seed": ?seed= already sets the
# decode page's sampling seed, core/decode/share.py).
PRACTICE_EX = "practice.ex"  # exercise id, a key of core.practice.catalogue.catalogue()
PRACTICE_SEED = "practice.seed"  # 0 = the chapter's own numbers; any other = fresh numbers
PRACTICE_IN = "practice.in"  # + exercise id, seed and part: one answer box
PRACTICE_TALLY = "practice.tally"  # core.practice.exercises.Tally, made per session (a default object would be shared)
CH30_1 = "ch30-1"
PRACTICE = {PRACTICE_EX: CH30_1, PRACTICE_SEED: 0, PRACTICE_TALLY: None}
# The attempts kept in the student's browser (ui/practice_saved.py, frontend/practice_saved.js).
PRACTICE_SAVED = "practice.saved"  # the hidden component: its state value "saved" is what the browser had stored
PRACTICE_SAVED_BOX = "practice-saved"  # its container (assets/style/a11y.css hides it)
PRACTICE_SAVED_SENT = "practice.saved_sent"  # the records last sent to the browser (sent again only when changed)
PRACTICE_SAVED_TAB = "practice.saved_tab"  # this session's random name: the browser hands its records back once

# ---- lesson mode and the handout (ui/lesson/, ui/handout.py) -----------------------------------
# The lesson link is ?lesson=<shipped name>&stop=<k from 1>[&teacher=1] (read once per session).
LESSON = "lesson.lesson"  # core.lesson.stops.Lesson running in this session, or None
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
FIFTEEN_MINUTES = "fifteen-minutes"
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
    LESSON_PICK: FIFTEEN_MINUTES,
    HANDOUT_FIGURES: {},
    HANDOUT_SLOTS: (),
}

# ---- what the cache holds (app_pages/cache.py) ------------------------------------------------------
CACHE_PROMPT = "cache.prompt"  # str: the two-speeds figure's prompt (five positions: Ch. 19's figure)
CACHE_TEXT = "cache.text"  # str: the reference text of the reuse checks
CACHE_EDITED = "cache.edited"  # str: the same text edited (Ch. 30 §30.4: 600 → 750 yuan)
CACHE_TRANSCRIPT = "cache.transcript"  # str: a stored chat transcript (a text record)
SEE_PROMPT = "see.prompt"  # str: the prompt "See it move" runs to the context window
SEE_REDUCE_MOTION = "see.reduce_motion"  # bool: jump between frames instead of sliding
SEE = {SEE_PROMPT: "User: Hello, my name is Mira", SEE_REDUCE_MOTION: False}
CACHE = {
    CACHE_PROMPT: "The cat sat on the",
    CACHE_TEXT: "User: The limit is 600 yuan.",
    CACHE_EDITED: "User: The limit is 750 yuan.",
    CACHE_TRANSCRIPT: "User: Hello, my name is Mira.\nAssistant: Hello Mira!\nUser: Is 620 yuan allowed?\nAssistant:",
}

DEFAULTS = {
    **DECODE,
    **WORKED,
    **CONTEXT,
    **CACHE,
    **SEE,
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

# ---- the address's notes (ui/frame.py), set only when there is something to say -----------------
URL_IGNORED = "url.ignored"  # list[str]: query parameters this session ignored, shown once
URL_MODEL_IGNORED = "url.model_ignored"  # list[str]: a ?model= this server does not have

# ---- the memory page's typed terms (app_pages/memory.py, ui/memory_terms.py) ---------------------
# Fixed keys, so that typing any term can switch the preset box to MEMORY_CUSTOM and keep the values.
MEMORY_CUSTOM = "Custom (typed terms)"
MEMORY_L = "memory.n_layer"
MEMORY_N_HEAD = "memory.n_head"
MEMORY_H = "memory.n_kv_head"
MEMORY_D = "memory.head_dim"
MEMORY_W = "memory.window"  # 0 = no sliding window
MEMORY_B = "memory.bytes_per_value"  # a label of the b choices
MEMORY_T = "memory.lengths"  # the typed request lengths
MEMORY_BASE = "memory.base"  # the KVShape whose structure the typed terms keep (windows rule, MLA)
MEMORY_LOADED = "memory.loaded"  # (preset name, KVShape) last copied into the term boxes
MEMORY_TERMS = {MEMORY_BASE: None, MEMORY_LOADED: None}
DEFAULTS.update(MEMORY_TERMS)

# ---- Speed on this machine (app_pages/speed.py, ui/speed.py) -----------------------------------
# Results are kept per machine in a JSON file (core.evaluate.machine_speed.cache_dir), not here.
SPEED_BUDGET = "speed.budget_s"  # seconds a measurement may take (the page's slider)
SPEED = {SPEED_BUDGET: 20}
DEFAULTS.update(SPEED)
MEMORY_GGUF_SWA_FULL = "memory.gguf_swa_full"  # bool: llama.cpp's --swa-full (local layers at n_ctx)
DEFAULTS[MEMORY_GGUF_SWA_FULL] = False

# ---- class mode (ui/classroom/, core/classroom/): a console, a display and students (issues 41, 49) ----
# What a session knows about its class. The class itself (plan, seats, answers) lives in the class store, never
# here. A teacher's key and a student's seat token come from this browser's HttpOnly cookies (set by the app's class
# routes, serve/class_routes.py), are kept here for the store's calls, and never reach an address or a page.
CLASS_CODE = "class.code"  # the class's six-letter code, or None: not in a class
CLASS_ROLE = "class.role"  # "teacher" (the console), "student", "display" (the projector), or None
CLASS_KEY = "class.key"  # the teacher's key (teacher only), from this browser's cookie
CLASS_TOKEN = "class.token"  # the student's seat token (student only), from this browser's cookie
CLASS_SEAT = "class.seat"  # the student's seat number, 1, 2, … (student only)
CLASS_MODE = "class.mode"  # the teacher's pacing: "follow", "paused" or "released"
CLASS_RECALL = "class.recall"  # bumped by "bring back": released students return to the teacher's step
CLASS_ROUNDS = "class.rounds"  # {question id: voting round} ("vote again" opens round 2)
CLASS_PUBLISHED = "class.published"  # the Plan this teacher last published (sent again only when it changes)
CLASS_APPLIED = "class.applied"  # (plan version, recall) this follower's view last followed
CLASS_FOLLOWED_UID = "class.followed_uid"  # the teacher's request uid this follower's stage holds
CLASS_MESSAGE = "class.message"  # (level, text) | None: a refusal (bad code, ended class), shown once
CLASS_JOIN_CODE = "class.join_code"  # the join form's code box
CLASS_NICKNAME = "class.nickname"  # the join form's optional nickname box
CLASS_LOCKED = "class.locked"  # bool: a following session (the lesson bar's moves and leave are the teacher's)
CLASS_JOIN_SHOWN = "class.join_shown"  # bool: the console shows the join code on the display
CLASS_STOP_REVEALED = "class.stop_revealed"  # (lesson, stop) whose answer the console revealed on the display
CLASS_PENDING = "class.pending"  # {(question id, round): pick} a student's answers not yet taken by the store
CLASS_STARTING = "class.starting"  # bool: ?class=new, the start panel is open
CLASS_SUBMITTED = "class.submitted"  # (route, body) a class form sent, until the browser opens the class
CLASS_POSTING = "class.posting"  # the POST the class_post component is making ({action, body, nonce}), or None
CLASS_RESUMING = "class.resuming"  # bool: a teacher's new session takes the class's plan back once
CLASS_WAITING = "class.waiting"  # bool: the console's plan waits for the store (its bar was drawn waiting)
CLASS_RETRIES = "class.retries"  # runs that drew the class listener waiting to try the store again (a counter)
CLASS = {
    CLASS_CODE: None,
    CLASS_ROLE: None,
    CLASS_KEY: None,
    CLASS_TOKEN: None,
    CLASS_SEAT: None,
    CLASS_MODE: "follow",
    CLASS_RECALL: 0,
    CLASS_ROUNDS: {},
    CLASS_PUBLISHED: None,
    CLASS_APPLIED: None,
    CLASS_FOLLOWED_UID: None,
    CLASS_MESSAGE: None,
    CLASS_JOIN_CODE: "",
    CLASS_NICKNAME: "",
    CLASS_LOCKED: False,
    CLASS_JOIN_SHOWN: False,
    CLASS_STOP_REVEALED: None,
    CLASS_PENDING: {},
    CLASS_STARTING: False,
    CLASS_SUBMITTED: None,
    CLASS_POSTING: None,
    CLASS_RESUMING: False,
    CLASS_WAITING: False,
    CLASS_RETRIES: 0,
}
DEFAULTS.update(CLASS)
# What leaving a class resets (the rest of CLASS is the page's, or a teacher's pacing for a next class).
CLASS_IDENTITY = (
    CLASS_CODE, CLASS_ROLE, CLASS_KEY, CLASS_TOKEN, CLASS_SEAT, CLASS_APPLIED, CLASS_FOLLOWED_UID, CLASS_WAITING,
)  # fmt: skip
ANSWERS_HIDDEN = "answers.hidden"  # bool: the display hides this lesson stop's answer lines until the reveal
DEFAULTS[ANSWERS_HIDDEN] = False

# ---- keys of elements with no default: buttons, charts, components, containers ----------------
# (a key is spelled here once; the code that draws the element names the constant)
BATCH_CACHE = "batch.cache"
BATCH_HEAT = "batch.heat"
BATCH_PICK = "batch.pick"
# presenter mode prefilled the page's batch on opening it (once a session)
BATCH_PREFILLED_ONCE = "batch.prefilled_once"
BATCH_SPEED_FIG = "batch.speed_fig"
CACHE_TWO_SPEEDS = "cache.two_speeds"
CLASS_ANSWERS = "class.answers"
CLASS_LINE = "class-line"
CLASS_PAGE = "class.page"  # the teacher's page script, as last seen by a full run
CLASS_PAGE_NOW = "class.page_now"  # the page script this student's last full run drew
CLASS_PICK = "class.pick"
CLASS_PLAN = "class.plan"  # (version, plan) as the last poll read it
CLASS_POSE = "class-pose"
CLASS_POSED = "class.posed"  # the Practice question this teacher put to the class (a plan Question), or None
CLASS_QUESTION = "class-question"
CLASS_URL_READ = "class.url_read"
CLICKER = "clicker"
COST_MEASURED_FIG = "cost.measured_fig"
COST_SHAPES_FIG = "cost.shapes_fig"
COST_STEP_WORK_FIG = "cost.step_work_fig"
CTX_BYTES = "ctx.bytes"
CTX_HEAT = "ctx.heat"
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
LAT_FIGURE_30_1 = "lat.figure_30_1"
LAT_FIGURE_REQUEST = "lat.figure_request"  # which request of several Figure 30.1 draws (its index)
LAT_TIMELINE_FIG = "lat.timeline_fig"
LESSON_BACK = "lesson.back"
LESSON_BAR = "lesson-bar"
LESSON_FOCUS = "lesson-focus"
LESSON_JUMP = "lesson.jump"
LESSON_KEYS = "lesson-keys"
LESSON_LEAVE = "lesson.leave"
LESSON_LEFT = "lesson.left"
LESSON_NEXT = "lesson.next"
LESSON_NOTE = "lesson-note"
LESSON_PREV = "lesson.prev"
LESSON_RIGHT = "lesson.right"
LESSON_SCROLL = "lesson-scroll"
LESSON_SCROLL_KEY = "lesson.scroll"
LESSON_TITLE = "lesson-title"
LESSON_URL_READ = "lesson.url_read"
MEMORY_GGUF_BUDGET_FIG = "memory.gguf_budget_fig"
MEMORY_VARIANTS_FIG = "memory.variants_fig"
MEMORY_STATE_FIG = "memory.state_fig"  # a hybrid's growing KV cache beside its flat state
MODEL_ARGS_SHOWN = "model.args_shown"
MODEL_REFUSAL = "model.refusal"  # (name, message) of the last refused choice, shown until another choice
MODEL_REFUSAL_SHOWN = "model.refusal_shown"
PAGED_COMPARE_FIG = "paged.compare_fig"
PAGED_POOL = "paged.pool"
PAGED_TABLES = "paged.tables"
PRACTICE_NOTHING_TYPED = "practice.nothing_typed"
PRACTICE_PICK = "practice.pick"
QM_SWEEP_FIG = "qm.sweep_fig"
QUANT_BLOCK_FIG = "quant.block_fig"
QUANT_BPW_FIG = "quant.bpw_fig"
QUANT_RULER_FIG = "quant.ruler_fig"
QUANT_VALUES_DRAWN = "quant.values_drawn"  # the values the whole page last drew (the real-format block reads them too)
SEE_ANIMATION = "see.animation"
SESSION_STARTED = "session.started"
SPEC_DIST_FIG = "spec.dist_fig"
SPEC_DIST_GREEDY = "spec.dist_greedy"
# presenter mode sampled the check on opening the page (once a session)
SPEC_DIST_SAMPLED_ONCE = "spec.dist_sampled_once"
SPEED_INTENSITIES_FIG = "speed.intensities_fig"
SPEED_ROOFLINE_FIG = "speed.roofline_fig"
SPEED_TWO_MACHINES_FIG = "speed.two_machines_fig"
STAGE_ANSWER = "stage.answer"
STAGE_FULLTEXT = "stage-fulltext"
STAGE_QUESTION = "stage-question"
STAGE_STEP = "stage-step"
UI_PAGE = "ui.page"
UI_PREV_PAGE = "ui.prev_page"
URL_APPLIED = "url.applied"
WEIGHTS_BUDGET_FIG = "weights.budget_fig"
WORKED_GRID = "worked.grid"
WORKED_VECTORS = "worked.vectors"
CLASS_BAR = "class-bar"  # the console's class bar
CLASS_JOIN_BOX = "class-join-box"  # the display's join code and QR code
CLASS_JOINING = "class.joining"  # the console's Joining open switch
CLASS_LISTENER = "class-listener"  # the class event stream's listener component
CLASS_PULSE_SEEN = "class.pulse_seen"  # the last pulse this session ran for, as the stream wrote it (JSON)
CLASS_PAIR_CODE = "class.pair_code"  # the one-time code the console showed for a second device
CLASS_PAIR_TYPED = "class.pair_typed"  # the sidebar's box for that code
CLASS_PAUSED = "class-paused"  # a student's pause cover (a fixed element, assets/style/a11y.css)
CLASS_POST = "class-post"  # + the route: the class_post component
CLASS_SEATS = "class.seats"  # the start panel's Seats box
LESSON_HANDOUT = "lesson.handout"
PRACTICE_HANDOUT = "practice.handout"
