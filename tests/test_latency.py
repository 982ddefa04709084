import pytest

from core.latency import summarize_request


def test_ch30_trace():
    """Example 30.2: arrival 0, emissions 150,190,235,270 → TTFT 150, gaps 40,45,35, TPOT 40, 25 tok/s, 67.5."""
    r = summarize_request(0, [150, 190, 235, 270])
    assert r.ttft_ms == 150 and r.gaps_ms == (40, 45, 35)
    assert r.tpot_ms == 40 and r.tokens_per_s == 25 and r.full_average_ms == 67.5


def test_exercise_1():
    """Exercise 1: arrival 10, emissions 110,160,220 → TTFT 100, gaps 50,60, TPOT 55, duration 210."""
    r = summarize_request(10, [110, 160, 220])
    assert (r.ttft_ms, r.gaps_ms, r.tpot_ms, r.duration_ms) == (100, (50, 60), 55, 210)


def test_one_token_has_no_tpot():
    """One emitted token: TTFT exists, TPOT is missing (None), not 0."""
    r = summarize_request(0, [80])
    assert r.ttft_ms == 80 and r.tpot_ms is None and r.tokens_per_s is None


@pytest.mark.parametrize("arrival,times,match", [
    (0, [], "no tokens"), (100, [50], "before the arrival"), (0, [10, 5], "decrease"), (0, [float("nan")], "finite"),
])
def test_bad_traces(arrival, times, match):
    """Empty, before-arrival, out-of-order and NaN traces are refused with a reason."""
    with pytest.raises(ValueError, match=match):
        summarize_request(arrival, times)
