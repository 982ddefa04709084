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


def test_measured_traces_are_valid_and_ordered(tiny_model):
    """Measured traces pass the checks, serve FIFO, and record one emission per token."""
    from core.latency import check_trace
    from core.measure import measure_request_traces

    for cached in (True, False):
        traces = measure_request_traces(tiny_model, [[1, 2, 3], [4, 5]], 4, cached)
        for t in traces:
            check_trace(t)
            assert len(t.emissions_ms) == 4
        assert traces[1].prefill_start_ms >= traces[0].emissions_ms[-1]
        assert [t.prompt_positions for t in traces] == [3, 2]
