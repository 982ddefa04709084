"""The one percentile the benches report (bench/stats.py)."""

import math

import pytest

from bench.stats import p50_p95, percentile


def test_type_7_interpolates_between_ranks():
    """Ten values 1 … 10: rank h = (10 - 1)·0.95 = 8.55, so 9 + 0.55·(10 - 9) = 9.55; the median 5.5."""
    xs = list(range(10, 0, -1))  # order does not matter
    assert percentile(xs, 95) == pytest.approx(9.55)
    assert p50_p95(xs) == (pytest.approx(5.5), pytest.approx(9.55))
    assert percentile([4.0], 95) == 4.0


def test_no_values_and_bad_fractions():
    """No values: NaN (a bench with no completed Steps says so); q outside 0 … 100 is refused."""
    assert all(math.isnan(v) for v in p50_p95([]))
    with pytest.raises(ValueError, match="from 0 to 100"):
        percentile([1, 2], 101)
