import numpy as np
import pytest

from core.measure import fit_exponent, measure_step_times


def test_fit_exponent_recovers_known_powers():
    """y = 3x² gives 2; y = 5x gives 1 (exact data)."""
    x = np.array([10, 20, 40, 80])
    assert fit_exponent(x, 3 * x**2) == pytest.approx(2.0)
    assert fit_exponent(x, 5 * x) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        fit_exponent([1], [1])


def test_measure_returns_one_median_per_length_and_leaves_no_trace(tiny_model):
    """One positive median per length for each path; bad lengths are refused."""
    times = measure_step_times(tiny_model, [4, 8, 16], repeats=2)
    assert times.lengths == (4, 8, 16)
    assert all(t > 0 for t in times.cached_ms + times.naive_ms)
    with pytest.raises(ValueError):
        measure_step_times(tiny_model, [1, tiny_model.cfg.block_size + 1])
