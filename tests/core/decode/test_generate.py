import numpy as np
import pytest
import torch

from core.decode.generate import (
    SamplingConfig,
    decode_one_token,
    full_forward,
    generate_cached,
    generate_naive,
    prefill,
    select_token,
    token_probs,
)
from core.decode.kv_cache import KVCache
from tests.conftest import make_model

PROMPT = [5, 9, 2, 9, 14, 3, 7, 1]


def _cached_vs_naive_max_diff(model, prompt, n_steps):
    """Step with the cache; at every step compare the logits with a full recompute."""
    cache = KVCache(model.cfg, dtype=model.dtype)
    step = prefill(model, prompt, cache)
    ids, diffs = list(prompt), []
    for _ in range(n_steps):
        ref = full_forward(model, ids)
        diffs.append(float((step.logits - ref.logits).abs().max()))
        ids.append(int(step.logits.argmax()))
        step = decode_one_token(model, ids[-1], cache)
    return max(diffs)


def test_keystone_float64_cached_equals_recompute(tiny_model64):
    """float64: cached decode logits equal full-prefix recompute to 1e-12 at every step."""
    assert _cached_vs_naive_max_diff(tiny_model64, PROMPT, 20) < 1e-12


def test_keystone_float32_cached_equals_recompute(tiny_model):
    """float32: the same agreement to 1e-5."""
    assert _cached_vs_naive_max_diff(tiny_model, PROMPT, 20) < 1e-5


def test_cached_matches_one_full_pass_at_every_position(tiny_model64):
    """Logits from token-by-token decoding equal every position of one full forward pass."""
    model = tiny_model64
    seq = PROMPT + [4, 4, 11, 0, 6]
    full, _ = model(torch.tensor([seq]))
    cache = KVCache(model.cfg, dtype=torch.float64)
    step = prefill(model, seq[:1], cache)
    rows = [step.logits]
    for t in seq[1:]:
        rows.append(decode_one_token(model, t, cache).logits)
    assert torch.allclose(torch.stack(rows), full[0], atol=1e-12, rtol=0)


@pytest.mark.parametrize("sampling", [SamplingConfig(), SamplingConfig("sample", 0.8, 5, seed=3)])
def test_generate_naive_and_cached_agree(tiny_model64, sampling):
    """generate_naive and the cached path pick the same tokens from matching logits."""
    naive = generate_naive(tiny_model64, PROMPT, 12, sampling)
    cached = generate_cached(tiny_model64, PROMPT, 12, sampling)
    assert naive.tokens == cached.tokens
    for a, b in zip(naive.logits, cached.logits, strict=False):
        assert float((a - b).abs().max()) < 1e-12


def test_score_counts(tiny_model):
    """Scores per layer and head: prefill n(n+1)/2; cached step S; naive step T(T+1)/2."""
    n, m = len(PROMPT), 4
    cached = generate_cached(tiny_model, PROMPT, m + 1, SamplingConfig())
    naive = generate_naive(tiny_model, PROMPT, m + 1, SamplingConfig())
    # Cached: 36 for the 8-position prefill, then steps over 9, 10, 11, 12 positions.
    assert cached.scores == 36 + 9 + 10 + 11 + 12
    # Naive: every step recomputes the triangle of 8, 9, 10, 11, 12 positions.
    assert naive.scores == 36 + 45 + 55 + 66 + 78
    assert n == 8 and m == 4


def test_prefill_attention_is_causal_triangle(tiny_model):
    """Prefill returns (n_head, n, n) per layer; masked entries exactly 0; rows sum to 1."""
    cache = KVCache(tiny_model.cfg)
    step = prefill(tiny_model, PROMPT, cache)
    n, cfg = len(PROMPT), tiny_model.cfg
    assert len(step.att) == cfg.n_layer
    for att in step.att:
        assert att.shape == (cfg.n_head, n, n)
        assert np.all(att[:, np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] == 0.0)
        assert np.allclose(att.sum(-1), 1.0, atol=1e-6)
        assert np.all(att[:, np.tril_indices(n)[0], np.tril_indices(n)[1]] > 0)


def test_decode_returns_exactly_one_new_row(tiny_model):
    """A decode step returns one row per layer and head over all cached positions."""
    cache = KVCache(tiny_model.cfg)
    step = prefill(tiny_model, PROMPT, cache)
    step = decode_one_token(tiny_model, int(step.logits.argmax()), cache)
    for att in step.att:
        assert att.shape == (tiny_model.cfg.n_head, 1, len(PROMPT) + 1)
        assert np.isclose(att.sum(), tiny_model.cfg.n_head)


def test_decode_row_equals_recomputed_last_row(tiny_model64):
    """The new row equals the last row of the full recomputed attention matrix."""
    cache = KVCache(tiny_model64.cfg, dtype=torch.float64)
    prefill(tiny_model64, PROMPT, cache)
    step = decode_one_token(tiny_model64, 4, cache)
    ref = full_forward(tiny_model64, PROMPT + [4])
    for new, full in zip(step.att, ref.att, strict=False):
        assert np.allclose(new[:, 0], full[:, -1], atol=1e-12)


def test_bad_prompts_raise(tiny_model):
    """Empty prompt, out-of-range ids and overflow get ValueErrors with a reason."""
    cfg = tiny_model.cfg
    with pytest.raises(ValueError, match="empty"):
        prefill(tiny_model, [], KVCache(cfg))
    with pytest.raises(ValueError, match="out of range"):
        prefill(tiny_model, [cfg.vocab_size], KVCache(cfg))
    with pytest.raises(ValueError, match="context window"):
        prefill(tiny_model, [1] * (cfg.block_size + 1), KVCache(cfg))
    cache = KVCache(cfg)
    prefill(tiny_model, [1] * cfg.block_size, cache)
    with pytest.raises(ValueError, match="context window"):
        decode_one_token(tiny_model, 1, cache)


def test_greedy_tie_picks_first_candidate():
    """Ch. 30 §30.6: tied logits go to the first candidate in order (Paris before Lyon)."""
    tied = torch.tensor([0.5, 0.5])
    assert select_token(tied, SamplingConfig(), torch.Generator()) == 0
    assert select_token(torch.tensor([0.6, 0.7]), SamplingConfig(), torch.Generator()) == 1


def test_top_k_and_temperature_probabilities():
    """Top-k keeps k tokens; the kept probabilities are softmax(logits / T) renormalized."""
    logits = torch.tensor([2.0, 1.0, 0.0, -1.0])
    p = token_probs(logits, SamplingConfig("sample", temperature=0.5, top_k=2))
    e = np.exp(np.array([2.0, 1.0]) / 0.5)
    assert np.allclose(p.numpy(), list(e / e.sum()) + [0, 0])


def test_same_seed_same_tokens(tiny_model):
    """Sampling with the same seed repeats; another seed (usually) differs."""
    s = SamplingConfig("sample", temperature=1.5, seed=7)
    a = generate_cached(tiny_model, PROMPT, 15, s).tokens
    b = generate_cached(tiny_model, PROMPT, 15, s).tokens
    c = generate_cached(tiny_model, PROMPT, 15, SamplingConfig("sample", temperature=1.5, seed=8)).tokens
    assert a == b and a != c


@pytest.mark.parametrize(
    "kwargs", [{"strategy": "beam"}, {"temperature": 0}, {"temperature": float("nan")}, {"top_k": -1}]
)
def test_bad_sampling_config(kwargs):
    """Unknown strategy, temperature ≤ 0 or NaN, negative top-k are refused."""
    with pytest.raises(ValueError):
        SamplingConfig(**kwargs)


def test_mqa_and_mha_variants_also_cache_exactly():
    """The keystone holds for MHA (n_kv_head = n_head) and MQA (n_kv_head = 1)."""
    from core.model.config import GPTConfig

    for n_kv in (4, 1):
        cfg = GPTConfig(vocab_size=32, block_size=24, n_layer=2, n_head=4, n_kv_head=n_kv, n_embd=16, ffn_hidden=24)
        model = make_model(cfg, seed=1, dtype=torch.float64)
        assert _cached_vs_naive_max_diff(model, [1, 2, 3, 1, 2], 10) < 1e-12


def test_the_next_token_bars_show_only_tokens_the_rule_can_draw():
    """With top-k 2 the bars list the two drawable tokens with their renormalized probabilities, not
    eight more at 0.0 % in arbitrary order (a teacher saw ranks 6–10 as filler tokens at top-k 5);
    greedy shows the plain softmax, every token."""
    from core.decode.session_view import top_tokens

    logits = torch.tensor([2.0, 1.0, 0.0, -1.0])
    e = np.exp(np.array([2.0, 1.0]) / 0.5)
    shown = top_tokens(logits, SamplingConfig("sample", temperature=0.5, top_k=2), 10)
    assert [i for i, _ in shown] == [0, 1] and np.allclose([p for _, p in shown], e / e.sum())
    plain = np.exp([2.0, 1.0, 0.0, -1.0]) / np.exp([2.0, 1.0, 0.0, -1.0]).sum()
    greedy = top_tokens(logits, SamplingConfig(), 10)
    assert [i for i, _ in greedy] == [0, 1, 2, 3] and np.allclose([p for _, p in greedy], plain)
