"""Ch. 19 "See it move": the four moments' numbers, from the shipped model's run to its window."""

import pytest

from core.decode.see_it_move import FIRST_STEPS, frames
from core.model.shipped import load_model, load_shipped_tokenizer
from core.model.tokenizer import encode
from ui import see_it_move as see_it_move_ui


@pytest.fixture(scope="module")
def run():
    model, tok = load_model(), load_shipped_tokenizer()
    prompt = see_it_move_ui.DEFAULTS[see_it_move_ui.SEE_PROMPT]
    return frames(model, tok, prompt), len(encode(tok, prompt)), model.cfg


def test_the_moments_come_in_the_chapters_order(run):
    """Recompute, shelf, wall, narrower numbers: moments 0, 1, 2, 3 in that order, none skipped."""
    fs, _, _ = run
    moments = [f.moment for f in fs]
    assert moments == sorted(moments) and set(moments) == {0, 1, 2, 3}


def test_the_counters_are_the_score_counts(run):
    """Without a cache each step recomputes n(n+1)/2 scores; with one, n (the new row): summed by hand."""
    fs, n0, _ = run
    steps = [f for f in fs if f.moment == 1]
    prefill = n0 * (n0 + 1) // 2
    recompute = prefill + sum((n0 + k) * (n0 + k + 1) // 2 for k in range(1, FIRST_STEPS + 1))
    cached = prefill + sum(n0 + k for k in range(1, FIRST_STEPS + 1))
    assert (steps[-1].recompute_scores, steps[-1].cached_scores) == (recompute, cached)
    assert [f.positions for f in steps] == list(range(n0 + 1, n0 + FIRST_STEPS + 1))  # one new box per token


def test_the_counters_run_through_all_four_moments(run):
    """Moments 3 and 4 keep counting: at the wall (256 positions) the recompute counter holds the prompt's prefill
    plus one full triangle per step, T(n0) + Σ_{n=n0+1}^{256} n(n+1)/2 = T(n0) + Tet(256) − Tet(n0) (tetrahedral
    numbers, Tet(n) = n(n+1)(n+2)/6), and the cache's counter one triangle of all 256, T(256) = 32,896; narrower
    numbers (moment 4) change neither."""
    fs, n0, cfg = run
    tri, tet = (lambda n: n * (n + 1) // 2), (lambda n: n * (n + 1) * (n + 2) // 6)
    later = [f for f in fs if f.moment >= 1]
    assert all(f.recompute_scores and f.cached_scores for f in later)
    wall = [f for f in fs if f.moment == 2][-1]
    assert wall.positions == cfg.block_size == 256
    assert (wall.recompute_scores, wall.cached_scores) == (tri(n0) + tet(256) - tet(n0), 32_896)
    assert [(f.recompute_scores, f.cached_scores) for f in fs if f.moment == 3] == [(wall.recompute_scores, 32_896)] * 3
    for f in [f for f in fs if f.moment == 2]:  # every frame on the way: the same closed forms at its position
        assert (f.recompute_scores, f.cached_scores) == (tri(n0) + tet(f.positions) - tet(n0), tri(f.positions))


def test_the_wall_and_the_narrower_numbers(run):
    """The shelf ends at the 256-position window; 32 → 16 → 8 bits fit 256, 512, 1,024 positions in the
    window's 32-bit bytes; the bytes are 2·n_layer·n_kv_head·head_dim·256·(bits/8)."""
    fs, _, cfg = run
    assert max(f.positions for f in fs if f.moment == 2) == cfg.block_size == 256
    last = [f for f in fs if f.moment == 3]
    assert [(f.bits, f.capacity) for f in last] == [(32, 256), (16, 512), (8, 1024)]
    per_value = 2 * cfg.n_layer * cfg.n_kv_head * cfg.head_dim * 256
    assert [f.kv_bytes for f in last] == [per_value * 4, per_value * 2, per_value]


def test_a_prompt_that_fills_the_window_is_refused():
    """No room for the steps: a clear ValueError, not a short animation."""
    with pytest.raises(ValueError, match="leave room"):
        frames(load_model(), load_shipped_tokenizer(), "yuan " * 250)
