"""The class's engine (issue 56 item 5): every request gets the tokens and logits it would get alone, with batching,
chunked prefill at every budget, after preemption and with prefix-cache hits; the budget is never exceeded; hits
are exactly the whole matching blocks from the start. The solo reference is ``generate_cached`` (one request, its
own contiguous ``KVCache``): another path through the same model."""

import pytest
import torch

from core.decode.generate import SamplingConfig, generate_cached
from core.serving.engine import EngineSettings, ServingEngine
from core.serving.prefix_cache import PrefixCachingKVCache, chain
from tests.conftest import make_model

# Prompts over the tiny model's 64 ids, lengths 3 … 21 (its context: 32 positions); a greedy and two sampled.
PROMPTS = [[(7 * i + 3 * j) % 64 for j in range(n)] for i, n in enumerate((3, 9, 17, 5, 21, 12))]
NEW = [6, 4, 8, 10, 5, 7]
SAMPLING = [SamplingConfig(), SamplingConfig("sample", 0.8, 0, 11), SamplingConfig("sample", 1.3, 5, 3)]


def _serve(model, settings, n_blocks=40, block_size=4, prompts=PROMPTS, arrivals=None):
    engine = ServingEngine(model, n_blocks, block_size, settings, keep_logits=True)
    arrivals = arrivals or [0] * len(prompts)
    for step in range(max(arrivals) + 1):  # requests arrive at step boundaries
        for i, (p, at) in enumerate(zip(prompts, arrivals, strict=True)):
            if at == step:
                engine.submit(f"S{i}", p, NEW[i % len(NEW)], SAMPLING[i % 3], arrival=0.0)
        engine.step()
    engine.run()
    return engine


def _assert_solo(model, engine, tol):
    for r in engine.requests.values():
        solo = generate_cached(model, r.prompt, r.max_new_tokens, r.sampling)
        assert r.outputs == solo.tokens, r.rid
        for a, b in zip(r.logits, solo.logits, strict=True):
            assert torch.allclose(a, b, rtol=0, atol=tol), (r.rid, float((a - b).abs().max()))


@pytest.mark.parametrize("budget", [8, 9, 13, 32, 64])
@pytest.mark.parametrize("chunked", [True, False])
def test_every_request_gets_its_solo_tokens_at_every_budget(tiny_model64, budget, chunked):
    """Six requests arriving over three steps, float64: tokens equal to solo runs and logits within 1e-9, with and
    without chunked prefill; with chunking no step uses more than its budget."""
    e = _serve(tiny_model64, EngineSettings(chunked, budget, True, 6), arrivals=[0, 0, 1, 1, 2, 2])
    _assert_solo(tiny_model64, e, 1e-9)
    if chunked:
        assert max(h.tokens for h in e.history) <= budget
        assert any(kind == "prefill" and n < len(p) for h in e.history for _, kind, n in h.rows
                   for p in PROMPTS) or budget >= 21  # fmt: skip
    assert max(len(h.rows) for h in e.history) > 1  # batched, not one at a time


def test_without_chunking_a_long_prefill_runs_whole_and_decodes_wait_for_it(tiny_model64):
    """The long request (21 tokens) arrives while others decode: unchunked, its 21-token prefill shares one step with
    their decode tokens (the stall); chunked at 8, no step holds more than 8 tokens."""
    e = _serve(tiny_model64, EngineSettings(False, 8, True, 6), arrivals=[0, 0, 0, 0, 3, 0])
    assert max(h.tokens for h in e.history) >= 21
    e = _serve(tiny_model64, EngineSettings(True, 8, True, 6), arrivals=[0, 0, 0, 0, 3, 0])
    assert max(h.tokens for h in e.history) == 8


def test_preempted_requests_are_recomputed_to_the_same_tokens(tiny_model64):
    """A pool of 9 blocks of 4 for six requests: some are preempted and recomputed, every token still equals solo."""
    e = _serve(tiny_model64, EngineSettings(True, 16, True, 6), n_blocks=9)
    assert sum(r.preemptions for r in e.requests.values()) >= 1
    _assert_solo(tiny_model64, e, 1e-9)


def test_float32_matches_solo_within_rounding():
    model = make_model()
    e = _serve(model, EngineSettings(True, 8, True, 6), arrivals=[0, 1, 2, 3, 4, 5])
    _assert_solo(model, e, 1e-4)


SYSTEM = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14]  # two whole blocks of 4 and two tokens


def test_prefix_hits_are_the_whole_matching_blocks_from_the_start(tiny_model64):
    """A 10-token system prompt before each request: the first computes it; every later one reads exactly the 2
    whole blocks (8 positions) and computes the rest, to the same tokens as solo."""
    prompts = [SYSTEM + [20 + i, 30 + i] for i in range(4)]
    e = _serve(tiny_model64, EngineSettings(True, 64, True, 4), prompts=prompts, arrivals=[0, 1, 2, 3])
    assert [r.hit_tokens for r in e.requests.values()] == [0, 8, 8, 8]
    assert [r.computed_tokens for r in e.requests.values()][1:] == [12 - 8 + NEW[i] - 1 for i in (1, 2, 3)]
    _assert_solo(tiny_model64, e, 1e-9)
    off = _serve(tiny_model64, EngineSettings(True, 64, False, 4), prompts=prompts, arrivals=[0, 1, 2, 3])
    assert [r.hit_tokens for r in off.requests.values()] == [0, 0, 0, 0]


def test_a_short_prompt_never_hits_and_a_changed_first_token_misses_every_block(tiny_model64):
    cache = PrefixCachingKVCache(tiny_model64.cfg, 20, 4, torch.float64)
    long = list(range(1, 14))  # 13 tokens: 3 whole blocks before the last token
    cache.admit("a", long)
    cache.place("a", long)
    tiny_model64(torch.tensor([long]), cache.view(["a"]))
    cache.mark_computed("a")
    cache.free("a")
    assert len(cache.hits(long)) == 3 and len(cache.hits(long[:9])) == 2  # whole blocks before the last token
    assert cache.hits(long[:4]) == [] and cache.hits([1, 2, 3]) == []  # shorter than a block (+ its last token)
    assert cache.hits([99, *long[1:]]) == []  # a changed first token: every later block's hash differs
    assert cache.hits([*long[:4], 0, *long[5:]]) == cache.hits(long)[:1]  # a change in block 2 keeps block 1 only
    assert chain(long, 4)[1] != chain([99, *long[1:]], 4)[1]  # same tokens in block 2, other parent: other hash


def test_cached_blocks_are_evicted_least_recently_used_first(tiny_model64):
    cache = PrefixCachingKVCache(tiny_model64.cfg, 4, 4, torch.float64)
    for name, ids in (("a", [1] * 8), ("b", [2] * 8)):
        cache.admit(name, ids)
        cache.place(name, ids)
        tiny_model64(torch.tensor([ids]), cache.view([name]))
        cache.mark_computed(name)
        cache.free(name)
    assert cache.n_free == 4 and cache.n_cached == 4  # all four blocks cached, none held
    cache.admit("c", [3] * 3)
    cache.place("c", [3] * 3)  # one block: the free list is empty, so a's last block (freed first) goes
    assert len(cache.hits([1] * 9)) == 1 and len(cache.hits([2] * 9)) == 2 and cache.evictions == 1
    cache.place("c", [3] * 2)  # one more: a's first block goes (its second is gone, it could not be reached alone)
    assert cache.hits([1] * 9) == [] and len(cache.hits([2] * 9)) == 2 and cache.evictions == 2


@pytest.mark.parametrize("budget,running", [(7, 8), (8, 0), (4096, 8), (True, 8)])
def test_settings_out_of_range_are_refused_in_a_sentence(budget, running):
    with pytest.raises(ValueError, match="token_budget|max_running|budget of"):
        EngineSettings(True, budget, True, running)


def test_bad_requests_are_refused(tiny_model64):
    e = ServingEngine(tiny_model64, 4, 4)
    for args in (("a", [], 3), ("a", [1], 0), ("a", [1] * 30, 4), ("a", [1] * 20, 1)):
        with pytest.raises(ValueError):
            e.submit(*args)
    e.submit("a", [1, 2], 2)
    with pytest.raises(ValueError, match="already"):
        e.submit("a", [1, 2], 2)


def test_all_budgets_and_chunks_agree(tiny_model64):
    """Every budget from 8 to 24 with chunking gives every request the same tokens (a sweep, greedy)."""
    outs = set()
    for budget in range(8, 25):
        e = _serve(tiny_model64, EngineSettings(True, budget, True, 6), arrivals=[0, 0, 1, 1, 2, 2])
        outs.add(tuple(tuple(r.outputs) for r in e.requests.values()))
    assert len(outs) == 1
