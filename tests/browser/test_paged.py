"""Real browser: the paged KV cache page — step the eight students, then a request leaving."""

import pytest

from bench.browser import browser_page, rerun, running_app, screenshot

pytestmark = pytest.mark.browser

POOL_TITLE = """() => [...document.querySelectorAll('.js-plotly-plot')]
    .map(g => g.layout?.title?.text || '').find(t => t.startsWith('Physical pool')) || ''"""


def test_paged_page_steps_and_a_request_leaves():
    """Two steps fill blocks #0–#5 (two students, two shared blocks); on 'one long and many short' a
    short request finishes and its block is free again."""
    with running_app() as url, browser_page() as page:
        page.goto(url + "/paged")
        page.wait_for_function(f"() => ({POOL_TITLE})().includes('0 of 48 blocks')", timeout=60000)
        step = page.get_by_role("button", name="Step ▸ (one pass)")
        step.click()
        page.get_by_text("Step 1 ·").first.wait_for(timeout=30000)
        step.click()
        page.get_by_text("R2 joins the batch: prefill of 28 tokens, 32 read from shared blocks").wait_for(timeout=30000)
        # The pool chart can be drawn after the text above it: wait for its new title (a wrong count
        # times out here), not read the title of the step before.
        page.wait_for_function(f"() => ({POOL_TITLE})() === 'Physical pool: 6 of 48 blocks in use'", timeout=30000)
        assert page.evaluate(POOL_TITLE) == "Physical pool: 6 of 48 blocks in use"
        screenshot(page, "paged-two-students")
        page.get_by_test_id("stMain").get_by_test_id("stSelectbox").first.click()
        page.get_by_role("option", name="one long and many short").click()
        page.get_by_text("Step 0 ·").first.wait_for(timeout=30000)
        for _ in range(8):
            with rerun(page):  # each click its own step: the next once this one's run has ended
                step.click()
        page.get_by_text("R2 finished after 8 tokens: 1 block free again.").wait_for(timeout=30000)
        assert page.get_by_test_id("stException").count() == 0
        screenshot(page, "paged-request-leaves")
