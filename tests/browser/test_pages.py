"""Real browser: one test per lesson page not covered elsewhere — open it, drive it, see the figure change."""

import pytest

from bench.browser import browser_page, running_app, screenshot

pytestmark = pytest.mark.browser

TITLES_JS = "() => [...document.querySelectorAll('.js-plotly-plot')].map(g => g.layout?.title?.text || '')"


def _wait_title(page, needle, timeout=30000):
    page.wait_for_function(f"() => ({TITLES_JS})().some(t => t.includes({needle!r}))", timeout=timeout)


def test_worked_example_toggle_rescales():
    """Toggling 1/√d changes on's scores from 3 to 2.121."""
    with running_app() as url, browser_page() as page:
        page.goto(url + "/worked")
        page.get_by_text("q_on · k_cat = 2 × 1 + 1 × 1 = 3").first.wait_for(timeout=30000)
        page.get_by_text("Apply the usual 1/√d scaling").click()
        page.get_by_text("q_on · k_cat = (2 × 1 + 1 × 1) × 1/√2 = 2.121").first.wait_for(timeout=30000)
        screenshot(page, "worked-scaled")


def test_context_window_policy_switch():
    """Switching from sliding to stop redraws with a 'stopped' note."""
    with running_app() as url, browser_page() as page:
        page.goto(url + "/context")
        _wait_title(page, "Cache bytes")
        page.get_by_text("stop", exact=True).click()
        page.get_by_text("Stopped at the wall: the window of 64 positions is full").first.wait_for(timeout=30000)
        screenshot(page, "context-stop")


def test_latency_exercise_1():
    """Switching the trace to exercise 1 shows TTFT 100 ms."""
    with running_app() as url, browser_page() as page:
        page.goto(url + "/latency")
        _wait_title(page, "Queue, prefill")
        page.get_by_text("Exercise 1", exact=True).click()
        page.wait_for_function(
            """() => [...document.querySelectorAll('.js-plotly-plot')].some(g =>
            (g.data || []).some(t => t.type === 'scatter' && JSON.stringify(t.x) === '[110,160,220]'))""",
            timeout=30000,
        )
        screenshot(page, "latency-exercise-1")


def test_weights_card_budget():
    """Typing another model card redraws the memory bar."""
    with running_app() as url, browser_page() as page:
        page.goto(url + "/weights")
        _wait_title(page, "")
        box = page.get_by_role("textbox", name="Model card")
        box.fill("13B, Q8, 4K")
        box.press("Enter")
        page.get_by_text("13 billion parameters").first.wait_for(timeout=30000)
        screenshot(page, "weights-13b")


# Rows of request 1's attention figure (each of its heatmap traces spans every row).
REQUEST_1_ROWS = """[...document.querySelectorAll('.js-plotly-plot')]
    .find(g => (g.layout?.title?.text || '').startsWith('request 1'))?._fullData[0].z.length"""


def test_batching_prefill_and_step():
    """Prefill the batch, step once: the request heatmap gains a row."""
    with running_app() as url, browser_page() as page:
        page.goto(url + "/batching")
        page.get_by_role("button", name="Prefill the batch").click()
        _wait_title(page, "request 1: layer ")
        rows = page.evaluate(f"() => {REQUEST_1_ROWS}")
        page.get_by_role("button", name="Step ▸ (one pass)").click()
        page.wait_for_function(
            f"() => {REQUEST_1_ROWS} === {rows + 1}",
            timeout=30000,
        )
        screenshot(page, "batching-step")


def test_speculative_round():
    """Start and one round: the rounds table appears and the target pass count reads 2."""
    with running_app() as url, browser_page() as page:
        page.goto(url + "/speculative")
        page.get_by_role("button", name="Start (prefill the target)").click()
        # Round only once Start has run (one target pass): a click while the Start rerun is still pending can
        # replace its trigger (streamlit keeps the latest widget state), and the round then asks for Start first.
        page.get_by_test_id("stMetricValue").nth(1).filter(has_text="1").wait_for(timeout=30000)
        page.get_by_role("button", name="Round ▸").click()
        page.get_by_test_id("stMetricValue").nth(1).filter(has_text="2").wait_for(timeout=30000)
        screenshot(page, "speculative-round")


def test_the_decode_page_opens_by_its_own_name():
    """``/decode`` (the decode page's name, as every other page is opened by its name) opens the decode page, with
    the address's parameters, and no "Page not found" dialog; the decode page is still the one at the root."""
    with running_app() as url, browser_page(1920, 1080) as page:
        page.goto(url + "/decode?present=1")
        page.get_by_role("heading", name="Prefill & decode").first.wait_for(timeout=60000)
        page.wait_for_url("**/?present=1", timeout=30000)
        page.get_by_role("button", name="Prefill").first.wait_for(timeout=30000)
        assert page.get_by_text("Page not found").count() == 0
        assert page.get_by_role("dialog").count() == 0
        screenshot(page, "decode-by-name")
