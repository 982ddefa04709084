"""Real browser: the quantization pages."""

import math

import pytest

from bench.browser import browser_page, running_app, screenshot, wait_idle, wait_until

pytestmark = pytest.mark.browser

RULER_TITLE_JS = """() => [...document.querySelectorAll('.js-plotly-plot')]
    .map(g => g.layout?.title?.text || '').find(t => t.includes('symmetric') || t.includes('affine')) || ''"""


def test_ruler_changes_with_a_preset():
    """Switching to Table 30.2 redraws the ruler at scale 0.5."""
    with running_app() as url, browser_page() as page:
        page.goto(url + "/quantize")
        page.wait_for_function(RULER_TITLE_JS, timeout=30000)
        assert "scale s = 0.1" in page.evaluate(RULER_TITLE_JS)
        page.get_by_role("combobox", name="The chapters' cases").click()
        page.get_by_role("option", name="Ch. 30 Table 30.2: scale 0.5").click()
        page.wait_for_function(f"() => ({RULER_TITLE_JS})().includes('scale s = 0.5')", timeout=30000)
        screenshot(page, "quantize-table-30-2")


def test_quant_model_page_shows_both_sweeps():
    """The model page draws the weight and KV-cache sweeps."""
    with running_app() as url, browser_page() as page:
        page.goto(url + "/quant_model")
        page.wait_for_function(
            """() => [...document.querySelectorAll('.js-plotly-plot')]
            .filter(g => ['Weights', 'KV cache'].includes(g.layout?.title?.text)).length === 2""",
            timeout=60000,
        )
        screenshot(page, "quant-model")


SHELF_VS_LABELS_JS = """() => {
  const g = [...document.querySelectorAll('.js-plotly-plot')].find(g => (g.layout?.title?.text || '').includes('-bit'));
  const ticks = [...g.querySelectorAll('.scatterlayer .trace:first-child .point')].map(p => p.getBoundingClientRect());
  const labels = [...g.querySelectorAll('.scatterlayer .textpoint text')].map(t => t.getBoundingClientRect());
  const hit = (p, q) => !(p.right <= q.left || q.right <= p.left || p.bottom <= q.top || q.bottom <= p.top);
  return [ticks.length, labels.length, labels.filter(l => ticks.some(t => hit(t, l))).length];
}"""

# Every text of the ruler figure (point labels, pills, arrow, caption, ticks, titles) as boxes on screen; the pairs
# that overlap; and the figure's bottom against the window's height.
RULER_TEXTS_JS = """() => {
  const g = [...document.querySelectorAll('.js-plotly-plot')].find(g => (g.layout?.title?.text || '').includes('-bit'));
  const sel = ['.scatterlayer .textpoint text', '.annotation-text-g', '.xtick text', '.ytick text', '.gtitle',
               '.g-xtitle text'];
  const boxes = sel.flatMap(s => [...g.querySelectorAll(s)]).map(e => [e.textContent, e.getBoundingClientRect()])
    .filter(([, r]) => r.width > 0 && r.height > 0);
  const hit = (p, q) => !(p.right <= q.left + 0.5 || q.right <= p.left + 0.5 || p.bottom <= q.top + 0.5
                          || q.bottom <= p.top + 0.5);
  const out = [];
  boxes.forEach(([a, p], i) => boxes.slice(i + 1).forEach(([b, q]) => { if (hit(p, q)) out.push([a, b]); }));
  return [boxes.length, out, g.getBoundingClientRect().bottom <= innerHeight];
}"""


@pytest.mark.parametrize("size,query", [((1280, 800), ""), ((1920, 1080), "?present=1")])
def test_ruler_bands_drawn_with_nothing_overlapping(size, query):
    """Ch. 19's ruler: 15 shelf ticks and 19 labels (11 plain shelf numbers, 4 stored, 4 values), no tick through a
    label, and no two texts of the figure (labels, the pills and their arrow, the caption, ticks, titles) overlap;
    in presenter mode the whole figure, all three bands, is on the first 1920 × 1080 screen."""
    with running_app() as url, browser_page(*size) as page:
        page.goto(url + "/quantize" + query)
        page.wait_for_function(RULER_TITLE_JS, timeout=30000)
        wait_idle(page)
        # [ticks, labels, labels crossed by a tick]: all drawn, none crossed
        wait_until(
            page, SHELF_VS_LABELS_JS, "([t, l, x]) => t === 15 && l === 19 && x === 0", what="no tick on a label"
        )
        ok = "([n, pairs, fits]) => n >= 30 && pairs.length === 0" + (" && fits" if query else "")
        texts = wait_until(page, RULER_TEXTS_JS, ok, what="no overlap, and in presenter mode on the first screen")
        screenshot(page, f"quantize-ruler-{size[0]}")
        assert texts[1] == []


def test_sweep_right_axis_has_round_ticks():
    """The quantized-model sweeps' right axis (% of positions) ticks at round steps (1, 2 or 5 × 10^k), not at
    values lined up with the left axis (0.73, 2.06, 3.4 …); the float reference is in the legend, not on a tick."""
    with running_app() as url, browser_page() as page:
        page.goto(url + "/quant_model")
        page.wait_for_function(
            """() => [...document.querySelectorAll('.js-plotly-plot')]
            .filter(g => ['Weights', 'KV cache'].includes(g.layout?.title?.text)).length === 2""",
            timeout=120000,
        )
        ticks = page.evaluate(
            """() => [...document.querySelectorAll('.js-plotly-plot')]
            .filter(g => ['Weights', 'KV cache'].includes(g.layout?.title?.text))
            .map(g => [g._fullLayout.yaxis2._vals.map(v => v.x), (g.layout.annotations || []).length])"""
        )
        for values, n_annotations in ticks:
            steps = {round(b - a, 9) for a, b in zip(values, values[1:], strict=False)}
            assert len(steps) == 1 and n_annotations == 0
            step = steps.pop()
            mantissa = step / 10 ** math.floor(math.log10(step))
            assert round(mantissa, 6) in (1, 2, 2.5, 5) and all(round(v / step, 6).is_integer() for v in values)


def test_new_values_reach_the_real_format_block():
    """The ruler's controls rerun only their part of the page (a fragment), but the real-format block
    below reads the values too: typing new values redraws it with their Q4_0 bytes, as core.quant.ruler_block
    (checked against the gguf package in test_ggml_blocks) stores them; a bit-width move keeps it."""
    from core.quant import ruler_block

    values = [0.5, -1.25, 2.0, 3.75, -0.125]
    expected = ruler_block.ruler_block(values, "Q4_0", 0).view.hex
    with running_app() as url, browser_page() as page:
        page.goto(url + "/quantize")
        page.wait_for_function(RULER_TITLE_JS, timeout=30000)
        hex_line = page.get_by_text("bytes in file order (hex)")
        before = hex_line.inner_text()
        page.get_by_role("slider", name="Bit width").press("ArrowLeft")
        page.wait_for_function(f"() => ({RULER_TITLE_JS})().includes('3-bit')", timeout=30000)
        assert hex_line.inner_text() == before
        box = page.get_by_label("Values (commas, spaces or new lines)")
        box.fill("0.5, <b>x</b>")  # refused, shown literally; the block below has nothing to store
        box.press("Control+Enter")
        page.get_by_text("('<b>x</b>') is not a number").wait_for(timeout=30000)
        assert hex_line.count() == 0
        box.fill(", ".join(map(str, values)))
        box.press("Control+Enter")
        page.get_by_text(expected).wait_for(timeout=30000)
        assert expected not in before
        assert "3-bit" in page.evaluate(RULER_TITLE_JS)  # the controls kept their setting


def test_a_ruler_error_leaves_the_rest_of_the_page():
    """A value the preset's scale cannot hold (1e300 at s = 0.1) is refused in the ruler's part of
    the page, but the parts below it still draw — the real-format block with its own refusal —
    and stay when the ruler recovers (scale automatic). With st.stop() in the fragment they
    vanished until a reload (found by a helper trying to break the page)."""
    with running_app() as url, browser_page() as page:
        page.goto(url + "/quantize")
        page.wait_for_function(RULER_TITLE_JS, timeout=30000)
        box = page.get_by_label("Values (commas, spaces or new lines)")
        box.fill("1e300, 2")
        box.press("Control+Enter")
        page.get_by_text("is too small for these values").wait_for(timeout=30000)
        block = page.get_by_text("Cannot store these values as Q4_0")
        block.wait_for(timeout=30000)
        assert page.get_by_text("Scales cost bits").count() == 1
        page.get_by_text("automatic", exact=True).click()
        page.wait_for_function(f"() => ({RULER_TITLE_JS})().includes('4-bit symmetric')", timeout=30000)
        wait_idle(page)
        assert block.count() == 1 and page.get_by_text("Scales cost bits").count() == 1
        assert page.get_by_test_id("stException").count() == 0
