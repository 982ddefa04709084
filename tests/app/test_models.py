"""The sidebar's model picker and the pages on a chosen checkpoint (AppTest, no network).

Checkpoints are tiny random models written here with ``transformers``; the app finds them through
its own command line (``--models-dir``), given by setting ``sys.argv`` as ``streamlit run main.py
-- …`` does and clearing the per-process caches that read it.
"""

import shutil
import sys

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from bench.fresh_app import APP, new_app
from core.checkpoints.load import load
from core.cost.counts import kv_cache_bytes_for
from core.decode import session_view
from core.decode import settings as decode_settings
from core.decode.generate import full_forward
from core.model.shipped import ROOT
from core.model.tokenizer import encode
from tests.core.checkpoints.test_load import write_checkpoint
from tests.helpers.app_util import attention_rows, click, stage, stage_matrix
from ui import memory_terms
from ui import models as ui_models
from ui.decode import keys as decode_keys

MAIN = (ROOT / "main.py").as_posix()  # sys.argv[0] of `streamlit run main.py -- …`

NAME = "tiny-llama"


def _clear_caches() -> None:
    for cached in (ui_models.app_args, ui_models._found, ui_models.store):
        cached.clear()


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """A models dir with a loadable tiny Llama and a truncated copy (listed, refused on load), and
    a pickle-only folder outside it (for --model)."""
    root = tmp_path_factory.mktemp("models")
    models = root / "models"
    write_checkpoint(models / NAME, "llama")
    config = models / NAME / "config.json"  # RoPE has no position table: a longer window is only a number
    config.write_text(config.read_text().replace('"max_position_embeddings": 64', '"max_position_embeddings": 512'))
    bad = models / "truncated-llama"
    shutil.copytree(models / NAME, bad)
    data = (bad / "model.safetensors").read_bytes()
    (bad / "model.safetensors").write_bytes(data[: len(data) - 1000])
    pickle = root / "pickle-only"
    pickle.mkdir()
    shutil.copy(models / NAME / "config.json", pickle)
    shutil.copy(models / NAME / "tokenizer.json", pickle)
    (pickle / "pytorch_model.bin").write_bytes(b"not really a pickle")
    (root / "hub").mkdir()
    return {"models": models, "pickle": pickle, "hub": root / "hub"}


@pytest.fixture
def app_args(folders, monkeypatch):
    """Run the app as ``streamlit run main.py -- --models-dir DIR [more]`` with an empty HF cache."""

    def with_args(*more):
        monkeypatch.setattr(sys, "argv", [MAIN, "--models-dir", str(folders["models"]), *more])
        monkeypatch.setenv("HF_HUB_CACHE", str(folders["hub"]))
        _clear_caches()
        return folders

    yield with_args
    _clear_caches()


def choose(at, name: str):
    at.selectbox(key=ui_models.MODEL_CHOICE).set_value(name).run()
    assert not at.exception, at.exception
    return at


def test_picking_a_checkpoint_steps_it_on_the_decode_page(app_args):
    """The picker lists the shipped model and the folder's checkpoints; after choosing one, Prefill
    and Step run it: one row per prompt position, then one more per Step, the rows are that
    model's attention, and the last logits equal a full forward pass of the same folder."""
    folders = app_args()
    at = new_app()
    options = at.selectbox(key=ui_models.MODEL_CHOICE).options
    assert options[0].startswith("The shipped model") and any(NAME in o for o in options)
    choose(at, NAME)
    model, tok, card = load(folders["models"] / NAME)
    n = len(encode(tok, decode_settings.DEFAULT_PROMPT))
    click(at, "Prefill")
    assert attention_rows(at) == n
    assert stage(at)["explainer_attention"]["title"].startswith(f"{NAME} · Layer 1, head 0, prefill")
    for k in range(1, 4):
        click(at, "Step ▸")
        assert stage(at)["explainer_attention"]["kind"] == "row" and attention_rows(at) == n + k
    sess = at.session_state[decode_keys.DECODE_SESSION]
    assert sess.model_key.source == str(folders["models"] / NAME)
    layer, head = at.session_state[decode_keys.DECODE_LAYER], at.session_state[decode_keys.DECODE_HEAD]
    assert layer == model.cfg.n_layer - 1  # the default layer 3 clamped to the 2-layer model
    click(at, "Prefill")  # the same prompt again: one full drawing to compare
    got = np.array([[np.nan if x is None else x for x in r] for r in stage_matrix(stage(at)["explainer_attention"])])
    want = session_view.attention_matrix(at.session_state[decode_keys.DECODE_SESSION], layer, head)
    assert np.allclose(got, want, atol=1e-4, equal_nan=True)
    ref = full_forward(model, sess.consumed).logits
    assert torch.allclose(sess.logits, ref, atol=1e-4)
    card_text = " ".join(str(t.value) for t in at.sidebar.table)
    assert card.architecture in card_text and f"{card.n_params:,}" in card_text


def test_prefill_pressed_before_the_picked_model_loaded_runs_that_model(app_args):
    """A teacher picks a checkpoint and presses Prefill before the page has finished loading it:
    the browser then sends the new choice and the click in one rerun, and Prefill's callback runs
    before the page's own model switch. The request is the new model's (one row per position of
    its tokenizer), not the old model's request dropped by the switch a moment later."""
    folders = app_args()
    at = new_app()
    at.selectbox(key=ui_models.MODEL_CHOICE).set_value(NAME)  # no run: that rerun was cut short by the click
    click(at, "Prefill")
    sess = at.session_state[decode_keys.DECODE_SESSION]
    assert sess is not None and sess.model_key.source == str(folders["models"] / NAME)
    _, tok, _ = load(folders["models"] / NAME)
    assert attention_rows(at) == len(encode(tok, decode_settings.DEFAULT_PROMPT))


def test_memory_page_bytes_equal_the_checkpoints_real_cache(app_args):
    """On the memory page the chosen checkpoint is the preset, and the formula's bytes at T
    positions equal a real KVCache of that model filled by a prefill (2·L·T·H_kv·d·4)."""
    folders = app_args()
    at = new_app()
    choose(at, NAME)
    at.switch_page("app_pages/memory.py").run()
    assert at.selectbox(key="memory.preset").value == memory_terms.CHOSEN_PRESET
    cfg = load(folders["models"] / NAME)[0].cfg
    want = kv_cache_bytes_for(cfg, 10, 4)
    assert want == 2 * cfg.n_layer * 10 * cfg.n_kv_head * cfg.head_dim * 4
    [t_input] = [t for t in at.text_input if t.label.startswith("T:")]
    t_input.set_value("10").run()
    assert not at.exception
    assert any(f"{want:,} bytes — equal to the formula" in s.value for s in at.success)


def test_a_refused_folder_says_why_and_the_pages_keep_their_model(app_args):
    """A listed folder whose safetensors file is truncated is refused on screen with its reason;
    the picker goes back to the model in use and the decode page still runs it."""
    app_args()
    at = new_app()
    choose(at, "truncated-llama")
    errors = " ".join(e.value for e in at.error)
    assert "Cannot use truncated-llama: model.safetensors is not a readable safetensors file" in errors
    assert at.selectbox(key=ui_models.MODEL_CHOICE).value == "The shipped model"
    click(at, "Prefill")
    assert at.session_state[decode_keys.DECODE_SESSION].model_key.source is None


def test_a_pickle_only_model_on_the_command_line_is_refused(app_args, folders):
    """``--model`` naming a pickle-only folder: the first page says it is refused (never
    unpickled) and the session runs the shipped model."""
    app_args("--model", str(folders["pickle"]))
    at = new_app()
    errors = " ".join(e.value for e in at.error)
    assert "Cannot use pickle-only: pickle-only has only pickle weights (pytorch_model.bin)" in errors
    assert at.session_state[ui_models.MODEL_ACTIVE] is None


def test_two_sessions_with_different_models_stay_independent(app_args):
    """One session on the checkpoint, one on the shipped model: each prefills and steps its own
    model (its own tokens and cache shape), and switching one does not change the other."""
    app_args()
    a, b = new_app(), new_app()
    choose(a, NAME)
    click(a, "Prefill")
    click(b, "Prefill")
    click(a, "Step ▸")
    click(b, "Step ▸")
    sa, sb = a.session_state[decode_keys.DECODE_SESSION], b.session_state[decode_keys.DECODE_SESSION]
    assert sa.model_key.source is not None and sb.model_key.source is None
    assert sa.cache.cfg.n_layer == 2 and sb.cache.cfg.n_layer == 4
    b.run()
    assert b.selectbox(key=ui_models.MODEL_CHOICE).value == "The shipped model"
    assert b.session_state[decode_keys.DECODE_SESSION] is sb and sb.n_steps == 1


def test_context_weights_and_quantization_pages_use_the_checkpoint(app_args):
    """On the chosen checkpoint: the context window slider stops at its (budget-capped) window and
    the run's cache bytes are that model's; the weights page gives its exact parameter count and
    float32 bytes; the quantization page evaluates only on request, then shows a float32 row with
    the model's own weight bytes."""
    folders = app_args()
    model, _, card = load(folders["models"] / NAME)
    at = new_app()
    choose(at, NAME)
    at.switch_page("app_pages/context.py").run()
    assert not at.exception and at.slider(key="ctx.window").max == card.context_window == 512  # within 64 MiB
    at.switch_page("app_pages/weights.py").run()
    n = sum(p.numel() for p in model.parameters())
    assert any(f"{n:,} parameters" in m.value and f"{4 * n:,} bytes" in m.value for m in at.markdown)
    at.switch_page("app_pages/quant_model.py").run()
    assert not at.exception and not at.dataframe[1:]  # the flip table only, until asked
    [go] = [b for b in at.button if b.label.startswith("Evaluate")]
    go.click().run()
    assert not at.exception
    first = at.dataframe[1].value.iloc[0]
    assert first["model"] == "float32" and first["weight bytes"] == f"{4 * n:,}"


def test_speculative_page_says_when_no_draft_was_found(app_args):
    """A checkpoint with no smaller one of the same vocabulary on the machine: the page says none
    was found instead of drafting with a model of another tokenizer."""
    app_args()
    at = new_app()
    choose(at, NAME)
    at.switch_page("app_pages/speculative.py").run()
    assert not at.exception
    assert any("No draft for tiny-llama" in i.value for i in at.info)


def test_speculative_page_drafts_with_a_smaller_checkpoint_of_the_same_vocabulary(folders, tmp_path, monkeypatch):
    """With a 1-layer checkpoint of the same tokenizer beside the 2-layer one, the page names it as
    the draft; Start and one greedy round produce the target's own greedy tokens."""
    from core.decode.generate import SamplingConfig, generate_cached
    from tests.core.checkpoints.test_choice import _llama
    from tests.core.checkpoints.test_load import byte_level_tokenizer

    models = tmp_path / "models"
    shutil.copytree(folders["models"] / NAME, models / NAME)
    _llama(models / "one-layer", 1, byte_level_tokenizer())
    monkeypatch.setattr(sys, "argv", [MAIN, "--models-dir", str(models)])
    monkeypatch.setenv("HF_HUB_CACHE", str(folders["hub"]))
    _clear_caches()
    try:
        at = new_app()
        choose(at, NAME)
        at.switch_page("app_pages/speculative.py").run()
        assert "Draft: one-layer" in at.caption[0].value
        click(at, "Start (prefill the target)")
        click(at, "Round ▸")
        spec = at.session_state["spec.obj"]
        target, tok, _ = load(models / NAME)
        ids = encode(tok, decode_settings.DEFAULT_PROMPT)
        want = generate_cached(target, ids, spec.produced, SamplingConfig()).tokens
        assert spec.ids[spec.n_prompt :] == want
    finally:
        _clear_caches()


def test_float64_quantized_weights_and_a_share_link_on_the_checkpoint(app_args, monkeypatch):
    """float64 loads the checkpoint again in float64 (cached and recomputed logits within 1e-9);
    4-bit weights past the page's size limit are refused with the reason; the share link names the
    model, and opening it replays the steps on that model."""
    from ui.decode import actions

    app_args()
    at = new_app()
    choose(at, NAME)
    at.radio(key=decode_keys.DECODE_DTYPE).set_value("float64").run()
    click(at, "Prefill")
    click(at, "Step ▸")
    sess = at.session_state[decode_keys.DECODE_SESSION]
    assert sess.cache.dtype == torch.float64 and sess.max_diff[-1] < 1e-9
    at.session_state["decode.more"] = True  # open "Share this request"
    at.run()
    click(at, "Put a link to this request in the address bar")
    link = dict(at.query_params)
    assert link["model"] == NAME and link["dtype"] == "float64" and link["step"] == "1"
    monkeypatch.setattr(actions, "QUANTIZE_MAX_PARAMS", 1000)
    at.radio(key=decode_keys.DECODE_WEIGHT_BITS).set_value(4).run()
    click(at, "Prefill")
    assert any("quantizing this checkpoint's weights is refused" in e.value for e in at.error)
    opened = AppTest.from_file(APP, default_timeout=60)
    for k, v in link.items():
        opened.query_params[k] = v
    opened.run()
    assert not opened.exception
    replay = opened.session_state[decode_keys.DECODE_SESSION]
    assert replay.model_key.source == sess.model_key.source and replay.n_steps == 1
    assert replay.outputs == sess.outputs


def test_a_malformed_command_line_is_said_once_and_the_defaults_apply(app_args):
    """``-- --max-model-gib -1``: the first page names the option, the app runs on the shipped model."""
    app_args("--max-model-gib", "-1")
    at = new_app()
    assert any("--max-model-gib must be a positive number of GiB" in e.value for e in at.error)
    assert at.selectbox(key=ui_models.MODEL_CHOICE).value == "The shipped model"
    at.run()
    assert not [e for e in at.error if "max-model-gib" in e.value]


def test_quantization_page_on_a_short_window_uses_the_end_of_the_default_prompt(folders, tmp_path, monkeypatch):
    """A checkpoint whose 64-position window cannot hold the default prompt: the flip finder reads
    the prompt's last 32 tokens and says so, instead of failing."""
    models = tmp_path / "models"
    from tests.core.checkpoints.test_load import write_checkpoint as write

    write(models / "short-window", "llama")  # max_position_embeddings 64
    monkeypatch.setattr(sys, "argv", [MAIN, "--models-dir", str(models)])
    monkeypatch.setenv("HF_HUB_CACHE", str(folders["hub"]))
    _clear_caches()
    try:
        at = new_app()
        choose(at, "short-window")
        at.switch_page("app_pages/quant_model.py").run()
        assert not at.exception
        assert any("Using the default prompt (its end)" in c.value for c in at.caption)
        _, tok, _ = load(models / "short-window")
        want = encode(tok, decode_settings.DEFAULT_PROMPT)[-32:]
        assert ui_models.default_request(str(models / "short-window")).prompt_ids == want
    finally:
        _clear_caches()
