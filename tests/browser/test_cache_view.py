"""Real browser: "Inside the cache" under the decode stage, opened after Prefill and 3 Steps, fits one screen on a
laptop (1280×800) and on a projector (1920×1080, ?present=1) below the page's top bar, with no two texts of its
figure on top of each other and none of its parts (the sentence, the figure, its text alternative, the caption)
over another."""

import pytest

from bench.browser import (
    browser_page,
    heatmap_rows,
    rerun,
    running_app,
    screenshot,
    wait_app_style,
    wait_idle,
    wait_rows,
    wait_still,
    wait_until,
)
from core.decode import settings as decode_settings
from core.model.shipped import load_shipped_tokenizer
from core.model.tokenizer import encode

pytestmark = pytest.mark.browser

PROMPT_LEN = len(encode(load_shipped_tokenizer(), decode_settings.DEFAULT_PROMPT))

# The open expander's box and the app's top bar's bottom; its parts' boxes (the blocks inside it, each a direct
# child of its content); every text its figure draws, with the figure's box; the figure's description.
MEASURE_JS = """() => {
  const box = [...document.querySelectorAll('[data-testid=stExpander]')]
    .find(e => e.querySelector('summary')?.textContent.includes('Inside the cache'));
  if (!box) return null;
  const rect = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const content = box.querySelector('[data-testid=stExpanderDetails]') || box;
  const column = content.querySelector('[data-testid=stVerticalBlock]') || content;
  const parts = [...column.children].map(e => ({text: e.textContent.slice(0, 40), box: rect(e)}))
    .filter(p => p.box[3] - p.box[1] > 0);
  const fig = box.querySelector('.js-plotly-plot');
  const texts = fig ? [...fig.querySelectorAll('svg text')].filter(t => {
    const r = t.getBoundingClientRect(), s = getComputedStyle(t);
    return t.textContent.trim() && r.width && r.height && s.display !== 'none' && s.visibility !== 'hidden';
  }).map(t => ({text: t.textContent, box: rect(t)})) : [];
  return {expander: rect(box), top: rect(document.querySelector('[data-testid=stHeader]'))[3], height: innerHeight,
          parts, figure: fig ? rect(fig) : null, texts,
          said: box.querySelector('.chart-desc')?.textContent ?? ''};
}"""


# Scroll the expander's top to just under the app's top bar (the page scrolls in streamlit's main area, not the
# window: the nearest ancestor that scrolls is moved).
UNDER_THE_BAR_JS = """() => {
  const box = [...document.querySelectorAll('[data-testid=stExpander]')]
    .find(e => e.querySelector('summary')?.textContent.includes('Inside the cache'));
  let scroller = box.parentElement;
  while (scroller && !(scroller.scrollHeight > scroller.clientHeight
                       && /auto|scroll/.test(getComputedStyle(scroller).overflowY))) scroller = scroller.parentElement;
  const bar = document.querySelector('[data-testid=stHeader]').getBoundingClientRect().bottom;
  (scroller || document.scrollingElement).scrollBy(0, box.getBoundingClientRect().top - bar - 4);
}"""


def overlapping(items: list[dict]) -> list[tuple[str, str]]:
    """Pairs of items whose boxes share more than half a pixel each way."""
    pairs = []
    for i, a in enumerate(items):
        for b in items[i + 1 :]:
            (al, at, ar, ab), (bl, bt, br, bb) = a["box"], b["box"]
            if min(ar, br) - max(al, bl) > 0.5 and min(ab, bb) - max(at, bt) > 0.5:
                pairs.append((a["text"], b["text"]))
    return pairs


@pytest.fixture(scope="module")
def url():
    with running_app() as u:
        yield u


@pytest.mark.parametrize(("width", "height", "query"), [(1920, 1080, "?present=1"), (1280, 800, "")])
def test_inside_the_cache_fits_one_screen_with_nothing_overlapping(url, width, height, query):
    """Opened after Prefill and 3 Steps and scrolled to just under the top bar: the whole expander is on the
    screen, its figure describes P + 3 cached positions, no two of the figure's texts overlap (each inside the
    figure), and none of the expander's parts overlaps another."""
    with browser_page(width, height) as page:
        page.goto(f"{url}/{query}")
        page.locator(".st-key-decode-head input").wait_for(timeout=120000)
        wait_app_style(page)
        wait_idle(page)
        page.get_by_role("button", name="Prefill").first.click()
        wait_rows(page, PROMPT_LEN, 60000)
        for _ in range(3):
            rows = heatmap_rows(page)
            page.keyboard.press("ArrowRight")
            wait_rows(page, rows + 1)
        summary = page.locator("summary", has_text="Inside the cache")
        summary.scroll_into_view_if_needed()
        with rerun(page):
            summary.click()
        page.get_by_text(f"No earlier vector was recomputed: the {PROMPT_LEN + 2} earlier rows").wait_for()
        wait_until(page, MEASURE_JS, "m => m && m.texts.length > 0", what="the figure drawn")
        wait_still(page, MEASURE_JS)  # drawn whole: a scroll before clamps at a shorter page's end
        page.evaluate(UNDER_THE_BAR_JS)
        got = wait_still(page, MEASURE_JS)
        screenshot(page, f"inside-the-cache-{width}x{height}")
        (_, top, _, bottom), (fl, ft, fr, fb) = got["expander"], got["figure"]
        assert got["top"] <= top and bottom <= got["height"], (top, bottom, got["top"], got["height"])
        assert got["said"].startswith(f"Layer 3, KV head 0: {PROMPT_LEN + 3} cached positions × 32 head_dim")
        outside = [t["text"] for t in got["texts"] if t["box"][0] < fl - 0.5 or t["box"][2] > fr + 0.5
                   or t["box"][1] < ft - 0.5 or t["box"][3] > fb + 0.5]  # fmt: skip
        assert not outside and not overlapping(got["texts"]), (outside, overlapping(got["texts"]))
        assert len(got["parts"]) >= 4 and not overlapping(got["parts"]), got["parts"]
