"""Choosing a model: the picker's entries, the draft finder, the shared store, the work caps."""

import threading

import pytest
import transformers

from core.checkpoints.choice import (
    SHIPPED,
    ModelOption,
    ModelStore,
    default_choice,
    find_draft,
    model_options,
    prefill_positions_cap,
    window_cap,
)
from core.checkpoints.sources import find_checkpoints
from core.cost.counts import kv_cache_bytes_for
from core.model.config import PRESETS, GPTConfig
from tests.core.checkpoints.test_load import SMALL, byte_level_tokenizer, metaspace_tokenizer


def _llama(folder, n_layer: int, tok):
    cfg = transformers.LlamaConfig(**{**SMALL, "num_hidden_layers": n_layer}, num_key_value_heads=2)
    transformers.LlamaForCausalLM(cfg).save_pretrained(folder, safe_serialization=True)
    tok.save(str(folder / "tokenizer.json"))
    return folder


@pytest.fixture(scope="module")
def found(tmp_path_factory):
    root = tmp_path_factory.mktemp("choice")
    _llama(root / "big", 4, byte_level_tokenizer())
    _llama(root / "small", 1, byte_level_tokenizer())
    _llama(root / "medium", 2, byte_level_tokenizer())
    _llama(root / "other-vocab", 1, metaspace_tokenizer())
    return root, find_checkpoints(root, root / "no-hub")


def test_options_list_the_shipped_model_first_and_the_command_line_default(found, tmp_path):
    """Shipped first, then every found folder by name; --model defaults a new session to it, and a
    --model folder outside the found ones is listed too (so choosing it can say why it fails)."""
    root, listed = found
    opts = model_options(None, listed)
    assert list(opts) == [SHIPPED, "big", "medium", "other-vocab", "small"]
    assert default_choice(None, opts) == SHIPPED
    assert default_choice(root / "medium", model_options(root / "medium", listed)) == "medium"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    opts = model_options(elsewhere, listed)
    assert opts["elsewhere"].path == str(elsewhere) and default_choice(elsewhere, opts) == "elsewhere"


def test_the_draft_is_the_smallest_checkpoint_with_the_same_vocabulary(found):
    """big drafts with small (1 layer, same tokenizer), not other-vocab (fewer bytes but another
    vocabulary) nor medium (larger than small); the smallest has no draft; the shipped model none."""
    _, listed = found
    opts = model_options(None, listed)
    assert opts["other-vocab"].file_bytes <= opts["small"].file_bytes < opts["medium"].file_bytes
    assert find_draft(opts["big"], opts).name == "small"
    assert find_draft(opts["medium"], opts).name == "small"
    assert find_draft(opts["small"], opts) is None
    assert find_draft(opts["other-vocab"], opts) is None
    assert find_draft(ModelOption(SHIPPED), opts) is None


def test_store_loads_each_folder_once_for_every_thread_and_forgets_refusals(found):
    """Four threads asking for one folder get the same model object from one load; at most
    max_models are kept (least recently used dropped); a refusal is raised and not kept."""
    root, _ = found
    calls = []

    def loader(path, dtype, **kw):
        calls.append(path)
        from core.checkpoints.load import load

        return load(path, dtype, **kw)

    store = ModelStore(max_models=2, loader=loader)
    got = []
    threads = [threading.Thread(target=lambda: got.append(store.get(str(root / "small")))) for _ in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert len(calls) == 1 and all(g[0] is got[0][0] for g in got)
    store.get(str(root / "medium"))
    store.get(str(root / "big"))
    assert not store.loaded(str(root / "small"), "float32") and store.loaded(str(root / "big"), "float32")
    with pytest.raises(ValueError, match="not a folder"):
        store.get(str(root / "missing"))
    assert not store.loaded(str(root / "missing"), "float32")


def test_window_cap_keeps_cache_and_attention_within_the_budget():
    """The cap W is the largest multiple of 8 whose KV cache (2·L·H_kv·d·4 per position) plus
    attention kept (L·H·4 · (W² + n_new·W)) fits; W + 8 would not. The shipped model keeps its
    whole 256-position window under 64 MiB."""
    cfg = PRESETS["shipped"]
    assert window_cap(cfg, 64 * 2**20, 200) == 256
    smol = GPTConfig(vocab_size=49152, block_size=2048, n_layer=30, n_head=9, n_kv_head=3, n_embd=576, ffn_hidden=1536)

    def need(w):
        return kv_cache_bytes_for(smol, w, 4) + 30 * 9 * 4 * (w * w + 200 * w)

    w = window_cap(smol, 64 * 2**20, 200)
    assert w % 8 == 0 and need(w) <= 64 * 2**20 < need(w + 8)
    assert prefill_positions_cap(134_515_008, 4e10) == 148  # 4e10 / (2 · 134.5 M)
