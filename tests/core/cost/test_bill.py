"""The bill per token's counts (core.cost.bill) and where its figure puts the chapter's labels."""

import pytest

from core.cost.bill import generation_bill, growth, step_work
from core.viz.cost import fig_growth_shapes


def test_growth_counts_and_marks():
    """Up to 10,000: grid n², triangle n(n+1)/2, one cache entry per position; marks 1,000 → 10⁶ and 10,000 → 10⁸
    scores, times n_layer · n_head = 6."""
    g = growth(10_000, 3, 2)
    assert g.n[0] == 0 and g.n[-1] == 10_000 and len(g.n) == 201
    assert all(
        q == n * n and c == n * (n + 1) // 2 and e == n
        for n, q, c, e in zip(g.n, g.grid, g.causal, g.cache_entries, strict=True)
    )
    assert g.marks == [(1_000, 6 * 10**6), (10_000, 6 * 10**8)]
    assert growth(5_000).marks == [(1_000, 10**6)]


def test_step_work_is_n_and_triangle():
    """One decode step at context n: n scores with the cache, n(n+1)/2 by recompute; lengths span 1 … n_max."""
    w = step_work(2_000)
    assert w.n[0] == 1 and w.n[-1] == 2_000 and w.n == sorted(set(w.n))
    assert w.cached == w.n and w.recompute == [n * (n + 1) // 2 for n in w.n]


def test_generation_bill_scales_by_layers_and_heads():
    """n = 1,000, m = 100: 604,450 vs Σ_{T=1000}^{1099} T(T+1)/2 per layer and head; × 4 layers × 8 heads; the ratio
    is the same either way."""
    one = generation_bill(1_000, 100)
    recompute = sum(t * (t + 1) // 2 for t in range(1_000, 1_100))
    assert (one.with_cache, one.recompute) == (1_099 * 1_100 // 2, recompute)
    many = generation_bill(1_000, 100, 4, 8)
    assert (many.with_cache, many.recompute) == (32 * one.with_cache, 32 * recompute) and many.ratio == one.ratio


@pytest.mark.parametrize("n_max", [2_000, 5_000, 10_000, 20_000])
def test_the_1000_token_label_sits_above_every_curve(n_max):
    """The 1,000-token label is anchored high (85% of the top) at the left, where every curve over the left half
    of the plot is still below a quarter of the top: no curve runs through it."""
    fig = fig_growth_shapes(growth(n_max), "per layer, per head")
    [label] = [a for a in fig.layout.annotations if a.text.startswith("1,000 tokens")]
    top = (n_max / 1000) ** 2
    assert label.ayref == "y" and label.ay >= 0.8 * top and label.ax <= 0.05 * n_max
    for trace in fig.data:
        if trace.name:
            left = [y for x, y in zip(trace.x, trace.y, strict=True) if x <= n_max / 2]
            assert max(left) < 0.3 * label.ay
