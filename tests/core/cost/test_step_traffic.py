"""FLOPs and bytes of a pass (core/cost/step_traffic.py), checked against the real model."""

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from core.cost import step_traffic
from core.decode.kv_cache import KVCache
from core.model.config import PRESETS, GPTConfig
from core.model.model import GPT

GPT2_LIKE = GPTConfig(
    vocab_size=64, block_size=32, n_layer=2, n_head=4, n_kv_head=4, n_embd=32, ffn_hidden=64,
    norm="layernorm", positions="learned", mlp="gelu_tanh", qkv_bias=True, o_bias=True, mlp_bias=True,
    tie_embeddings=True,
)  # fmt: skip
# Qwen3's kind: per-head q/k norms (2 · head_dim weights per layer), head_dim 16 ≠ n_embd / n_head = 8.
QWEN3_LIKE = GPTConfig(vocab_size=64, block_size=32, n_layer=2, n_head=4, n_kv_head=2, n_embd=32, ffn_hidden=64,
                       head_dim=16, qk_norm=True, tie_embeddings=True)  # fmt: skip
CONFIGS = [PRESETS["tiny"], GPT2_LIKE, PRESETS["shipped"], QWEN3_LIKE]
IDS = ["tiny", "gpt2-like", "shipped", "qwen3-like"]


def _model(cfg):
    torch.manual_seed(0)
    return GPT(cfg).eval()


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_parameter_counts_add_up_to_the_model(cfg):
    """Linear weights + other parameters = the model's own count; linear = every nn.Linear weight."""
    model = _model(cfg)
    lin = step_traffic.linear_params(cfg)
    linears = sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Linear))
    assert lin["total"] == linears
    assert lin["total"] + step_traffic.other_params(cfg)["total"] == model.n_params()


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
@pytest.mark.parametrize("batch,cached,new", [(1, 7, 1), (4, 9, 1), (2, 0, 12), (3, 5, 4)])
def test_flops_equal_torchs_count_of_the_real_pass(cfg, batch, cached, new):
    """FlopCounterMode's count of a real pass (prefill, decode, batched) equals step_flops exactly."""
    model = _model(cfg)
    cache = KVCache(cfg, batch_size=batch)
    with torch.inference_mode():
        if cached:
            model(torch.ones(batch, cached, dtype=torch.long), cache)
        counter = FlopCounterMode(display=False)
        with counter:
            model(torch.ones(batch, new, dtype=torch.long), cache)
    assert counter.get_total_flops() == step_traffic.step_flops(cfg, batch, new, cached + new)["total"]


def test_decode_flops_are_two_per_weight_plus_attention():
    """Per decoded token: 2 · (linear weights) + 2 · 2 · n_layer · n_head · head_dim · S."""
    cfg, S = PRESETS["shipped"], 100
    f = step_traffic.step_flops(cfg, 1, 1, S)
    assert f["linear/flops"] == 2 * step_traffic.linear_params(cfg)["total"]
    assert f["attention/flops"] == 4 * cfg.n_layer * cfg.n_embd * S  # n_head · head_dim = n_embd here


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_decode_step_reads_every_weight_once(cfg):
    """A float32 decode step's weight bytes = every parameter's bytes, less the embedding rows not looked up
    (a tied head is read whole, and its looked-up row once more by the lookup)."""
    model = _model(cfg)
    b = step_traffic.step_bytes(cfg, 1, 1, 5)
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    unread = -cfg.n_embd * 4 if cfg.tie_embeddings else (cfg.vocab_size - 1) * cfg.n_embd * 4
    if cfg.positions == "learned":
        unread += (cfg.block_size - 1) * cfg.n_embd * 4
    assert b["weights/projections"] + b["weights/head"] + b["weights/other"] == params - unread
    tables = (0 if cfg.tie_embeddings else cfg.vocab_size) + (cfg.block_size if cfg.positions == "learned" else 0)
    assert step_traffic.weight_bytes(cfg) == params - tables * cfg.n_embd * 4


@pytest.mark.parametrize("batch,cached,new", [(1, 7, 1), (3, 5, 4), (2, 0, 9)])
def test_kv_bytes_equal_the_caches_own_slices(batch, cached, new):
    """K/V read = the cached slices' nbytes before the pass; written = what the pass added."""
    cfg = PRESETS["tiny"]
    model, cache = _model(cfg), KVCache(cfg, batch_size=batch)
    with torch.inference_mode():
        if cached:
            model(torch.ones(batch, cached, dtype=torch.long), cache)
        before = cache.nbytes
        model(torch.ones(batch, new, dtype=torch.long), cache)
    b = step_traffic.step_bytes(cfg, batch, new, cached + new)
    assert b["kv_cache/read"] == before
    assert b["kv_cache/write"] == cache.nbytes - before


def test_logits_bytes_equal_the_models_output():
    """The logits written are the model's output tensor: B · T · vocab_size float32 values."""
    cfg = PRESETS["tiny"]
    with torch.inference_mode():
        logits, _ = _model(cfg)(torch.ones(3, 5, dtype=torch.long))
    assert step_traffic.step_bytes(cfg, 3, 5, 5)["logits/write"] == logits.nbytes


def test_batching_raises_decode_intensity():
    """Decode's intensity grows with the batch (weights shared by B rows) and prefill's beats decode's."""
    cfg = PRESETS["shipped"]
    i1, i4, i16 = (step_traffic.intensity(cfg, b, 1, 128) for b in (1, 4, 16))
    assert i1 < i4 < i16
    assert step_traffic.intensity(cfg, 1, 128, 128) > i4
    assert i1 == pytest.approx(0.5, rel=0.15)  # float32: 2 FLOPs per 4-byte weight


def test_bad_counts_are_refused():
    """A context shorter than the new positions, a zero batch or an unknown format raise ValueError."""
    cfg = PRESETS["tiny"]
    for args in [(1, 5, 4), (0, 1, 1), (1, 0, 1)]:
        with pytest.raises(ValueError):
            step_traffic.step_flops(cfg, *args)
    with pytest.raises(ValueError, match="unknown format"):
        step_traffic.step_bytes(cfg, 1, 1, 1, "fp8")
