"""Real browser: Predict first's answer chips on a projector (1920×1080, ?present=1). A punctuation token ("!", ",",
".") made a chip as narrow as its glyph, a few pixels of text that the back of a room could not pick out (issue 50);
every chip is now at least 6 rem wide (126 px at presenter mode's 21-px root)."""

import pytest

from bench.browser import browser_page, running_app, wait_app_style, wait_idle, wait_still

pytestmark = pytest.mark.browser

# Each chip's token and box, in CSS px, with the root font size.
CHIPS_JS = """() => [...document.querySelectorAll('.st-key-stage-question button')].map((b) => {
  const r = b.getBoundingClientRect(), code = b.querySelector('code');
  return {text: code ? code.textContent : b.innerText, width: r.width, top: Math.round(r.top),
          root_px: parseFloat(getComputedStyle(document.documentElement).fontSize)};
})"""


@pytest.fixture(scope="module")
def url():
    with running_app() as u:
        yield u


def test_every_answer_chip_is_wide_enough_for_the_back_of_the_room(url):
    """After Prefill with Predict first on the default prompt (its question offers "!", ",", "." and "?"), each of
    the five chips is at least 6 × the root font size wide (126 px; the punctuation chips were 79 px, their glyph
    a 25-px code span), and the five still sit in one row."""
    with browser_page(1920, 1080) as page:
        page.goto(f"{url}/?predict=1&present=1")
        page.get_by_role("button", name="Prefill").click(timeout=120000)
        page.locator(".st-key-stage-question button").first.wait_for(timeout=60000)
        wait_app_style(page)
        wait_idle(page)
        chips = wait_still(page, CHIPS_JS)
    assert len(chips) == 5 and {"!", ",", "."} <= {c["text"] for c in chips}, chips
    root = chips[0]["root_px"]
    assert root == 21, chips  # presenter mode's root size (assets/style/presenter.css)
    assert all(c["width"] >= 6 * root for c in chips), chips
    assert len({c["top"] for c in chips}) == 1, chips  # one row
