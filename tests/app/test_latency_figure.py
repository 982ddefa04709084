"""App tests of the latency page's Figure 30.1 section: the figure whole for the chapter's trace and for measured
traces, with its caption and the chapter's sentences under it."""

import json

from bench.fresh_app import new_app
from core.decode import settings as decode_settings
from core.model.shipped import load_model, load_shipped_tokenizer
from core.model.tokenizer import encode
from tests.helpers.app_util import charts, click
from ui import latency_figure
from ui.decode import keys as decode_keys


def _figure(at) -> dict:
    [spec] = [c for c in charts(at) if "Known prompt" in json.dumps(c, ensure_ascii=False)]
    return spec


def _texts(spec) -> list[str]:
    return [a["text"].replace("<br>", " ") for a in spec["layout"]["annotations"]]


def test_the_chapters_trace_draws_figure_30_1_whole_with_its_caption():
    """The default trace: Figure 30.1's three columns with 512 and 576 bytes (Example 30.3's M), its caption
    under the figure, and §30.2-§30.6's sentences with this trace's numbers (120 ms, 25 tokens/s, 11 positions,
    a supplied scenario)."""
    at = new_app("app_pages/latency.py")
    texts = _texts(_figure(at))
    for line in ("K/V for 8 positions: 512 bytes", "9 positions: 576 bytes", "Consume output 1 as new input",
                 "<i>Figure 30.1 — Output selection precedes consumption of that token.</i>"):  # fmt: skip
        assert line in texts, line
    captions = " ".join(c.value for c in at.caption)
    assert "Figure 30.1 joins the input and output timeline." in captions
    assert "Measuring only 150−30 = 120 ms would omit the queue and answer a different question." in captions
    assert "1000/40 = 25 output tokens per second, describes this post-first-token pace" in captions
    assert "dropping it silently can make latency and quality appear better" in captions
    assert "the last pass left K/V for 11 positions" in captions
    assert "a teaching scenario, not a hardware benchmark or a measurement of this model" in captions


def test_several_requests_draw_the_one_chosen():
    """'Edit several requests': the figure draws the request chosen, here the failed one (an error, no decode)."""
    at = new_app("app_pages/latency.py")
    at.radio(key=latency_figure.LAT_SOURCE).set_value("Edit several requests").run()
    assert "Arrival 0 → queue until 30 ms" in _texts(_figure(at))  # the first request, Ch. 30's
    at.selectbox(key=latency_figure.LAT_FIGURE_REQUEST).set_value(3).run()
    assert not at.exception
    texts = _texts(_figure(at))
    assert "no output: the request failed" in texts and "K/V for 6 positions: 384 bytes" in texts


def test_the_decode_pages_request_gets_its_models_bytes():
    """The decode page's request after Prefill and two Steps: Figure 30.1's bytes are the shipped model's own
    M (its cache tensors' bytes per position × positions) and it is not called a supplied scenario."""
    at = new_app()
    click(at, "Prefill")
    click(at, "Step ▸")
    click(at, "Step ▸")
    sess = at.session_state[decode_keys.DECODE_SESSION]
    n = len(sess.prompt_ids)
    per_position = sess.cache.nbytes // sess.cache.pos  # the real tensors' bytes
    at.switch_page("app_pages/latency.py").run()
    at.radio(key=latency_figure.LAT_SOURCE).set_value("Measured: the decode page's request").run()
    assert not at.exception
    texts = _texts(_figure(at))
    assert f"K/V for {n} positions: {n * per_position:,} bytes" in texts
    assert f"{n + 1} positions: {(n + 1) * per_position:,} bytes" in texts
    assert not [c for c in at.caption if "teaching scenario" in c.value]


def test_the_measured_batch_draws_a_cached_and_a_recomputing_request():
    """The measured batch: its first request (the decode page's default prompt) states the shipped model's bytes
    (2 · L · H_kv · d · 4 per position in float32); a recomputing request's figure says no cache is kept."""
    cfg = load_model().cfg
    n = len(encode(load_shipped_tokenizer(), decode_settings.DEFAULT_PROMPT))
    at = new_app("app_pages/latency.py")
    at.session_state[latency_figure.LAT_N_NEW] = 3
    at.radio(key=latency_figure.LAT_SOURCE).set_value("Measured: a batch here, with and without the KV cache").run()
    click(at, "Run 4 requests, each way")
    texts = _texts(_figure(at))
    assert f"K/V for {n} positions: {2 * cfg.n_layer * cfg.n_kv_head * cfg.head_dim * 4 * n:,} bytes" in texts
    at.selectbox(key=latency_figure.LAT_FIGURE_REQUEST).set_value(4).run()
    assert "Recompute all " + str(n + 1) + " positions; no cache kept" in _texts(_figure(at))


def test_figure_30_1_in_words_is_offered_not_printed_in_full():
    """Figure 30.1's text version (every column's steps) lies in a closed expander, "The figure in words", as a
    table lies behind "Show as table" (issue 58); the timeline's short description stays printed under it."""
    from ui.page import LONG_DESCRIPTION

    at = new_app("app_pages/latency.py")
    [words] = [e for e in at.expander if e.label == "The figure in words"]
    inside = [h.proto.body for h in words.get("html")]
    assert len(inside) == 1 and len(inside[0]) > LONG_DESCRIPTION
    printed = [
        h.proto.body for h in at.get("html") if 'class="chart-desc"' in h.proto.body and h.proto.body not in inside
    ]
    assert printed and all(len(p) <= LONG_DESCRIPTION + 40 for p in printed)
