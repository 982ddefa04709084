import numpy as np
import pytest
import torch

from core.decode.generate import SamplingConfig, generate_cached
from core.decode.kv_cache import KVCache
from core.model.shipped import ASSETS, load_model, load_shipped_tokenizer
from core.model.tokenizer import encode
from core.serving.speculative import Speculative, accept_or_resample, distribution
from tests.conftest import make_model


@pytest.fixture(scope="module")
def pair():
    return load_model("float64"), load_model("float64", ASSETS / "draft"), load_shipped_tokenizer()


@pytest.mark.parametrize("k", [1, 3, 6])
def test_greedy_speculative_equals_plain_greedy(pair, k):
    """Temperature 0: the produced text equals plain greedy decoding token for token."""
    target, draft, tok = pair
    prompt = encode(tok, "User: Hello, my name is Mira. I am planning a trip to Lyon.\nAssistant:")
    spec = Speculative(target, draft, k, 0.0)
    spec.start(prompt)
    while spec.produced < 40:
        spec.round()
    plain = generate_cached(target, prompt, spec.produced, SamplingConfig()).tokens
    assert spec.ids[len(prompt) :] == plain
    assert spec.target_passes < spec.produced  # fewer target passes than tokens


def test_rollback_leaves_cache_as_if_rejected_never_consumed(pair):
    """After rounds with rejections the target cache equals a fresh prefill of the consumed tokens (1e-12)."""
    target, draft, tok = pair
    spec = Speculative(target, draft, 4, 1.0, seed=3)
    spec.start(encode(tok, "The cat"))
    for _ in range(6):
        spec.round()
    assert any(not all(r.accepted) for r in spec.rounds)  # a rejection happened
    fresh = KVCache(target.cfg, dtype=torch.float64)
    target(torch.tensor([spec.ids[:-1]]), fresh)
    assert spec.t_cache.pos == fresh.pos == len(spec.ids) - 1
    for layer in range(target.cfg.n_layer):
        assert torch.allclose(spec.t_cache.keys(layer), fresh.keys(layer), atol=1e-12, rtol=0)
        assert torch.allclose(spec.t_cache.values(layer), fresh.values(layer), atol=1e-12, rtol=0)


def test_round_bookkeeping(pair):
    """Cache before/peak/after: peak = before + k + 1; after = before + accepted + 1."""
    target, draft, tok = pair
    spec = Speculative(target, draft, 5, 1.0, seed=1)
    spec.start(encode(tok, "Ana asked:"))
    r = spec.round()
    assert r.cache_peak == r.cache_before + 6 and r.cache_after == r.cache_before + sum(r.accepted) + 1


def test_acceptance_rule_preserves_the_target_distribution():
    """At a fixed prefix, the first token of a round follows p: total variation to p < 0.015 (N = 40,000,
    seed 0), while the draft's own q is far from p."""
    target, draft = load_model("float64"), load_model("float64", ASSETS / "draft")
    tok = load_shipped_tokenizer()
    ids = torch.tensor([encode(tok, "The")])
    p = distribution(target(ids)[0][0, -1], 1.0)
    q = distribution(draft(ids)[0][0, -1], 1.0)
    rng = np.random.default_rng(0)
    n = 40_000
    out = np.empty(n, dtype=int)
    for i in range(n):
        x = int(rng.choice(len(q), p=q))
        ok, repl = accept_or_resample(p, q, x, rng)
        out[i] = x if ok else repl
    emp = np.bincount(out, minlength=len(p)) / n
    assert 0.5 * np.abs(emp - p).sum() < 0.015
    assert 0.5 * np.abs(q - p).sum() > 0.05


def test_bad_settings():
    """k outside 1..16, a negative temperature and mismatched vocabularies are refused."""
    from core.model.config import GPTConfig

    a = make_model()
    with pytest.raises(ValueError):
        Speculative(a, a, 0, 0.0)
    with pytest.raises(ValueError):
        distribution(torch.zeros(3), -1.0)
    other = make_model(
        GPTConfig(vocab_size=32, block_size=32, n_layer=1, n_head=2, n_kv_head=1, n_embd=8, ffn_hidden=8)
    )
    with pytest.raises(ValueError, match="tokenizer"):
        Speculative(a, other, 2, 0.0)


def test_expected_noise_matches_simulation():
    """The exact expected total variation of n draws equals the mean over 4,000 simulated multinomial samples."""
    from core.serving.speculative import expected_noise, total_variation

    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.full(50, 0.3))
    sims = [total_variation(rng.multinomial(500, p) / 500, p) for _ in range(4000)]
    assert expected_noise(p, 500) == pytest.approx(np.mean(sims), abs=4 * np.std(sims) / np.sqrt(4000))


def test_acceptance_check_with_the_draft_as_target():
    """Draft = target: the draft's total variation is 0 and the samples are the target's own, so their variation
    is sampling noise alone (within 25% of its expectation for 1,000 draws)."""
    from core.serving.speculative import acceptance_check

    model = make_model()
    check = acceptance_check(model, model, [1, 2, 3], 1.0, 1000, seed=0)
    assert check.tv_draft == 0 and check.n == 1000 and len(check.top) == 8
    assert check.tv_samples == pytest.approx(check.tv_noise, rel=0.25)
    with pytest.raises(ValueError, match="empty"):
        acceptance_check(model, model, [], 1.0, 10)


def test_long_prompt_is_not_called_empty():
    """301 tokens with k = 4 in a 256-position window: the refusal names the length, not an empty prompt."""
    from core.serving.speculative import check_prompt

    with pytest.raises(ValueError, match="301 tokens") as err:
        check_prompt(list(range(301)), 4, 256)
    assert "empty" not in str(err.value)
    with pytest.raises(ValueError, match="empty"):
        check_prompt([], 4, 256)
    check_prompt(list(range(251)), 4, 256)  # 251 + 4 < 256 leaves room
