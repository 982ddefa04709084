"""Real browser: `streamlit run` + headless Chromium, prefill and three steps."""

import pytest

from bench.browser import browser_page, heatmap_rows, running_app, screenshot, wait_idle, wait_rows, wait_still
from core.decode import settings as decode_settings
from core.model.shipped import load_shipped_tokenizer
from core.model.tokenizer import encode

pytestmark = pytest.mark.browser


def test_prefill_and_three_steps_grow_the_heatmap():
    """The heatmap has one row per prompt position after prefill, then grows by one per step."""
    n = len(encode(load_shipped_tokenizer(), decode_settings.DEFAULT_PROMPT))
    with running_app() as url, browser_page() as page:
        page.goto(url)
        box = page.get_by_role("textbox", name="Prompt (any text")
        box.click()
        page.keyboard.press("Control+End")
        page.keyboard.type(" ")  # an edit: streamlit shows "Press Ctrl+Enter to apply · n/200000"
        hint = page.get_by_test_id("InputInstructions").first
        hint.wait_for(timeout=30000)
        area, said = box.bounding_box(), hint.bounding_box()
        screenshot(page, "decode-prompt-open")
        # The open prompt box was 3 short lines (~170 px wide) with that hint over its last line.
        assert area["width"] > 380 and said["y"] >= area["y"] + area["height"] - 1, (area, said)
        page.keyboard.press("Backspace")
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
        # Under load (the full suite on two workers) Play's queued steps ran for seconds after the click: wait
        # until the page has taken the Pause (its button reads Play again), then for a step already in flight.
        page.get_by_role("button", name="Play ▶").wait_for(timeout=30000)
        wait_idle(page)  # the run that drew it (and any step in flight before it) has ended
        paused = heatmap_rows(page)
        # This test is about time: paused, the stage stays put for 2 s (Play's pace is 0.2–2 s per token, a
        # playing stage would have stepped); a fixed pause is the measurement itself.
        page.wait_for_timeout(2000)
        assert heatmap_rows(page) == paused >= n + 3


# The toast's box, the KV bar's and how many controls are shown: what the test below measures.
TOAST_AND_CONTROLS_JS = """() => {
  const box = (e) => { const r = e && e.getBoundingClientRect(); return r && [r.x, r.y, r.width, r.height]; };
  return [box(document.querySelector('[data-testid=stToast]')), box(document.querySelector('.kv-bar')),
          document.querySelectorAll('[data-testid=stMain] button').length];
}"""

TOAST_OVER_CONTROLS_JS = """() => {
  const t = document.querySelector('[data-testid=stToast]').getBoundingClientRect();
  const controls = document.querySelectorAll('[data-testid=stMain] button, [data-testid=stMain] input, '
    + '[data-testid=stMain] textarea, [data-testid=stMain] [data-baseweb=select]');
  return [...controls].filter(c => {
    const r = c.getBoundingClientRect();
    // shown (a code block's copy button is transparent until the pointer is on the block)
    const shown = c.checkVisibility({opacityProperty: true, visibilityProperty: true});
    return shown && r.left < t.right && t.left < r.right && r.top < t.bottom && t.top < r.bottom;
  }).map(c => (c.innerText || c.getAttribute('aria-label') || c.tagName).trim().slice(0, 30));
}"""


@pytest.mark.parametrize("width,height,query", [(1280, 800, ""), (1920, 1080, "&present=1")])
def test_a_shared_links_note_covers_no_control(width, height, query):
    """A link asking for more steps than the request runs (the model ends after 47) leaves a note until it is
    closed. It floats at the bottom right: at the top right it covered the head picker, Settings and "Continue
    past the end token" (at 1920×1080), Settings (at 1280×800). On a projector it covers no part of the stage."""
    with running_app() as url, browser_page(width, height) as page:
        page.goto(f"{url}/?step=200{query}")
        page.get_by_test_id("stToast").wait_for(timeout=60000)
        page.get_by_role("button", name="Continue past the end token").wait_for(timeout=30000)
        wait_idle(page)
        # The toast slides in: measure once its box and the controls' boxes have stopped moving.
        wait_still(page, TOAST_AND_CONTROLS_JS)
        covered = page.evaluate(TOAST_OVER_CONTROLS_JS)
        screenshot(page, f"link-note-{width}x{height}")
        toast, kv = page.get_by_test_id("stToast").bounding_box(), page.locator(".kv-bar").bounding_box()
        clamped = page.get_by_test_id("stToastViewButton").count()
        assert not covered, covered
        if query:
            # On a projector the note lies under the stage's right column, its whole text in two lines: it
            # covered the positions bar and its caption, its end behind "view more". (Under load the badge above can
            # take a second line, and the toast then covers the caption's last line: the bar and the KV line stay
            # clear.)
            assert toast["y"] >= kv["y"] + kv["height"], (toast, kv)
            assert toast["height"] < 100 and not clamped, (toast, clamped)
