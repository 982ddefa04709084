"""Real browser: the cost pages, opened by deep link on a fresh server."""

import pytest

from bench.browser import browser_page, running_app, screenshot, wait_idle, wait_still

pytestmark = pytest.mark.browser


def test_deep_link_to_memory_page_and_change_preset():
    """A first visit straight to /memory gets the app frame; changing the preset changes the formula."""
    with running_app(fresh=True) as url, browser_page() as page:
        page.goto(url + "/memory")
        formula = page.get_by_text("M = 2 · B · L · T").first
        formula.wait_for(timeout=60000)
        assert "512 bytes" in formula.inner_text()
        page.get_by_role("combobox", name="Model shape").click()
        page.get_by_role("option", name="Ch. 30 24-layer example").click()
        page.get_by_text("402,653,184 bytes").first.wait_for(timeout=30000)
        screenshot(page, "memory-24-layer")


def test_bill_page_measures_in_the_browser():
    """Pressing Measure draws the measured chart (two curves)."""
    with running_app() as url, browser_page() as page:
        page.goto(url + "/cost")
        page.get_by_role("button", name="Measure decode steps").click()
        page.wait_for_function(
            """() => [...document.querySelectorAll('.js-plotly-plot')]
            .some(g => (g.layout?.title?.text || '').startsWith('Median of'))""",
            timeout=60000,
        )
        screenshot(page, "cost-measured")


@pytest.mark.parametrize(
    "name,payload,expect",
    [
        ("binary.json", b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", "not UTF-8"),
        ("broken.json", b'{"num_hidden_layers": 2,,}', "not valid JSON"),
        ("missing.json", b'{"num_attention_heads": 8, "hidden_size": 512}', "num_hidden_layers"),
        ("huge.json", b"{" + b" " * 1_200_000 + b"}", "1.0MB"),
    ],
)
def test_config_upload_bad_files(name, payload, expect):
    """Uploaded binary, malformed, incomplete and oversized files get a clear message, no traceback."""
    with running_app() as url, browser_page() as page:
        page.goto(url + "/memory")
        page.get_by_role("combobox", name="Model shape").click()
        page.get_by_role("option", name="From a config.json (paste or upload)").click()
        page.get_by_test_id("stMain").locator("input[type=file]").set_input_files(
            files=[{"name": name, "mimeType": "application/json", "buffer": payload}]
        )
        page.get_by_text(expect).first.wait_for(timeout=30000)
        assert page.get_by_test_id("stException").count() == 0


OVERLAP_JS = """([needle, a, b]) => {
  const g = [...document.querySelectorAll('.js-plotly-plot')].find(g => (g.layout?.title?.text || '').includes(needle));
  const box = sel => g.querySelector(sel).getBoundingClientRect();
  const p = box(a), q = box(b);
  return !(p.right <= q.left || q.right <= p.left || p.bottom <= q.top || q.bottom <= p.top);
}"""


TITLE_BOXES_JS = """(needle) => {
  const g = [...document.querySelectorAll('.js-plotly-plot')].find(g => (g.layout?.title?.text || '').includes(needle));
  return ['.gtitle', '.g-ytitle'].map((s) => { const e = g && g.querySelector(s), r = e && e.getBoundingClientRect();
    return r ? [r.left, r.top, r.right, r.bottom] : null; });
}"""


def test_measured_chart_title_clear_of_the_y_title_in_presenter_mode():
    """At 1920×1080 in presenter mode, the measured chart's title and its rotated y-axis title do not overlap."""
    with running_app() as url, browser_page(1920, 1080) as page:
        page.goto(url + "/cost?present=1")
        page.get_by_role("button", name="Measure decode steps").click()
        page.wait_for_function(
            "() => [...document.querySelectorAll('.js-plotly-plot')].some(g => (g.layout?.title?.text || '')"
            ".startsWith('Median of'))",
            timeout=120000,
        )
        wait_idle(page)
        wait_still(page, TITLE_BOXES_JS, "Median of")  # plotly has laid the figure out (its margins)
        assert not page.evaluate(OVERLAP_JS, ["Median of", ".gtitle", ".g-ytitle"])
        screenshot(page, "cost-measured-presenter")


HUGE = (
    '{"num_hidden_layers":1000000,"num_attention_heads":1000000,"num_key_value_heads":1000000,"hidden_size":1000000,'
    '"torch_dtype":"float64","max_position_embeddings":1000000000000}'
)
# Where each metric value's text is laid out, against its metric's box: an ellipsis leaves the text's own width
# running past the box (its last digits hidden); wrapped, it stays inside.
TEXT_PAST_BOX_JS = """() => [...document.querySelectorAll('[data-testid=stMetric]')].map(m => {
  const v = m.querySelector('[data-testid=stMetricValue]'), r = document.createRange();
  r.selectNodeContents(v);
  return [v.innerText, r.getBoundingClientRect().right - m.getBoundingClientRect().right];
})"""


def test_a_huge_metric_wraps_instead_of_hiding_its_digits():
    """A pasted config with 10⁶ layers, heads and width and 10¹² positions: the cache is 16,000,000,000,000,000.00
    GB, and the metrics showed "14,901,161,193,847,65…" with the rest cut off. Every digit is on screen now."""
    with running_app() as url, browser_page(1280, 1000) as page:
        page.goto(f"{url}/memory")
        page.get_by_role("combobox", name="Model shape").click()
        page.get_by_role("option", name="From a config.json (paste or upload)").click()
        box = page.get_by_role("textbox", name="…or paste its text")
        box.fill(HUGE)
        box.press("Control+Enter")
        page.get_by_text("16,000,000,000,000,000.00 GB").first.wait_for(timeout=30000)
        wait_idle(page)
        placed = wait_still(page, TEXT_PAST_BOX_JS)  # the metrics' text, laid out
        screenshot(page, "memory-huge-metrics-1280")
        assert "14,901,161,193,847,656.25 GiB" in [t for t, _ in placed]
        assert all(past <= 1 for _, past in placed), placed


# The hybrid figure's box, its caption's, the legend's and the x title's, and the screen's height (CSS px).
HYBRID_BOXES_JS = """() => {
  const g = [...document.querySelectorAll('.js-plotly-plot')]
    .find(g => (g.layout?.title?.text || '').startsWith('The cache grows with T'));
  if (!g) return null;
  const cap = [...document.querySelectorAll('.chart-desc')]
    .find(c => g.compareDocumentPosition(c) & Node.DOCUMENT_POSITION_FOLLOWING);
  const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  return {figure: box(g), caption: cap ? box(cap) : null, legend: box(g.querySelector('.legend')),
    xtitle: box(g.querySelector('.g-xtitle')), traces: g.data.map(t => t.y.length), screen: window.innerHeight};
}"""


@pytest.mark.parametrize("width,height,query", [(1280, 800, ""), (1920, 1080, "?present=1")])
def test_a_hybrids_growing_cache_beside_its_flat_state(width, height, query):
    """Jamba-v0.1: the figure of its KV cache growing with T beside its Mamba layers' flat state; in presenter mode
    it and its caption are on the first 1920×1080 screen; its legend is clear of the x-axis title."""
    with running_app() as url, browser_page(width, height) as page:
        page.goto(f"{url}/memory{query}")
        page.get_by_role("combobox", name="Model shape").click()
        page.get_by_role("option", name="Jamba-v0.1 (4 attention + 28 Mamba layers)").click()
        page.get_by_text("the same at every T").first.wait_for(timeout=60000)
        wait_idle(page)
        boxes = wait_still(page, HYBRID_BOXES_JS)
        screenshot(page, f"memory-hybrid-{width}")
    assert boxes is not None and boxes["traces"][:2] == [3, 3], boxes  # T = 0, 1,008, 8,192
    legend, xtitle = boxes["legend"], boxes["xtitle"]
    assert legend[3] <= xtitle[1] or xtitle[3] <= legend[1], boxes
    if query:
        assert boxes["figure"][3] <= boxes["screen"] and boxes["caption"][3] <= boxes["screen"], boxes
