"""Streamlit glue for the model a session runs: the app's command line, loading a checkpoint with a
progress bar, keeping the choice per session (the sidebar's picker and card: ``ui.picker``). Numbers and rules live in
``core.checkpoints.choice``; this module only keeps them per session and per process.

The choice is per session (``MODEL_CHOICE``); the loaded models are per process and only
read (``core.checkpoints.choice.ModelStore`` in ``st.cache_resource``). A student picks a name from
the list; no path typed in a browser is ever read.
"""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st
import torch

from core.checkpoints.app_options import MAIN_SCRIPTS, AppArgs, parse_app_args
from core.checkpoints.choice import (
    SHIPPED,
    ModelOption,
    ModelStore,
    default_choice,
    draft_candidates,
    model_options,
    prefill_positions_cap,
)
from core.checkpoints.sources import find_checkpoints, hub_dir
from core.decode import session
from core.decode import settings as decode_settings
from core.decode.generate import SamplingConfig
from core.decode.session_types import ModelKey
from core.evaluate.quant_quality import CHECKPOINT_PLAN, SHIPPED_PLAN, sweep
from core.evaluate.step_times import measured_kv_bytes
from core.model import shipped
from core.model.config import GPTConfig
from core.model.shipped import ASSETS, ROOT
from core.model.tokenizer import encode
from core.quant.model_weights import quantize_weights

MODEL_CHOICE = "model.choice"  # the picker's name (core.checkpoints.choice.ModelOption.name); None: not chosen yet

MODEL_ACTIVE = "model.active"  # the ModelOption the pages use (loaded); None: the shipped model

URL_MODEL_IGNORED = "url.model_ignored"  # list[str]: a ?model= this server does not have

MODEL_ARGS_SHOWN = "model.args_shown"

MODEL_REFUSAL = "model.refusal"  # (name, message) of the last refused choice, shown until another choice

MODEL_REFUSAL_SHOWN = "model.refusal_shown"

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    MODEL_CHOICE: None,
    MODEL_ACTIVE: None,
}


# One thread per request: with a whole class on two cores, extra intra-op threads only
# fight each other (and the browser) for the same cores; the tiny model gains nothing.
torch.set_num_threads(1)


@st.cache_resource(show_spinner="Loading the shipped model…")
def model(dtype: str = "float32"):
    """The shipped model, loaded once per dtype and shared read-only by every session."""
    return shipped.load_model(dtype)


@st.cache_resource(show_spinner="Quantizing the model's weights…")
def quantized_model(dtype: str, n_bit: int, group_size: int = 32):
    """The shipped model with weight-only ``n_bit`` quantization (``group_size`` inputs per scale),
    shared read-only."""
    return quantize_weights(model(dtype), n_bit, group_size)


def model_for(key):
    """The shared model for a ``core.decode.session.ModelKey`` (source, precision, weight bits or None)."""
    key = ModelKey.of(key)
    if key.source is not None:
        if key.weight_bits is None:
            return checkpoint_model(key.source, key.dtype)
        return quantized_checkpoint(key.source, key.dtype, key.weight_bits)
    return model(key.dtype) if key.weight_bits is None else quantized_model(key.dtype, key.weight_bits)


@st.cache_resource(show_spinner="Loading the draft model…")
def draft_model(dtype: str = "float32"):
    """The speculative-decoding draft (assets/draft/), shared read-only."""
    return shipped.load_model(dtype, ASSETS / "draft")


@st.cache_resource
def tokenizer():
    return shipped.load_shipped_tokenizer()


@st.cache_data
def model_card() -> dict:
    return shipped.load_model_card()


@st.cache_resource(show_spinner=False)
def app_args() -> tuple[AppArgs, str | None]:
    """The options after ``--`` of ``streamlit run main.py -- --model PATH …``, parsed once per
    process, and the message if they were malformed (then the defaults apply). Only when this
    process runs main.py (or app.py) as its main script: under a test runner ``sys.argv`` is the runner's
    (tests give options by setting ``sys.argv`` and clearing this cache)."""
    if not sys.argv or Path(sys.argv[0]).resolve() not in {ROOT / name for name in MAIN_SCRIPTS}:
        return AppArgs(), None
    try:
        return parse_app_args(sys.argv[1:]), None
    except ValueError as err:
        return AppArgs(), str(err)


@st.cache_data(ttl=60, show_spinner=False)
def _found(models_dir: str | None, hub: str):
    """Checkpoints on disk, listed again at most once a minute (a model a teacher adds shows up)."""
    return find_checkpoints(models_dir, Path(hub))


def options() -> dict[str, ModelOption]:
    args, _ = app_args()
    return model_options(args.model, _found(str(args.models_dir) if args.models_dir else None, str(hub_dir())))


@st.cache_resource(show_spinner=False)
def store() -> ModelStore:
    """The loaded checkpoints of this process, shared read-only by every session."""
    return ModelStore(app_args()[0].max_model_gib)


def checkpoint(path: str, dtype: str = "float32", progress=None):
    """``(model, tokenizer, card)`` of a listed checkpoint folder, loaded once per process."""
    return store().get(path, dtype, progress)


def checkpoint_model(path: str, dtype: str = "float32"):
    """The model of a listed checkpoint folder as ``dtype``, loaded once per process. No progress
    bar here: this runs inside button callbacks (Prefill in float64), where streamlit cannot draw
    one; the picker's load (``resolve``) shows it."""
    return checkpoint(path, dtype)[0]


@st.cache_resource(show_spinner="Quantizing the checkpoint's weights…", max_entries=1)
def quantized_checkpoint(source: str, dtype: str, n_bit: int, group_size: int = 32):
    """A loaded checkpoint with weight-only ``n_bit`` quantization, shared read-only (one kept: each
    is a full copy of the model)."""
    return quantize_weights(checkpoint_model(source, dtype), n_bit, group_size)


def chosen_source() -> str | None:
    """This session's model: None for the shipped model, else its checkpoint folder."""
    return active().path


def chosen_model(dtype: str = "float32"):
    """The model this session chose in the sidebar (shared, read-only)."""
    return model_for((dtype, None, chosen_source()))


def tokenizer_for(source: str | None):
    """The tokenizer of the shipped model (None) or of a loaded checkpoint folder."""
    return tokenizer() if source is None else checkpoint(source)[1]


def chosen_tokenizer():
    return tokenizer_for(chosen_source())


def chosen_card():
    """The loaded checkpoint's ``core.checkpoints.load.CheckpointCard``; None for the shipped model."""
    source = chosen_source()
    return None if source is None else checkpoint(source)[2]


def chosen_draft():
    """The speculative-decoding pair for this session: ``(target, draft, draft_name)``. The shipped
    model drafts with ``assets/draft``; a checkpoint with the smallest found checkpoint that has
    its vocabulary (``core.checkpoints.choice.find_draft``), or ``draft`` None if there is none."""
    if chosen_source() is None:
        return model(), draft_model(), "the shipped draft (assets/draft)"
    for found in _draft_candidates(active()):
        try:
            return chosen_model(), checkpoint_model(found.path), found.name
        except ValueError:
            continue  # a refused folder (truncated, over the budget…) drafts nothing: try the next
    return chosen_model(), None, None


@st.cache_resource(show_spinner="Running the default prompt…", max_entries=4)
def default_request(source: str | None):
    """The default prompt prefilled on a model (greedy), shared read-only: what the quantization
    page reads when this session has no request of its own. A model whose window is shorter than
    twice the prompt gets its last half-window of tokens (the end, where the reply starts)."""
    model = model_for_source(source)
    ids = encode(tokenizer_for(source), decode_settings.DEFAULT_PROMPT)
    return session.start(model, ids[-(model.cfg.block_size // 2) :], SamplingConfig())


def model_for_source(source: str | None, dtype: str = "float32"):
    return model_for((dtype, None, source))


def quant_plan(source: str | None):
    """The quantization page's evaluation for a model (``core.evaluate.quant_quality.EvalPlan``)."""
    return SHIPPED_PLAN if source is None else CHECKPOINT_PLAN


@st.cache_data(show_spinner="Evaluating the quantized models…")
def quant_sweep(source: str | None, group_size: int, rounding: str) -> dict:
    """``core.evaluate.quant_quality.sweep`` of a model under its plan: deterministic, so computed once for
    the whole class (every caller gets its own copy)."""
    plan = quant_plan(source)
    return sweep(model_for_source(source), plan.windows(tokenizer_for(source)), plan.bits, group_size, rounding)


SHIPPED_ONLY = {
    "batching": "it decodes up to 16 requests together and times batch sizes up to 16 on the spot",
    "paged": "each session holds its own block pool (8 MiB here: 256 shipped-model positions, a handful of a "
    "real model's) and the page compares two schedulers by serving every request",
    "cost": "the measurement times a full recompute at nine lengths, 11 times each",
    "latency": "the measurement serves four requests with and without the KV cache",
    "cache": "it prefills the text seven times (edited, re-tokenized, shifted, windowed, rounded, adapted)",
    "see_it_move": "it decodes to the end of the context window",
}


def shipped_only_note(page: str) -> None:
    """On a page that keeps the shipped model: say so when this session chose a checkpoint."""
    if active().path is not None:
        st.info(f"This part runs the shipped model, not {active().name}: {SHIPPED_ONLY[page]}; with a model of "
                "real size that would keep the page busy for a long time.", icon=":material/info:")  # fmt: skip


@st.cache_data(ttl=60, show_spinner=False)
def _draft_candidates(target: ModelOption):
    """``core.checkpoints.choice.draft_candidates`` among the listed checkpoints, kept a minute (it reads
    every candidate's tokenizer.json)."""
    return draft_candidates(target, options())


def choose_from_link(name: str) -> None:
    """A share link's ``model=NAME``: choose it if this server lists that name (a name, never a
    path), else keep the session's model and say why."""
    if name in options():
        st.session_state[MODEL_CHOICE] = name
    else:
        st.session_state[URL_MODEL_IGNORED] = [f"model={name[:60]!r} is not a model this server has"]


def load_with_progress(opt: ModelOption, dtype: str = "float32"):
    """Load ``opt`` as ``dtype`` with a progress bar in the main area (a checkpoint already loaded
    by any session returns at once). Raises ``ValueError`` with the refusal."""
    if store().loaded(opt.path, dtype):
        return checkpoint(opt.path, dtype)
    bar = st.progress(0.0, text=f"Loading {opt.name} ({dtype})…")
    try:
        return checkpoint(opt.path, dtype, lambda f: bar.progress(f, text=f"Loading {opt.name} ({dtype})… {f:.0%}"))
    finally:
        bar.empty()


# What a switch of model drops, in every page's state: ui.session (which knows every owner) puts its
# ``forget_model_state(cfg, checkpoint)`` here once, at import; read-only afterwards.
FORGET: list = []


def _forget(cfg, checkpoint: bool) -> None:
    for forget in FORGET:
        forget(cfg, checkpoint)


def take_link_notes() -> list[str]:
    """What a link's ``?model=`` could not use (said once with the link's other notes)."""
    return st.session_state.pop(URL_MODEL_IGNORED, [])


def active() -> ModelOption:
    """The model this session's pages use (the shipped model until a checkpoint has loaded)."""
    return st.session_state.get(MODEL_ACTIVE) or ModelOption(SHIPPED)


def resolve() -> None:
    """Make the session's choice the model its pages use, before any page runs: a new session
    starts on the ``--model`` folder (else the shipped model); a changed choice is loaded (with a
    progress bar); a refused one is said on screen and the picker goes back to the model in use.
    Switching drops what this session computed with the previous model."""
    ss, opts = st.session_state, options()
    args, _ = app_args()
    if ss.get(MODEL_CHOICE) is None:
        ss[MODEL_CHOICE] = default_choice(args.model, opts)
    want = ss[MODEL_CHOICE]
    now = active()
    if want not in opts:  # gone from disk since it was listed
        ss[MODEL_REFUSAL] = (want, "it is no longer on this machine")
        ss[MODEL_CHOICE] = want = now.name if now.name in opts else SHIPPED
    if want == now.name:
        if now.path is not None and not store().loaded(now.path, "float32"):
            try:  # let go by this process since (others were loaded): read again, with the bar
                load_with_progress(now)
            except ValueError as err:  # changed on disk since: back to the shipped model
                ss[MODEL_REFUSAL], ss[MODEL_CHOICE], ss[MODEL_ACTIVE] = (
                    (want, str(err)),
                    SHIPPED,
                    None,
                )
                _forget(shipped_cfg(), False)
        return
    opt = opts[want]
    if opt.path is None:
        cfg = shipped_cfg()
    else:
        try:
            cfg = load_with_progress(opt)[0].cfg
        except ValueError as err:
            ss[MODEL_REFUSAL] = (want, str(err))
            ss[MODEL_CHOICE] = now.name if now.name in opts else SHIPPED
            return
    ss[MODEL_REFUSAL] = None
    ss[MODEL_ACTIVE] = None if opt.path is None else opt
    _forget(cfg, opt.path is not None)


@st.cache_resource(show_spinner=False)
def shipped_cfg():
    return GPTConfig.load(ASSETS / "config.json")


CHECK_FLOPS = 4e10  # one check's prefill: well under a second on a laptop core (≈ 2 · parameters per position)


def check_real_cache(model, name: str, lengths: list[int], formula_bytes: int) -> None:
    """The memory page's check: fill real KVCache tensors of ``model`` at ``lengths`` positions and
    compare their bytes with the formula's, when one prefill of that size stays cheap."""
    cap = prefill_positions_cap(model.n_params(), CHECK_FLOPS)
    if max(lengths) > model.cfg.block_size or sum(lengths) > cap:
        st.info(
            f"Not checked against a real cache at these lengths: the check prefills the model, and here it runs "
            f"at most {min(cap, model.cfg.block_size):,} positions in all (its cache is allocated for "
            f"{model.cfg.block_size:,}). Give shorter lengths to check."
        )
        return
    real = sum(measured_kv_bytes(model, t) for t in lengths)
    verdict = "equal to" if real == formula_bytes else "DIFFERENT from"
    st.success(f"Real KVCache tensors of {name} at these lengths: {real:,} bytes — {verdict} the formula.")
