"""App tests of the latency page."""

import pytest

from bench.fresh_app import new_app
from core.lesson.stops import parse_lesson
from tests.app.test_lesson import app
from tests.helpers.app_util import click
from ui import latency_figure


def _table(at, i):
    """The per-request table (the editor may also count as a dataframe)."""
    return [d.value for d in at.dataframe if "TTFT (ms)" in d.value.columns][i]


def test_ch30_trace_default():
    """Default trace: TTFT 150, gaps 40/45/35, TPOT 40, 25 tokens/s, 67.5 full average."""
    at = new_app("app_pages/latency.py")
    row = _table(at, 0).iloc[0]
    assert (row["TTFT (ms)"], row["gaps (ms)"], row["TPOT (ms)"]) == ("150.00", "40.00, 45.00, 35.00", "40.00")
    assert row["tokens/s after the first"] == "25.0" and row["full duration / tokens (ms)"] == "67.50"


def test_exercise_1():
    """Exercise 1: TTFT 100, gaps 50 and 60, TPOT 55."""
    at = new_app("app_pages/latency.py")
    at.radio(key="lat.source").set_value("Exercise 1").run()
    row = _table(at, 0).iloc[0]
    assert (row["TTFT (ms)"], row["gaps (ms)"], row["TPOT (ms)"]) == ("100.00", "50.00, 60.00", "55.00")
    # The exercise gives no prompt length: the timeline's title does not promise cache-size labels.
    title = at.get("plotly_chart")[0].proto.spec
    assert "no prompt length given" in title and "cached positions after the pass" not in title
    # The percentile note works this trace's own gaps, not another example's (issue 58).
    assert any("of this trace's gaps 50, 60 ms, p90 = 59 ms." in c.value for c in at.caption)
    assert not any("35, 40, 45" in c.value for c in at.caption)


def test_several_requests_errors_and_one_token():
    """Four requests: one error (excluded), one single-token request with TPOT missing."""
    at = new_app("app_pages/latency.py")
    at.radio(key="lat.source").set_value("Edit several requests").run()
    rows = _table(at, 0)
    assert "missing (one token)" in list(rows["TPOT (ms)"]) and "error: no tokens" in list(rows["TTFT (ms)"])
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Errors (no tokens; excluded below)"] == "1" and metrics["Output tokens"] == "8"


def test_summary_shows_pooled_itl_beside_tpot():
    """The four-request trace's summary: TPOT over 2 requests (40, 55: mean 47.50 ms) and ITL over the 5 pooled gaps
    (40, 45, 35, 50, 60: mean 46.00, p50 45.00, p90 56.00, p99 59.60 ms by np.percentile's linear rule)."""
    at = new_app("app_pages/latency.py")
    at.radio(key="lat.source").set_value("Edit several requests").run()
    [summary] = [d.value for d in at.dataframe if "p50 (ms)" in d.value.columns]
    rows = {r["measure"]: r for r in summary.to_dict("records")}
    itl, tpot = rows["ITL (every gap, pooled)"], rows["TPOT (per request: mean of its gaps)"]
    assert (tpot["values counted"], tpot["mean (ms)"]) == ("2 requests", "47.50")
    assert [itl[k] for k in ("values counted", "mean (ms)", "p50 (ms)", "p90 (ms)", "p99 (ms)")] == [
        "5 gaps", "46.00", "45.00", "56.00", "59.60"
    ]  # fmt: skip
    assert any("pooled" in c.value and "np.percentile" in c.value for c in at.caption)


def test_measured_batch_with_and_without_cache():
    """Measuring serves 4 requests each way and lists 8 traces; the summary is given each way (pooled,
    its TTFT median mixed the two), each the median of its own 4 requests' TTFT."""
    import numpy as np

    at = new_app("app_pages/latency.py")
    at.radio(key="lat.source").set_value("Measured: a batch here, with and without the KV cache").run()
    click(at, "Run 4 requests, each way")
    rows = _table(at, 0)
    assert len(rows) == 8
    heads = [h.value for h in at.subheader if h.value.startswith("Summary")]
    assert heads == ["Summary over 4 requests, with the KV cache", "Summary over 4 requests, recomputing the prefix"]
    summaries = [d.value for d in at.dataframe if "p50 (ms)" in d.value.columns]
    for tag, summary in zip(("(cache)", "(recompute)"), summaries, strict=True):
        ttft = [float(v) for n, v in zip(rows["request"], rows["TTFT (ms)"], strict=True) if n.endswith(tag)]
        assert len(ttft) == 4
        assert float(summary.iloc[0]["p50 (ms)"]) == pytest.approx(np.median(ttft), abs=0.01)
    # "One trace, several conventions": one column each way (pooled, its TPOT was both ways' mean), each
    # the mean of that way's own four per-request TPOTs.
    [conv] = [d.value for d in at.dataframe if "convention" in d.value.columns]
    tpot = conv.set_index("convention").loc["TPOT, request-weighted"]
    for tag, col in (
        ("(cache)", "value (ms), with the KV cache"),
        ("(recompute)", "value (ms), recomputing the prefix"),
    ):
        mine = [float(v) for n, v in zip(rows["request"], rows["TPOT (ms)"], strict=True) if n.endswith(tag)]
        assert float(tpot[col]) == pytest.approx(np.mean(mine), abs=0.011)  # both rounded to 0.01


def test_decode_page_request_appears():
    """After prefill and two steps on the decode page, its trace has three tokens here."""
    at = new_app()
    click(at, "Prefill")
    click(at, "Step ▸")
    click(at, "Step ▸")
    at.switch_page("app_pages/latency.py").run()
    at.radio(key="lat.source").set_value("Measured: the decode page's request").run()
    assert not at.exception
    assert len(_table(at, 0).iloc[0]["gaps (ms)"].split(", ")) == 2


def _tpot(at) -> str:
    """The per-request table's TPOT cell of the first request."""
    return at.dataframe[1].value["TPOT (ms)"][0]


def test_edits_to_a_trace_are_kept_when_the_page_is_left_and_a_lesson_stop_clears_them():
    """Streamlit drops a data editor's edits whenever another page runs (a helper renamed a row, added one,
    went to the memory page and back: the four default rows again). The page keeps each trace's last rows;
    a lesson's stop on the page shows the chapter's trace, as its speaker note has it (TPOT 40 ms)."""
    from core.serving.latency import CH30_TRACE
    from core.serving.latency_tables import editor_rows

    at = new_app("app_pages/latency.py")
    assert _tpot(at) == "40.00"
    edited = editor_rows([CH30_TRACE])
    edited[0]["tokens emitted at (ms)"] = "150, 200"  # what the editor returned after an edit
    at.session_state[latency_figure.LATENCY_EDITS + "Ch. 30 example"] = edited
    at.switch_page("app_pages/memory.py").run()
    at.switch_page("app_pages/latency.py").run()
    assert not at.exception and _tpot(at) == "50.00"
    lesson = app(lesson="fifteen-minutes", stop="6")
    lesson.session_state[latency_figure.LATENCY_EDITS + "Ch. 30 example"] = edited
    lesson.button(key="lesson.next").click().run()
    assert lesson.title[0].value == "Latency on a timeline" and _tpot(lesson) == "40.00"


def test_a_lesson_stop_after_a_stop_on_the_same_page_shows_the_chapters_trace():
    """A teacher's lesson with two latency stops in a row: the move clears the kept edits while the editor is
    still on the page (its base rows were looked up and gone: a KeyError on screen); the next stop shows the
    chapter's trace, TPOT 40 ms."""
    from core.serving.latency import CH30_TRACE
    from core.serving.latency_tables import editor_rows
    from tests.app.test_lesson import SHIPPED

    start = SHIPPED.index('[[stops]]\ntitle = "The latency trace"')
    latency_stop = SHIPPED[start : SHIPPED.index('[[stops]]\ntitle = "Your turn')]
    mine = SHIPPED[:start] + latency_stop + latency_stop + SHIPPED[start + len(latency_stop) :]
    at = app()
    at.sidebar.file_uploader(key="lesson.upload").upload("two.toml", mine.encode(), "application/toml").run()
    at.sidebar.button[1].click().run()  # Start my lesson
    for _ in range(6):
        at.button(key="lesson.next").click().run()
    assert at.title[0].value == "Latency on a timeline" and _tpot(at) == "40.00"
    edited = editor_rows([CH30_TRACE])
    edited[0]["tokens emitted at (ms)"] = "150, 200"
    at.session_state[latency_figure.LATENCY_EDITS + "Ch. 30 example"] = edited
    at.session_state[latency_figure.LATENCY_EDITS + "Ch. 30 example.base"] = edited
    at.run()
    assert _tpot(at) == "50.00"
    at.button(key="lesson.next").click().run()
    assert not at.exception, at.exception
    bar = [m.value for m in at.markdown if 'class="lesson-text"' in m.value]  # the lesson bar's texts (HTML)
    n = len(parse_lesson(mine).stops)  # the shipped lesson's stops and the second latency stop
    assert any(f">Stop 8 of {n}" in line for line in bar), bar
    assert _tpot(at) == "40.00"


def test_tokens_sharing_a_time_get_a_sentence_shown_literally():
    """Three tokens at 150 ms (one speculative pass) are accepted with gaps of 0 ms, and a caption under the
    chart names them, the request's typed name shown as typed (markdown characters escaped)."""
    from core.serving.latency import CH30_TRACE
    from core.serving.latency_tables import editor_rows

    at = new_app("app_pages/latency.py")
    edited = editor_rows([CH30_TRACE])
    edited[0]["request"], edited[0]["tokens emitted at (ms)"] = "**spec**", "150, 150, 150, 190"
    at.session_state[latency_figure.LATENCY_EDITS + "Ch. 30 example"] = edited
    at.session_state[latency_figure.LATENCY_EDITS + "Ch. 30 example.base"] = edited
    at.run()
    assert _table(at, 0).iloc[0]["gaps (ms)"] == "0.00, 0.00, 40.00"
    notes = [c.value for c in at.caption if "share 150 ms" in c.value]
    assert len(notes) == 1 and r"\*\*spec\*\*" in notes[0]  # not bold: the asterisks escaped
    plain = "Tokens 1, 2 and 3 of '**spec**' share 150 ms: one pass emitted them, a gap of 0 ms."
    assert notes[0].replace("\\", "") == plain


def test_latency_page_says_what_the_clock_does_not_measure():
    """Ch. 30 §30.1: elapsed time is not evidence of thought; §30.3: no transport delay is assigned, a real
    trace needs transport and buffering timestamps."""
    at = new_app("app_pages/latency.py")
    captions = " ".join(c.value for c in at.caption)
    assert "without mistaking elapsed time for evidence of thought" in captions
    assert "no transport delay is assigned after these emission events" in captions
    assert "transport and buffering need their own timestamps" in captions
