"""Real browser: every page at 1280×800 and at a projector's 1920×1080 in presenter mode (large text).

Saves a screenshot of each under test-artifacts/ (look at them) and checks that each page draws
its first figure without an exception element."""

import pytest

from tests.browser_util import browser_page, running_app, screenshot

pytestmark = pytest.mark.browser

PAGES = [
    "",
    "worked",
    "context",
    "latency",
    "batching",
    "paged",
    "speculative",
    "cost",
    "memory",
    "weights",
    "quantize",
    "quant_model",
    "practice",
]


@pytest.mark.parametrize("width,height,query", [(1280, 800, ""), (1920, 1080, "?present=1")])
def test_every_page_renders(width, height, query):
    """Each page shows its title and no exception, at both sizes."""
    with running_app() as url, browser_page(width, height) as page:
        for path in PAGES:
            page.goto(f"{url}/{path}{query}")
            page.locator("h1").first.wait_for(timeout=60000)
            page.wait_for_timeout(1500)
            assert page.get_by_test_id("stException").count() == 0, path
            screenshot(page, f"page-{path or 'decode'}-{width}x{height}")


def test_presenter_mode_scales_dataframes():
    """st.dataframe draws on a canvas that ignores font sizes: presenter mode zooms it, so the same table's rows are
    at least 1.3× as tall as at laptop size (1.35 by the style in ui.py)."""
    heights = {}
    with running_app() as url, browser_page(1920, 1080) as page:
        for query in ("", "?present=1"):
            page.goto(f"{url}/latency{query}")
            grid = page.get_by_test_id("stDataFrame").nth(1)  # the per-request table (the editor comes first)
            grid.wait_for(timeout=60000)
            page.wait_for_timeout(1000)
            heights[query] = grid.bounding_box()["height"]
            screenshot(page, f"presenter-dataframe{query.replace('?', '-').replace('=', '')}")
    assert heights["?present=1"] >= 1.3 * heights[""], heights
