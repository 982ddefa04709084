"""Figures of the paged KV cache page: blank free blocks, hatched shared blocks, fill by positions."""

from core.model.config import PRESETS
from core.serving.paged import PagedKVCache
from core.serving.scheduler import Request
from core.viz.paged import fig_block_pool, fig_block_tables


def _cache():
    """Block size 4, 6 blocks: A holds 6 tokens (#0 full, #1 half), B shares #0 and has #2 with 1 token."""
    cache = PagedKVCache(PRESETS["tiny"], 6, 4)
    cache.add("A", [1, 2, 3, 4, 5, 6])
    cache.add("B", [1, 2, 3, 4, 9])
    return cache, [Request("A", [1], 1, state="running"), Request("B", [1], 1, state="running")]


def _fills(fig):
    """{trace name: list of (x0, x1) of each filled rectangle}."""
    out = {}
    for t in fig.data:
        if t.fill == "toself":
            xs = list(t.x)
            out[t.name] = [(xs[i], xs[i + 1]) for i in range(0, len(xs), 6)]
    return out


def test_pool_marks_shared_free_and_fill():
    """#0 is hatched and labelled ×2 (not colour alone); #1 is half filled by A; #3–#5 are blank."""
    cache, requests = _cache()
    fig = fig_block_pool(cache, requests, columns=3)
    labels = next(t.text for t in fig.data if t.mode == "text")
    assert list(labels) == ["#0 ×2", "#1 A", "#2 B", "#3", "#4", "#5"]
    fills = _fills(fig)
    shared = next(t for t in fig.data if t.fill == "toself" and t.name.startswith("shared"))
    assert shared.fillpattern.shape == "x" and len(fills[shared.name]) == 1
    ((x0, x1),) = fills["A"]  # block #1 at column 1: half of its 0.88 width filled
    assert (round(x0, 2), round(x1, 2)) == (1.06, 1.5)
    assert sum(len(v) for v in fills.values()) == 3  # three blocks in use, the three free ones unfilled
    assert fig.layout.title.text == "Physical pool: 3 of 6 blocks in use"


def test_block_tables_follow_logical_order():
    """A's row reads #0 ×2 then #1; B's row #0 ×2 then #2; rows are labelled with the request state."""
    cache, requests = _cache()
    fig = fig_block_tables(cache, requests)
    labels = next(t.text for t in fig.data if t.mode == "text")
    assert list(labels) == ["#0 ×2", "#1", "#0 ×2", "#2"]
    assert list(fig.layout.yaxis.ticktext) == ["A · running", "B · running"]
