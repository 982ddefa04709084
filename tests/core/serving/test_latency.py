import math

import pytest

from core.serving.latency import summarize_request


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


@pytest.mark.parametrize(
    "arrival,times,match",
    [
        (0, [], "no tokens"),
        (100, [50], "before the arrival"),
        (0, [10, 5], "decrease"),
        (0, [float("nan")], "finite"),
    ],
)
def test_bad_traces(arrival, times, match):
    """Empty, before-arrival, out-of-order and NaN traces are refused with a reason."""
    with pytest.raises(ValueError, match=match):
        summarize_request(arrival, times)


from core.serving.latency import (  # noqa: E402
    CH30_TRACE,
    EXERCISE_1,
    RequestTrace,
    cache_lengths,
    check_trace,
    conventions,
    parse_times,
    summarize_traces,
    traces_to_csv,
)


def test_ch30_trace_cache_lengths():
    """Figure 30.1: after the passes emitting outputs 1-4 the cache holds 8, 9, 10, 11 positions."""
    assert cache_lengths(CH30_TRACE) == [8, 9, 10, 11]


def test_exercise_5_conventions():
    """Exercise 5: total time / outputs = 270/4 = 67.5 ms is not TPOT; TPOT after the first token is 40."""
    c = conventions([CH30_TRACE])
    assert c["per_token_incl_first_wait"] == 67.5 and c["tpot_request_weighted"] == 40
    assert c["itl_token_weighted"] == 40


def test_request_vs_token_weighted():
    """Two requests: TPOT 40 over 3 gaps and 100 over 1 gap → request-weighted 70, token-weighted (120+100)/4 = 55."""
    a = CH30_TRACE
    b = RequestTrace("b", 0, 0, (50, 150), 4)
    c = conventions([a, b])
    assert c["tpot_request_weighted"] == 70 and c["itl_token_weighted"] == 55


def test_summary_counts_errors_and_excludes_them():
    """An empty request is an error, outside every statistic; a one-token request has TTFT, no TPOT."""
    traces = [CH30_TRACE, EXERCISE_1, RequestTrace("failed", 0, 5, (), 3), RequestTrace("one", 0, 0, (80,), 2)]
    s = summarize_traces(traces)
    assert s["requests/total"] == 4 and s["requests/errors"] == 1 and s["tokens/output"] == 4 + 3 + 1
    assert s["ttft_ms"]["count"] == 3 and s["ttft_ms"]["mean"] == (150 + 100 + 80) / 3
    assert s["tpot_ms"]["count"] == 2 and s["tpot_ms"]["p50"] == (40 + 55) / 2


def test_out_of_order_traces_are_refused():
    """Prefill before arrival, a token before prefill, decreasing emissions: clear messages."""
    for t, match in [
        (RequestTrace("r", 10, 5, (20,)), "before the request arrives"),
        (RequestTrace("r", 0, 30, (20,)), "before prefill starts"),
        (RequestTrace("r", 0, 0, (20, 10)), "must not decrease"),
    ]:
        with pytest.raises(ValueError, match=match):
            check_trace(t)


def test_parse_times_and_csv():
    """Times parse from text; the CSV has one row per token with gaps and cache lengths."""
    assert parse_times("150, 190 235;270") == (150, 190, 235, 270)
    assert parse_times("") == ()
    with pytest.raises(ValueError, match="time 2"):
        parse_times("1, soon")
    rows = traces_to_csv([CH30_TRACE]).strip().splitlines()
    assert rows[0].startswith("request,") and len(rows) == 5
    assert rows[2].endswith(",40.000,9")


def test_editor_rows_round_trip_and_errors_name_the_row():
    """Editing rows gives the same traces back; a bad time names its row; out-of-order times are refused."""
    from core.serving.latency import CH30_TRACE, EXERCISE_1
    from core.serving.latency_tables import editor_rows, traces_from_rows

    rows = editor_rows([CH30_TRACE, EXERCISE_1])
    assert traces_from_rows(rows) == [CH30_TRACE, EXERCISE_1]
    # Exercise 1 gives no prompt length: its cell is blank, not 0 (a prompt of no positions), and
    # text, as a number column shows a blank cell as a grey "None".
    assert [r["prompt positions"] for r in rows] == ["8", ""] and EXERCISE_1.prompt_positions == 0
    rows[1]["tokens emitted at (ms)"] = "110, x"
    with pytest.raises(ValueError, match=r"row 2 \(Exercise 1\): time 2"):
        traces_from_rows(rows)
    rows[1]["tokens emitted at (ms)"] = "5"
    with pytest.raises(ValueError, match="before prefill starts"):
        traces_from_rows(rows)


def test_prompt_positions_cells_read_as_whole_numbers():
    """The prompt-positions cell is text: blank is "not given" (0), any script's digits count, and
    what is not a whole number, a negative count or one past 10⁹ is refused naming the request."""
    from core.serving.latency import CH30_TRACE, cache_lengths
    from core.serving.latency_tables import editor_rows, prompt_positions, traces_from_rows

    assert [prompt_positions(c) for c in (None, "", "  ", "0", "8", 8, 8.0, " 12 ", "١٢", "１２")] == [
        0,
        0,
        0,
        0,
        8,
        8,
        8,
        12,
        12,
        12,
    ]
    rows = editor_rows([CH30_TRACE])
    rows[0]["prompt positions"] = "١٢"
    assert cache_lengths(traces_from_rows(rows)[0]) == [12, 13, 14, 15]  # Table 30.1's n, n+1, … from 12
    for typed, message in (
        ("8 tokens", r"row 1 \(Ch. 30 example\): prompt positions '8 tokens' is not a whole number"),
        ("1.5", "'1.5' is not a whole number"),
        ("inf", "'inf' is not a whole number"),
        ("-3", "a prompt cannot have -3 positions"),
        ("2000000000", r"2e\+09 prompt positions is past this page's reach"),
    ):
        rows[0]["prompt positions"] = typed
        with pytest.raises(ValueError, match=message):
            traces_from_rows(rows)


def test_tokens_sharing_an_emission_time_are_named():
    """Equal emission times are accepted (one pass can emit several tokens: speculative decoding), their
    gap is 0 ms, and a sentence names them, as their markers on the chart sit on one another."""
    from core.serving.latency import summarize_request
    from core.serving.latency_tables import shared_times

    spec = RequestTrace("<b>spec</b>", 0.0, 0.0, (150.0, 150.0, 150.0, 190.0, 230.0, 230.0), 8)
    assert summarize_request(0.0, spec.emissions_ms).gaps_ms == (0.0, 0.0, 40.0, 40.0, 0.0)
    assert shared_times([spec, RequestTrace("plain", 0.0, 0.0, (1.0, 2.0), 0)]) == [
        "Tokens 1, 2 and 3 of '<b>spec</b>' share 150 ms: one pass emitted them, a gap of 0 ms.",
        "Tokens 5 and 6 of '<b>spec</b>' share 230 ms: one pass emitted them, a gap of 0 ms.",
    ]


def test_times_past_the_clock_and_no_rows_are_refused():
    """1.7e308 ms parsed (it is finite) but made the summaries' TPOT and mean inf (two gaps of
    1.7e308 overflow) and fell off the chart: times past 10¹² ms are refused, naming the row's
    request; an editor with every row deleted says to add one instead of drawing an empty chart."""
    from core.serving.latency import CH30_TRACE
    from core.serving.latency_tables import editor_rows, traces_from_rows

    huge = RequestTrace("huge", 0.0, 0.0, (150.0, 1.7e308), 0)
    assert math.isinf(2 * 1.7e308)  # the sum of two such times, in a mean: what the page showed
    rows = editor_rows([CH30_TRACE, huge])
    with pytest.raises(ValueError, match=r"huge: 1\.7e\+308 ms is past this page's clock"):
        traces_from_rows(rows)
    rows[1]["arrival (ms)"], rows[1]["tokens emitted at (ms)"] = -2e12, "150"
    with pytest.raises(ValueError, match=r"huge: -2e\+12 ms is past"):
        traces_from_rows(rows)
    rows[1]["arrival (ms)"] = -1e12  # the clock's reach, exactly: accepted
    assert traces_from_rows(rows)[1].arrival_ms == -1e12
    with pytest.raises(ValueError, match="no requests: add a row"):
        traces_from_rows([])


def test_itl_pools_every_gap_of_the_ch30_trace():
    """Ch. 30 §30.3's gaps 40, 45, 35 ms pooled: ITL mean 40 (= its TPOT), p50 40, p90 44, p99 44.9 (np.percentile,
    linear: rank (3 − 1)·0.9 = 1.8 between 40 and 45 → 40 + 0.8·5; rank 1.98 → 40 + 0.98·5)."""
    s = summarize_traces([CH30_TRACE])
    assert s["itl_ms"] == {"count": 3, "mean": 40, "p50": 40, "p90": pytest.approx(44), "p99": pytest.approx(44.9)}
    assert s["tpot_ms"]["mean"] == 40


def test_itl_and_tpot_differ_on_a_hand_worked_trace():
    """Ch. 30 + Exercise 1 + a one-token and a failed request: TPOT has 2 values, 40 and 55 (mean 47.5); ITL pools
    the 5 gaps 40, 45, 35, 50, 60 (mean 46; sorted 35, 40, 45, 50, 60: p50 45, p90 at rank 3.6 → 50 + 0.6·10 = 56,
    p99 at rank 3.96 → 59.6); the one-token and failed requests add no gap."""
    traces = [CH30_TRACE, EXERCISE_1, RequestTrace("one", 0, 0, (80,), 2), RequestTrace("failed", 0, 5, (), 3)]
    s = summarize_traces(traces)
    assert s["tpot_ms"]["count"] == 2 and s["tpot_ms"]["mean"] == 47.5
    assert s["itl_ms"]["count"] == 5 and s["itl_ms"]["mean"] == 46 and s["itl_ms"]["p50"] == 45
    assert s["itl_ms"]["p90"] == pytest.approx(56) and s["itl_ms"]["p99"] == pytest.approx(59.6)


def test_itl_summary_row_counts_gaps():
    """The summary table's ITL row sits beside TPOT, counts gaps (not requests) and shows Ch. 30's p90 of 44.00 ms."""
    from core.serving.latency_tables import summary_rows

    rows = {r["measure"]: r for r in summary_rows(summarize_traces([CH30_TRACE, EXERCISE_1]))}
    itl, tpot = rows["ITL (every gap, pooled)"], rows["TPOT (per request: mean of its gaps)"]
    assert itl["values counted"] == "5 gaps" and tpot["values counted"] == "2 requests"
    assert itl["mean (ms)"] == "46.00" and tpot["mean (ms)"] == "47.50"
    assert summary_rows(summarize_traces([CH30_TRACE]))[2]["p90 (ms)"] == "44.00"


def test_the_percentile_note_works_the_traces_own_gaps():
    """Under Exercise 1 (gaps 50 and 60 ms) the note's example is its own: p90 = 50 + 0.9 · 10 = 59 ms, never
    another example's 35, 40, 45 ms (issue 58); Ch. 30's trace (40, 45, 35) gives p90 = 44 ms."""
    from core.serving.latency_tables import itl_note

    assert itl_note([50.0, 60.0]).endswith("of this trace's gaps 50, 60 ms, p90 = 59 ms.")
    assert itl_note([40.0, 45.0, 35.0]).endswith("of this trace's gaps 35, 40, 45 ms, p90 = 44 ms.")
    assert "35, 40, 45" not in itl_note([50.0, 60.0])
    assert itl_note([]).endswith("this trace has no gap between tokens.")
