"""Real browser: the quantization pages."""

import pytest

from tests.browser_util import browser_page, running_app, screenshot

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
