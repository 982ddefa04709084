"""Real browser: `streamlit run` + headless Chromium, prefill and three steps."""

import pytest

from core import state as K
from core.assets import load_shipped_tokenizer
from core.tokenizer import encode
from tests.browser_util import browser_page, heatmap_rows, running_app, screenshot, wait_rows

pytestmark = pytest.mark.browser


def test_prefill_and_three_steps_grow_the_heatmap():
    """The heatmap has one row per prompt position after prefill, then grows by one per step."""
    n = len(encode(load_shipped_tokenizer(), K.DEFAULT_PROMPT))
    with running_app() as url, browser_page() as page:
        page.goto(url)
        page.get_by_role("button", name="Prefill").click()
        wait_rows(page, n)
        screenshot(page, "decode-prefill")
        for i in range(1, 4):
            page.get_by_role("button", name="Step ▸").click()
            wait_rows(page, n + i)
        assert heatmap_rows(page) == n + 3
        screenshot(page, "decode-3-steps")


def test_play_steps_on_its_own_and_pause_stops_it():
    """Play adds rows without clicks; after Pause the row count stays put."""
    with running_app() as url, browser_page() as page:
        page.goto(url)
        page.get_by_role("button", name="Prefill").click()
        page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 2", timeout=30000)
        n = heatmap_rows(page)
        page.get_by_role("button", name="Play ▶").click()
        wait_rows(page, n + 3, timeout_ms=30000)
        page.get_by_role("button", name="Pause ❚❚").click()
        page.wait_for_timeout(1500)
        paused = heatmap_rows(page)
        page.wait_for_timeout(2000)
        assert heatmap_rows(page) == paused >= n + 3
