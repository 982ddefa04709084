"""Continuous vs static batching on the paged cache: arrivals, departures, preemption, bytes, presets."""

import pytest
import torch

from core.decode.generate import SamplingConfig, generate_cached
from core.decode.kv_cache import KVCache
from core.model.shipped import load_model, load_shipped_tokenizer
from core.model.tokenizer import encode
from core.serving.paged_presets import PRESETS, SYSTEM_PROMPT, build_engine, compare_policies, preset_requests
from core.serving.scheduler import Engine

# A: 3-token prompt, 6 outputs, arrives at step 0; B and C: 2-token prompts, 2 outputs, arrive at step 1.
TRACE = [([1, 2, 3], 6, 0), ([4, 5], 2, 1), ([6, 7], 2, 1)]


def _engine(model, policy, n_blocks=20, block_size=4, **kw):
    engine = Engine(model, n_blocks, block_size, policy, keep_logits=True, **kw)
    for prompt, budget, arrival in TRACE:
        engine.submit(prompt, budget, arrival)
    engine.run()
    return engine


def test_continuous_batching_lets_newcomers_join(tiny_model64):
    """Continuous: B and C join at step 1 (no wait) and leave after step 2; tokens per step
    1, 3, 3, 1, 1, 1 (10 tokens in 6 steps); A finishes at clock 6."""
    e = _engine(tiny_model64, "continuous")
    a, b, c = e.requests
    assert [h.tokens for h in e.history] == [1, 3, 3, 1, 1, 1]
    assert (b.wait, c.wait, b.ttft, b.finished_at, a.finished_at) == (0, 0, 1, 3, 6)


def test_static_batching_waits_for_the_longest(tiny_model64):
    """Static: B and C arrive at step 1 but wait until A's 6 steps are done (wait 5, first token at
    clock 7, TTFT 6 steps); tokens per step 1 × 6 then 2, 2 (10 tokens in 8 steps)."""
    e = _engine(tiny_model64, "static")
    a, b, c = e.requests
    assert [h.tokens for h in e.history] == [1, 1, 1, 1, 1, 1, 2, 2]
    assert (b.wait, c.wait, b.first_token, b.ttft, c.finished_at) == (5, 5, 7, 6, 8)


@pytest.mark.parametrize("policy", ["continuous", "static"])
def test_policies_give_solo_logits(tiny_model64, policy):
    """Whatever the schedule, every request's tokens and logits equal solo decoding (float64, 1e-12)."""
    for req in _engine(tiny_model64, policy).requests:
        solo = generate_cached(tiny_model64, req.prompt, req.max_new_tokens, SamplingConfig())
        assert req.outputs == solo.tokens
        assert max(float((x - y).abs().max()) for x, y in zip(req.logits, solo.logits, strict=True)) < 1e-12


def test_a_finished_request_frees_its_blocks_at_once(tiny_model64):
    """After step 2 (block size 4) B and C have left: only A's 2 blocks (3 + 2 positions) are in use."""
    e = Engine(tiny_model64, 20, 4)
    for prompt, budget, arrival in TRACE:
        e.submit(prompt, budget, arrival)
    for _ in range(3):
        e.step()
    assert [r.state for r in e.requests] == ["running", "finished", "finished"]
    assert e.cache.n_used == 2 and set(e.cache.tables) == {"R1"}
    assert "R2 finished after 2 tokens: 1 block free again." in e.history[2].events


def test_out_of_blocks_preempts_the_newest(tiny_model64):
    """Two requests (3-token prompts, 6 outputs) in a 6-block pool of 2 positions: when both need a
    7th block the newest (R2) is preempted, its blocks freed, and recomputed later; both still get
    exactly their solo logits (1e-12)."""
    e = Engine(tiny_model64, 6, 2, keep_logits=True)
    e.submit([1, 2, 3], 6)
    e.submit([3, 2, 1], 6)
    e.run()
    events = [ev for h in e.history for ev in h.events if "Preempted" in ev]
    assert events and events[0].startswith("Out of KV blocks: this step needs 2 blocks, 0 free. Preempted R2")
    assert "will be recomputed" in events[0] and e.requests[1].preemptions >= 1 and e.requests[0].preemptions == 0
    for req in e.requests:
        solo = generate_cached(tiny_model64, req.prompt, 6, SamplingConfig())
        assert req.outputs == solo.tokens
        assert max(float((x - y).abs().max()) for x, y in zip(req.logits, solo.logits, strict=True)) < 1e-12


def test_more_requests_than_blocks_are_queued_and_all_finish(tiny_model64):
    """Eight requests, a 3-block pool: never more than 3 blocks in use, a newcomer waits with the
    counts, and all eight finish with their solo tokens."""
    e = Engine(tiny_model64, 3, 4)
    prompts = [[i + 1, i + 2] for i in range(8)]
    for p in prompts:
        e.submit(p, 3)
    used = []
    while not e.done:
        used.append(e.step() and e.cache.n_used)
    events = [ev for h in e.history for ev in h.events]
    assert max(used) <= 3 and "R4 waits: its prefill needs 1 block, 0 free." in events
    for req, p in zip(e.requests, prompts, strict=True):
        assert req.outputs == generate_cached(tiny_model64, p, 3, SamplingConfig()).tokens


def test_bad_requests_are_refused(tiny_model):
    """Empty prompt, no budget, past the 32-position window, more blocks than the pool: ValueError."""
    e = Engine(tiny_model, 4, 4)
    for prompt, budget, match in (
        ([], 3, "empty prompt"),
        ([1], 0, "at least 1 token"),
        ([1] * 30, 4, "33 positions exceed the context window of 32"),
        ([1] * 10, 10, "needs up to 5 blocks \\(19 positions\\) but the pool has only 4"),
    ):
        with pytest.raises(ValueError, match=match):
            e.submit(prompt, budget)
    for kw in (dict(policy="greedy"), dict(max_batch=0), dict(block_size=0), dict(n_blocks=0)):
        with pytest.raises(ValueError):
            Engine(tiny_model, **({"n_blocks": 4} | kw))


def test_memory_figures_worked_out(tiny_model64):
    """Block size 4, float64 tiny model (2·2·2·8·8 = 512 B per position): prompts of 5 and 7 tokens
    after prefill hold 4 blocks = 8,192 B paged, payload 12 positions = 6,144 B, 4 unused slots =
    2,048 B of internal fragmentation, and 2 × 32 × 512 = 32,768 B preallocated (two KVCaches)."""
    e = Engine(tiny_model64, 10, 4)
    e.submit([1, 2, 3, 4, 5], 3)
    e.submit([6, 7, 8, 9, 10, 11, 12], 3)
    e.step()
    m = e.memory()
    assert (m.paged, m.payload, m.fragmentation, m.shared_saving) == (8192, 6144, 2048, 0)
    assert m.preallocated == 32_768 == 2 * KVCache(tiny_model64.cfg, dtype=torch.float64).allocated_bytes


def test_memory_with_a_shared_block(tiny_model64):
    """Prompts sharing their first 4 tokens (block size 4), 6 and 7 tokens long: 3 blocks (not 4);
    payload 13 positions, stored once 9 (4 + 2 + 3), so sharing saves 4 × 512 B and 3 slots are unused."""
    e = Engine(tiny_model64, 10, 4)
    e.submit([1, 2, 3, 4, 5, 6], 3)
    e.submit([1, 2, 3, 4, 7, 8, 9], 3)
    e.step()
    m = e.memory()
    assert (m.blocks_used, m.blocks_unshared) == (3, 4)
    assert (m.payload, m.shared_saving, m.fragmentation, m.paged) == (13 * 512, 4 * 512, 3 * 512, 3 * 2048)


def test_eight_students_share_the_system_prompt():
    """The system prompt is 40 tokens; with block size 16 each student shares its 2 whole blocks.
    Once all eight are in, blocks = 2 + Σ (own blocks − 2), and the saving is 14 blocks of Σ tables."""
    tok, model = load_shipped_tokenizer(), load_model()
    assert len(encode(tok, SYSTEM_PROMPT)) == 40
    specs = preset_requests(PRESETS[1], tok)
    e = build_engine(model, specs, 64, 16, "continuous")
    for _ in range(8):  # student k arrives at step k - 1; none finishes within 8 steps (12 tokens each)
        e.step()
    tables = e.cache.tables
    assert len(tables) == 8 and len({tuple(t[:2]) for t in tables.values()}) == 1
    assert all(r.shared == 32 for r in e.requests[1:])
    m = e.memory()
    assert m.blocks_unshared - m.blocks_used == 14 == 7 * 2


def test_presets_and_policy_comparison():
    """Every preset runs to the end; on 'one long and many short' static batching makes the short
    requests wait and takes more steps than continuous batching for the same tokens."""
    tok, model = load_shipped_tokenizer(), load_model()
    for name in PRESETS[:2]:
        assert build_engine(model, preset_requests(name, tok), 64, 16, "continuous").run()
    runs = compare_policies(model, preset_requests(PRESETS[2], tok), 64, 16)
    cont, stat = runs["continuous"], runs["static"]
    assert sum(h.tokens for h in cont.history) == sum(h.tokens for h in stat.history)
    assert stat.steps > cont.steps and max(r.wait for r in cont.requests) == 0
    assert sum(r.wait for r in stat.requests) > 0
    with pytest.raises(ValueError, match="unknown preset"):
        preset_requests("two requests", tok)
