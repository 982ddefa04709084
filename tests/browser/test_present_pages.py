"""Real browser, presenter mode at 1920×1080 (issue 37): predict-first's next-token bars have room for their
labels (item 5) while the stage's KV line stays on the screen."""

import pytest
from playwright.sync_api import expect

from bench.browser import browser_page, running_app, wait_app_style

pytestmark = pytest.mark.browser

TIMEOUT = 90000
IDLE = '[data-test-script-state="notRunning"]'

# The five bars' label rows (plotly's y tick labels) and the KV line's box.
BARS_JS = """() => {
  const ticks = [...document.querySelectorAll('.bars-root .ytick text')].map(t => t.getBoundingClientRect());
  const kv = document.querySelector('.panel-kv');
  if (ticks.length < 5 || !kv) return null;
  const tops = ticks.map(b => b.top).sort((a, b) => a - b);
  return {gap: Math.min(...tops.slice(1).map((t, i) => t - tops[i])), height: Math.max(...ticks.map(b => b.height)),
          kvBottom: kv.getBoundingClientRect().bottom, screen: innerHeight};
}"""


@pytest.fixture(scope="module")
def url():
    with running_app() as u:
        yield u


def test_predict_first_bars_have_room_on_the_projector(url):
    """Predict first, prefilled, presenting: each bar's label has a row of its own (rows at least 1.15 × the
    label's height apart; at 150 px they were 16 px apart for 17-px labels) and the KV line ends on the screen."""
    with browser_page(1920, 1080) as page:
        page.goto(f"{url}/?present=1")
        prefill = page.get_by_role("button", name="Prefill")
        expect(prefill).to_be_visible(timeout=TIMEOUT)
        wait_app_style(page)
        page.locator('[data-testid="stCheckbox"] label').filter(has_text="Predict first").click()
        expect(page.locator(IDLE)).to_have_count(1, timeout=TIMEOUT)
        prefill.click()
        page.wait_for_function(f"() => ({BARS_JS})() !== null", timeout=TIMEOUT)
        expect(page.locator(IDLE)).to_have_count(1, timeout=TIMEOUT)
        page.wait_for_function(
            f"() => {{ const m = ({BARS_JS})(); return m && m.gap >= 1.15 * m.height && m.kvBottom <= m.screen; }}",
            timeout=TIMEOUT,
        )
