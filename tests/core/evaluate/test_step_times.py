import numpy as np
import pytest

from core.evaluate.step_times import fit_exponent, measure_step_times


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
    from core.evaluate.step_times import measure_request_traces
    from core.serving.latency import check_trace

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

    from core.evaluate.step_times import measure_request_traces

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
    from core.evaluate.speedups import measure_speculative

    [row] = measure_speculative(tiny_model, tiny_model, [1, 2, 3], ks=(2,), n_tokens=10, repeats=3)
    assert row.acceptance == 1.0 and row.tokens == 1 + 3 * (2 + 1) and row.target_passes_per_token == 4 / 10
    assert row.repeats == 3 and row.speedup_low <= row.speedup <= row.speedup_high


def test_shown_speed_up_is_the_ratio_of_the_shown_numbers(tiny_model, monkeypatch):
    """Batching, B = 2, 16 tokens each: one-by-one walls 100, 300, 200 ms against batched 50, 100, 40 ms
    give speed-ups 2×, 3×, 5×. The row is the median repeat's: 3×, 32 tokens in 100 ms batched (320 tokens/s)
    and in 300 ms one by one (106.7 tokens/s), 320 ÷ 106.7 = 3. Each timing's own median (200 ÷ 50 ms) would
    have shown 4× beside 3×."""
    from core.evaluate import speedups

    batched = iter([(1.0, 0.1), (50.0, 5.0), (100.0, 6.0), (40.0, 7.0)])  # the warm-up first
    solo = iter([100.0, 300.0, 200.0])
    monkeypatch.setattr(speedups, "_serve_batched", lambda *a: next(batched))
    monkeypatch.setattr(speedups, "_serve_one_by_one", lambda *a: next(solo))
    [row] = speedups.measure_batching(tiny_model, [[1, 2, 3]], sizes=(2,), n_new=16, repeats=3)
    assert (row.speedup, row.speedup_low, row.speedup_high, row.step_ms) == (3.0, 2.0, 5.0, 6.0)
    assert row.batched_tokens_per_s == pytest.approx(320.0) and row.solo_tokens_per_s == pytest.approx(32 / 0.3)
    assert row.batched_tokens_per_s / row.solo_tokens_per_s == pytest.approx(row.speedup)


def test_speculative_speed_up_is_the_ratio_of_the_shown_times(tiny_model, monkeypatch):
    """Plain 90, 120, 100 ms against speculative 60, 30, 100 ms: speed-ups 1.5×, 4×, 1×; the row is the median
    repeat's (1.5×: 90 ÷ 60 ms), not the medians taken apart (100 ÷ 60 ms = 1.67×)."""
    from core.evaluate import speedups

    real = speedups._speculate
    spec = iter([60.0, 30.0, 100.0])
    plain = iter([90.0, 120.0, 100.0])
    monkeypatch.setattr(speedups, "_speculate", lambda *a: (next(spec), real(*a)[1]) if a[3] == 2 else real(*a))
    monkeypatch.setattr(speedups, "_plain_ms", lambda *a: next(plain))
    [row] = speedups.measure_speculative(tiny_model, tiny_model, [1, 2, 3], ks=(2,), n_tokens=10, repeats=3)
    assert (row.speedup, row.speedup_low, row.speedup_high) == (1.5, 1.0, 4.0)
    assert (row.plain_ms, row.spec_ms) == (90.0, 60.0)
