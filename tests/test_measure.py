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


def test_measured_traces_exclude_a_cold_start(tiny_model):
    """A first forward pass costing 1 s (a cold start) is paid before the clock: request 1's TTFT stays far below it."""
    import time

    from core.measure import measure_request_traces

    for cached in (True, False):
        calls = []

        def cold(module, args, calls=calls):
            if not calls:
                time.sleep(1.0)
            calls.append(1)

        handle = tiny_model.register_forward_pre_hook(cold)
        try:
            [trace] = measure_request_traces(tiny_model, [[1, 2, 3]], 3, cached)
        finally:
            handle.remove()
        assert len(calls) > 3 and trace.emissions_ms[0] - trace.arrival_ms < 500


def test_speculative_measure_repeats_and_reports_spread(tiny_model):
    """Draft = target, greedy: every proposal is accepted, so with k = 2 each round adds 3 tokens: 10 tokens take
    prefill + 3 rounds = 4 target passes (0.4 per token); 3 repeats give a median inside its range."""
    from core.measure import measure_speculative

    [row] = measure_speculative(tiny_model, tiny_model, [1, 2, 3], ks=(2,), n_tokens=10, repeats=3)
    assert row.acceptance == 1.0 and row.tokens == 1 + 3 * (2 + 1) and row.target_passes_per_token == 4 / 10
    assert row.repeats == 3 and row.speedup_low <= row.speedup <= row.speedup_high
