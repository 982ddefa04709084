"""Qwen2's sliding-window switches, loaded as transformers places the window (``Qwen2Config.layer_types``): on
layers max_window_layers and up when use_sliding_window is true. A tiny random checkpoint with the window on
every layer (max_window_layers 0) is compared with transformers' own model on the same folder."""

import copy
import json

import pytest
import torch

from core.checkpoints.load import load
from core.decode.generate import decode_one_token, prefill
from core.decode.kv_cache import KVCache
from tests.core.checkpoints.test_load import byte_level_tokenizer

transformers = pytest.importorskip("transformers")

SMALL = dict(vocab_size=384, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4)
W = 4  # the window, shorter than the prompt below


@torch.no_grad()
def _checkpoint(folder, **window):
    """A random Qwen2 checkpoint in ``folder`` with the given window fields."""
    torch.manual_seed(0)
    cfg = transformers.Qwen2Config(**SMALL, num_key_value_heads=2, max_position_embeddings=64, **window)
    cfg.eos_token_id, cfg.bos_token_id = 2, 1
    model = transformers.AutoModelForCausalLM.from_config(cfg)
    for p in model.parameters():
        p.normal_(0, 0.3) if p.dim() >= 2 else p.copy_(1 + 0.1 * torch.randn_like(p))
    model.save_pretrained(folder, safe_serialization=True)
    byte_level_tokenizer().save(str(folder / "tokenizer.json"))
    return folder


def test_window_on_every_layer_matches_transformers(tmp_path):
    """use_sliding_window true, max_window_layers 0: Qwen2Config puts the window on every layer, the loader
    loads it (it refused it as "on some layers only"), and prefill plus 10 cached steps equal transformers'
    logits past the window."""
    folder = _checkpoint(tmp_path / "q", use_sliding_window=True, sliding_window=W, max_window_layers=0)
    saved = json.loads((folder / "config.json").read_text())
    assert set(transformers.Qwen2Config(**saved).layer_types) == {"sliding_attention"}
    model, _, _ = load(folder)
    assert model.cfg.sliding_window == W
    hf = transformers.AutoModelForCausalLM.from_pretrained(folder).eval()
    ids = list(range(5, 17))
    out = hf(torch.tensor([ids]), use_cache=True)
    full, _ = model(torch.tensor([ids]))
    assert (full - out.logits).abs().max() < 1e-4
    cache, past = KVCache(model.cfg), out.past_key_values
    step = prefill(model, ids, cache)
    for _ in range(10):
        token = int(step.logits.argmax())
        out = hf(torch.tensor([[token]]), past_key_values=past, use_cache=True)
        past, step = out.past_key_values, decode_one_token(model, token, cache)
        assert (step.logits - out.logits[0, -1]).abs().max() < 1e-4
    plain = copy.deepcopy(model)  # the same weights without the window: the window counts
    object.__setattr__(plain.cfg, "sliding_window", None)
    assert (plain(torch.tensor([ids]))[0] - full).abs().max() > 1e-3


@pytest.mark.parametrize(
    "window,expected",
    [
        (dict(use_sliding_window=True, sliding_window=W, max_window_layers=2), None),  # ≥ L: no layer slides
        (dict(use_sliding_window=False, sliding_window=W, max_window_layers=0), None),  # switched off
    ],
)
def test_window_switched_off_loads_without_one(tmp_path, window, expected):
    """max_window_layers ≥ L, or use_sliding_window false: Qwen2Config slides no layer, nor does the loader."""
    folder = _checkpoint(tmp_path / "q", **window)
    assert set(transformers.Qwen2Config(**json.loads((folder / "config.json").read_text())).layer_types) == {
        "full_attention"
    }
    assert load(folder)[0].cfg.sliding_window is expected


def test_window_on_some_layers_is_refused_naming_the_field(tmp_path):
    """max_window_layers 1 of 2 layers: Qwen2Config slides layer 1 only; the model has one window for all
    layers or none, so the loader refuses it naming max_window_layers and the layers."""
    folder = _checkpoint(tmp_path / "q", use_sliding_window=True, sliding_window=W, max_window_layers=1)
    assert transformers.Qwen2Config(**json.loads((folder / "config.json").read_text())).layer_types == [
        "full_attention",
        "sliding_attention",
    ]
    with pytest.raises(ValueError, match="max_window_layers 1: the sliding window on layer 1 only"):
        load(folder)
