"""The paged KV cache: allocator invariants, exact logits through the block table, sharing, copy-on-write."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from core.decode.generate import SamplingConfig, generate_cached, generate_naive
from core.decode.kv_cache import KVCache
from core.model.config import PRESETS
from core.serving.paged import OutOfBlocks, PagedKVCache
from core.serving.scheduler import Engine
from tests.conftest import make_model

CFG = PRESETS["tiny"]  # window 32, n_layer 2, n_kv_head 2, head_dim 8
PROMPTS = [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], [1, 2, 3, 4, 5, 6, 7, 8, 20, 21], [9, 8], [4, 4, 4, 1, 5, 6, 7, 8, 9]]
BUDGETS = [6, 9, 3, 8]


def _max_diff(a, b) -> float:
    return max(float((x - y).abs().max()) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("block_size,n_blocks,share", [(4, 40, True), (4, 40, False), (3, 9, True), (1, 40, True)])
def test_paged_logits_equal_contiguous_and_solo(tiny_model64, block_size, n_blocks, share):
    """Requests of different lengths arriving at different steps, across block boundaries, with and
    without sharing: every logit equals the contiguous KVCache's and full recompute's (float64, 1e-12)."""
    engine = Engine(tiny_model64, n_blocks, block_size, share_prefix=share, keep_logits=True)
    for i, (p, b) in enumerate(zip(PROMPTS, BUDGETS, strict=True)):
        engine.submit(p, b, arrival=i)
    engine.run()
    for req, p, b in zip(engine.requests, PROMPTS, BUDGETS, strict=True):
        contiguous = generate_cached(tiny_model64, p, b, SamplingConfig())
        assert req.outputs == contiguous.tokens
        assert _max_diff(req.logits, contiguous.logits) < 1e-12
        if block_size == 4 and share:  # and the full-prefix recompute baseline, once
            naive = generate_naive(tiny_model64, p, b, SamplingConfig())
            assert _max_diff(req.logits, naive.logits) < 1e-12
    # R2 starts with R1's first 8 tokens: it shares the whole blocks among them.
    assert engine.requests[1].shared == ((8 // block_size) * block_size if share else 0)


@torch.no_grad()
def test_pass_by_pass_against_kv_cache(tiny_model64):
    """A prompt written in chunks of 5, 6 and 1 positions (block size 4) then decoded: each pass's
    logits equal those of the same passes on a contiguous KVCache (1e-12)."""
    paged, flat = PagedKVCache(CFG, 8, 4, torch.float64), KVCache(CFG, dtype=torch.float64)
    ids = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9]
    for chunk in (ids[:5], ids[5:11], ids[11:12], ids[12:13], ids[13:]):
        paged.add("r", chunk) if "r" not in paged.tables else paged.append("r", chunk)
        a, _ = tiny_model64(torch.tensor([chunk]), paged.view(["r"]))
        b, _ = tiny_model64(torch.tensor([chunk]), flat)
        assert float((a - b).abs().max()) < 1e-12
    assert paged.lengths["r"] == flat.pos == 15 and len(paged.tables["r"]) == 4  # ceil(15 / 4)


def test_freed_blocks_are_reused_and_logits_stay_exact(tiny_model64):
    """A 6-block pool serving 5 requests one after another: later requests get blocks earlier ones
    freed (the same physical ids), and their logits still equal solo decoding (1e-12)."""
    engine = Engine(tiny_model64, 6, 4, max_batch=1, keep_logits=True)
    for p in ([5, 6, 7, 8, 9], [1, 2], [3, 3, 3, 3, 3, 3, 3], [8], [2, 4, 6]):
        engine.submit(p, 6)
    holders: dict[int, set] = {}
    while not engine.done:
        engine.step()
        for name, table in engine.cache.tables.items():
            for b in table:
                holders.setdefault(b, set()).add(name)
    assert any(len(names) >= 3 for names in holders.values())  # one physical block, three requests in turn
    for req in engine.requests:
        solo = generate_cached(tiny_model64, req.prompt, 6, SamplingConfig())
        assert req.outputs == solo.tokens and _max_diff(req.logits, solo.logits) < 1e-12
    assert engine.cache.n_free == 6


def test_prefix_of_whole_blocks_is_shared():
    """A prompt starting with another's first 9 tokens shares their 2 whole blocks (block size 4),
    reference count 2; the partly filled third block is not shared."""
    cache = PagedKVCache(CFG, 10, 4)
    cache.add("a", list(range(1, 12)))  # 11 tokens: blocks 0, 1, 2 (3 filled)
    shared = cache.add("b", list(range(1, 10)) + [30, 31, 32])
    ta, tb = cache.tables["a"], cache.tables["b"]
    assert shared == 8 and tb[:2] == ta[:2] and tb[2] != ta[2]
    assert [cache.ref[b] for b in ta] == [2, 2, 1]
    assert cache.n_used == 4  # 3 + 1, not 3 + 3
    # A prompt equal to whole blocks leaves its last token to compute: 8 tokens share 1 block, not 2.
    assert cache.add("c", list(range(1, 9))) == 4


@torch.no_grad()
def test_copy_on_write_leaves_the_other_request_unchanged(tiny_model64):
    """After a fork both requests hold the partly filled last block; appending different tokens copies
    it first. Each request's logits equal solo decoding of its own tokens (1e-12), the copy keeps the
    shared slots, and the whole blocks stay shared."""
    prompt = [2, 7, 1, 8, 2, 8]  # 6 positions: block 0 full, block 1 holds 2
    cache = PagedKVCache(CFG, 6, 4, torch.float64)
    cache.add("a", prompt)
    tiny_model64(torch.tensor([prompt]), cache.view(["a"]))
    cache.fork("a", "b")
    old = cache.tables["a"][1]
    assert cache.ref[old] == 2
    cache.append("a", [5])  # a writes first: a gets a copy
    cache.append("b", [9])  # b is now the only holder of the old block: writes in place
    assert cache.tables["a"][1] != old == cache.tables["b"][1] and cache.tables["a"][0] == cache.tables["b"][0]
    assert all(torch.equal(buf[cache.tables["a"][1], :, :2], buf[old, :, :2]) for buf in cache.k + cache.v)
    logits, _ = tiny_model64(torch.tensor([[5], [9]]), cache.view(["a", "b"]))
    for row, tokens in ((0, prompt + [5]), (1, prompt + [9])):
        solo, _ = tiny_model64(torch.tensor([tokens]))
        assert float((logits[row, 0] - solo[0, -1]).abs().max()) < 1e-12
    assert [cache.ref[b] for b in cache.tables["a"]] == [2, 1] and cache.ref[old] == 1


def test_refusal_when_the_pool_is_exhausted():
    """With 2 blocks of 4 both held, a newcomer and a growing request are refused with the counts
    (needs 1, 0 free), and nothing changes."""
    cache = PagedKVCache(CFG, 2, 4)
    cache.add("a", [1, 2, 3, 4, 5, 6, 7, 8])
    before = (dict(cache.tables), list(cache.ref), cache.n_free)
    for attempt in (lambda: cache.add("b", [9]), lambda: cache.append("a", [9])):
        with pytest.raises(OutOfBlocks, match="needs 1 block\\(s\\) but only 0 are free") as err:
            attempt()
        assert (err.value.needed, err.value.free) == (1, 0)
    assert (dict(cache.tables), list(cache.ref), cache.n_free) == before and "b" not in cache.tokens


@pytest.mark.parametrize("block_size", [0, -4, 33, 1.5, True, "16"])
def test_bad_block_sizes_are_refused(block_size):
    """Block size 0, negative, larger than the 32-position window, or not a whole number: ValueError."""
    with pytest.raises(ValueError, match="block size"):
        PagedKVCache(CFG, 4, block_size)


def test_edge_sizes_are_accepted_and_empty_pools_refused():
    """Block size 1 and block size = the window are valid; a pool of 0 blocks is not."""
    assert PagedKVCache(CFG, 1, 32).bytes_per_block == 32 * 2 * 2 * 2 * 8 * 4
    assert PagedKVCache(CFG, 1, 1).n_free == 1
    with pytest.raises(ValueError, match="at least 1 block"):
        PagedKVCache(CFG, 0, 4)


def test_more_requests_than_blocks():
    """A 3-block pool takes 3 one-block requests; the 4th is refused (needs 1, 0 free) until one leaves."""
    cache = PagedKVCache(CFG, 3, 4)
    for r in range(3):
        cache.add(r, [r + 1])
    with pytest.raises(OutOfBlocks) as err:
        cache.add(3, [9])
    assert (err.value.needed, err.value.free) == (1, 0)
    assert cache.free(1) == 1
    cache.add(3, [9])
    assert cache.tables[3] == [1]  # the block request 1 freed


OPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "append", "fork", "truncate", "free"]),
        st.integers(0, 4),
        st.lists(st.integers(0, 2), min_size=1, max_size=11),
    ),
    max_size=40,
)


def _check_invariants(cache: PagedKVCache) -> None:
    holders = [0] * cache.n_blocks
    for r, table in cache.tables.items():
        assert len(table) == len(set(table)) and len(table) == -(-len(cache.tokens[r]) // cache.block_size)
        for b in table:
            holders[b] += 1
    assert holders == cache.ref  # a block held twice is shared, with a matching reference count
    free = set(cache._free)
    assert len(free) == len(cache._free) and free == {b for b in range(cache.n_blocks) if cache.ref[b] == 0}
    assert cache.pool_bytes == cache.allocated_bytes + cache.free_bytes == cache.n_blocks * cache.bytes_per_block
    for b in range(cache.n_blocks):  # every holder of a shared block placed the same tokens in it
        rows = [cache.tokens[r][i * cache.block_size : (i + 1) * cache.block_size]
                for r, t in cache.tables.items() for i, x in enumerate(t) if x == b]  # fmt: skip
        shortest = min((len(x) for x in rows), default=0)
        assert len({tuple(x[:shortest]) for x in rows}) <= 1


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_allocator_invariants_hold_under_any_sequence(ops):
    """Any sequence of add / append / fork / truncate / free on a 6-block pool (block size 3): reference
    counts equal holders, free ⇔ count 0, pool bytes = allocated + free, a refusal changes nothing,
    and once everyone has left every block can be handed out again."""
    cache = PagedKVCache(CFG, 6, 3)
    for op, r, ids in ops:
        before = ({k: list(v) for k, v in cache.tables.items()}, list(cache.ref), sorted(cache._free))
        try:
            if op == "add" and r not in cache.tables:
                cache.add(r, ids)
            elif op == "append" and r in cache.tables:
                cache.append(r, ids[:2])
            elif op == "fork" and r in cache.tables and r + 1 not in cache.tables:
                cache.fork(r, r + 1)
            elif op == "truncate" and r in cache.tables:
                cache.truncate(r, cache.lengths[r] // 2)
            elif op == "free" and r in cache.tables:
                cache.free(r)
        except OutOfBlocks:
            assert before == ({k: list(v) for k, v in cache.tables.items()}, list(cache.ref), sorted(cache._free))
        except ValueError as err:
            assert "context window" in str(err)
        if cache.tables:
            cache.view(list(cache.tables)).advance(0)  # as if the pass ran: everything placed is written
        _check_invariants(cache)
    for r in list(cache.tables):
        cache.free(r)
    assert cache.n_free == 6 and cache.allocated_bytes == 0
    for r in range(6):
        cache.add(r, [r, r, r])  # 6 requests × 1 block: every block handed out again
    assert sorted(b for t in cache.tables.values() for b in t) == list(range(6))


def test_payload_formula_matches_a_float32_model():
    """bytes_per_position is 2·L·H_kv·d·b = 2·2·2·8·4 = 256 B for the tiny float32 model."""
    model = make_model()
    cache = PagedKVCache(model.cfg, 2, 4)
    assert cache.bytes_per_position == 256 and cache.bytes_per_block == 1024


def test_a_step_report_says_what_a_plain_step_did():
    """A decode step with no events names its rows and tokens; one where nothing ran (no rows) says so, rather
    than " each added a token (0 in one pass)" with no names."""
    from core.serving.scheduler import StepReport

    assert StepReport(3, ["R1", "R2"], 2, [], 4.25).said() == ["R1, R2 each added a token (2 in one pass, 4.2 ms)."]
    assert StepReport(4, [], 0, [], 0.0).said() == ["no request was running, so no pass ran."]
    assert StepReport(5, ["R1"], 1, ["R2 joins the batch."], 3.0).said() == ["R2 joins the batch."]


@pytest.mark.parametrize(
    "block_size, message",
    [
        (0, "block size must be a whole number of positions ≥ 1, got 0"),
        (True, "block size must be a whole number of positions ≥ 1, got True"),
        (300, "block size 300 is larger than the context window of 256 positions"),
    ],
)
def test_a_block_size_outside_one_to_the_window_is_refused_by_name(block_size, message):
    """The paged page's box holds 1 … the context window; the cache itself refuses anything else."""
    cfg = PRESETS["shipped"]
    assert cfg.block_size == 256
    with pytest.raises(ValueError, match=message):
        PagedKVCache(cfg, 4, block_size)
