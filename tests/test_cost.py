import pytest

from core.cost import causal_pairs, kv_cache_bytes, score_grid


def test_ch19_score_grid():
    """Ch. 19: n = 1,000 → 1,000,000 pairs; n = 10,000 → 100,000,000 (before masking)."""
    assert score_grid(1_000) == 1_000_000
    assert score_grid(10_000) == 100_000_000


def test_causal_pairs_small_cases():
    """The mask keeps n(n+1)/2 pairs: 1, 3, 6, 10 for n = 1..4 (count the triangle)."""
    assert [causal_pairs(n) for n in range(1, 5)] == [1, 1 + 2, 1 + 2 + 3, 1 + 2 + 3 + 4]


def test_ch30_large_example():
    """Ch. 30: L=24, H_kv=8, d=128, T=4,096, b=2 → 402,653,184 bytes = 384 MiB; two requests 768 MiB."""
    one = kv_cache_bytes(24, 8, 128, 4096, 2)["total"]
    assert one == 402_653_184 and one / 2**20 == 384
    assert kv_cache_bytes(24, 8, 128, 4096, 2, batch_size=2)["total"] / 2**20 == 768


def test_exercise_3():
    """Exercise 3: four KV heads, four requests → 805,306,368 bytes = 768 MiB."""
    assert kv_cache_bytes(24, 4, 128, 4096, 2, batch_size=4)["total"] == 805_306_368


def test_ch19_cache_bill():
    """Ch. 19: width 12,288 (MHA: H_kv·d = 12,288), 96 layers, 2 bytes → 4,718,592 bytes/token; ≈ 9.66 GB at 2,048."""
    per_token = kv_cache_bytes(96, 96, 128, 1, 2)["total"]
    assert per_token == 4_718_592
    assert round(kv_cache_bytes(96, 96, 128, 2048, 2)["total"] / 1e9, 2) == 9.66


def test_four_bit_values_pack_to_half_bytes():
    """At 0.5 bytes per value the itemized halves are exact and the total is whole bytes."""
    out = kv_cache_bytes(1, 1, 3, 1, 0.5)
    assert out["kv_cache/keys_bytes"] == 1.5 and out["total"] == 3


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_bad_counts_raise(bad):
    """Negative or non-integer counts are refused with ValueError."""
    with pytest.raises(ValueError):
        kv_cache_bytes(bad, 1, 1, 1, 2)


def test_decode_step_scores():
    """One step at 1,000 positions: 1,000 scores cached vs 500,500 by recompute."""
    from core.cost import decode_step_scores

    assert decode_step_scores(1000, cached=True) == 1000
    assert decode_step_scores(1000, cached=False) == 500_500


def test_generation_scores_match_step_by_step_sums():
    """Closed forms equal the explicit sums of the session counters (n=5, m=3: 28 vs 64)."""
    from core.cost import generation_scores

    assert generation_scores(5, 3, cached=True) == 15 + 6 + 7
    assert generation_scores(5, 3, cached=False) == 15 + 21 + 28
    for n, m in [(1, 1), (8, 10), (37, 4)]:
        naive = sum(causal_pairs(t) for t in range(n, n + m))
        cached = causal_pairs(n) + sum(range(n + 1, n + m))
        assert generation_scores(n, m, False) == naive and generation_scores(n, m, True) == cached
    assert generation_scores(10**12, 10**6, cached=False) > 0  # exact big integers, no overflow
