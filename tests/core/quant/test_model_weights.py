import numpy as np
import pytest
import torch

from core.decode.kv_cache import KVCache
from core.evaluate.quant_quality import eval_windows, evaluate, first_divergence, kv_bytes_per_token, sweep
from core.model.layout import quantizable_weights
from core.model.shipped import load_model, load_shipped_tokenizer
from core.quant.model_weights import quantize_weights, weight_storage_bytes
from core.quant.quantize import fake_quantize_groups


@pytest.fixture(scope="module")
def shipped():
    return load_model(), eval_windows(load_shipped_tokenizer(), n_windows=4)


def test_quantize_weights_rounds_projections_and_leaves_the_original(tiny_model):
    """Every block projection lands on its group's grid; embeddings, lm_head and the original stay."""
    before = {k: v.clone() for k, v in tiny_model.state_dict().items()}
    q = quantize_weights(tiny_model, 4, group_size=8)
    for k, v in tiny_model.state_dict().items():
        assert torch.equal(v, before[k])
    qs = dict(q.named_parameters())
    for name in quantizable_weights(tiny_model):
        expect = fake_quantize_groups(before[name].double().numpy(), 4, 8)
        assert np.allclose(qs[name].detach().double().numpy(), expect, atol=1e-6)
    assert torch.equal(qs["embed_tokens.weight"], before["embed_tokens.weight"])
    assert torch.equal(qs["lm_head.weight"], before["lm_head.weight"])


def test_kv_cache_quantization_stores_rounded_vectors(tiny_model):
    """A quantized cache holds each head_dim vector rounded through its own scale."""
    cfg = tiny_model.cfg
    cache = KVCache(cfg, kv_n_bit=4)
    k = torch.randn(1, cfg.n_kv_head, 3, cfg.head_dim)
    cache.update(0, k, k)
    cache.advance(3)
    expect = fake_quantize_groups(k.reshape(-1, cfg.head_dim).double().numpy(), 4, None)
    assert np.allclose(cache.keys(0).reshape(-1, cfg.head_dim).numpy(), expect, atol=1e-6)


def test_weight_bytes_counted_with_scales(tiny_model):
    """4-bit, groups of 8 with fp16 scales: each projection row of `in` inputs costs in/2 + 2·in/8 bytes."""
    cfg = tiny_model.cfg
    total_float = sum(p.numel() * 4 for p in tiny_model.parameters())
    assert weight_storage_bytes(tiny_model, None) == total_float
    q_params = sum(dict(tiny_model.named_parameters())[n].numel() for n in quantizable_weights(tiny_model))
    expected = total_float - q_params * 4 + q_params // 2 + (q_params // 8) * 2
    assert weight_storage_bytes(tiny_model, 4, 8) == expected
    assert kv_bytes_per_token(tiny_model, None) == 2 * cfg.n_layer * cfg.n_kv_head * cfg.head_dim * 4


def test_eight_bit_model_stays_close(shipped):
    """Stated tolerance at 8 bits (weights, groups of 32): max |Δlogit| < 0.25, greedy changes ≤ 1%,
    loss within 0.005 nats/token; an 8-bit KV cache the same."""
    model, windows = shipped
    ref = evaluate(model, windows)
    for result in (evaluate(quantize_weights(model, 8), windows), evaluate(model, windows, kv_n_bit=8)):
        assert float((result.logits - ref.logits).abs().max()) < 0.25
        assert float((result.greedy != ref.greedy).double().mean()) <= 0.01
        assert abs(result.loss - ref.loss) < 0.005


def test_two_bit_weights_hurt_more_than_eight(shipped):
    """Fewer bits, larger error: 2-bit weights change the logits more than 8-bit ones."""
    model, windows = shipped
    rows = {r.label: r for r in sweep(model, windows, bits=(8, 2))["weights"]}
    assert rows["2-bit weights"].max_logit_error > rows["8-bit weights"].max_logit_error
    assert rows["2-bit weights"].weight_bytes < rows["8-bit weights"].weight_bytes < rows["float32"].weight_bytes


def test_first_divergence():
    """The first differing index, or None when one list extends the other."""
    assert first_divergence([1, 2, 3], [1, 5, 3]) == 1
    assert first_divergence([1, 2], [1, 2, 3]) is None


def test_group_sizes_offered_divide_every_row():
    """The shipped model's rows are 128 and 352 (= 32 · 11) inputs long: 8, 16 and 32 divide both,
    64 and 128 do not (352 / 64 = 5.5), so the page offers exactly 8, 16, 32."""
    from core.model.shipped import load_model
    from core.quant.model_weights import row_lengths, valid_group_sizes

    m = load_model()
    assert row_lengths(m) == [128, 352]
    assert valid_group_sizes(m) == [8, 16, 32]
