"""Real browser: "See it move" draws every frame of its animation with no two pieces of text on top of each other,
on a laptop (1280×800) and on a projector (1920×1080, ?present=1): the title, the counters' bar labels, every axis's
tick labels and title, the wall's label, Play / Pause and the frame slider's labels (issue 50: the wall's label
printed over the counters' axis title; the shelf's axis title sat among the buttons and the slider)."""

import pytest

from bench.browser import browser_page, running_app, screenshot, wait_app_style, wait_idle, wait_still, wait_until
from core.decode.see_it_move import MOMENTS, frames
from core.model.shipped import load_model, load_shipped_tokenizer
from ui import see_it_move as see_it_move_ui

pytestmark = pytest.mark.browser

FIGURE = "[data-testid=stMain] .js-plotly-plot"
CURRENT = f"{FIGURE} .slider-group > text.slider-label"  # the slider's "frame N"

# Every visible piece of text the figure draws (plotly draws all of it as SVG text: the title, tick labels, axis
# titles, annotations, bar labels, the buttons' and the slider's labels), as boxes in CSS px, with the figure's box.
TEXTS_JS = f"""() => {{
  const fig = document.querySelector('{FIGURE}');
  const texts = [];
  for (const t of fig.querySelectorAll('svg text')) {{
    const r = t.getBoundingClientRect(), s = getComputedStyle(t);
    if (!t.textContent.trim() || !r.width || !r.height || s.display === 'none' || s.visibility === 'hidden'
        || Number(s.opacity) === 0 || t.closest('[display=none]')) continue;
    texts.push({{text: t.textContent, box: [r.left, r.top, r.right, r.bottom]}});
  }}
  const f = fig.getBoundingClientRect();
  return {{figure: [f.left, f.top, f.right, f.bottom], texts,
    current: document.querySelector('{CURRENT}')?.textContent ?? null}};
}}"""


@pytest.fixture(scope="module")
def url():
    with running_app() as u:
        yield u


@pytest.fixture(scope="module")
def titles():
    """Each frame's title as the page shows it (the moment, then the frame's sentence), from the shipped model's
    run of the page's default prompt."""
    run = frames(load_model(), load_shipped_tokenizer(), see_it_move_ui.DEFAULTS[see_it_move_ui.SEE_PROMPT])
    return [MOMENTS[f.moment] + f.caption for f in run]


def overlapping(texts: list[dict]) -> list[tuple[str, str]]:
    """Pairs of texts whose boxes share more than half a pixel each way."""
    pairs = []
    for i, a in enumerate(texts):
        for b in texts[i + 1 :]:
            (al, at, ar, ab), (bl, bt, br, bb) = a["box"], b["box"]
            if min(ar, br) - max(al, bl) > 0.5 and min(ab, bb) - max(at, bt) > 0.5:
                pairs.append((a["text"], b["text"]))
    return pairs


@pytest.mark.parametrize(("width", "height", "query"), [(1280, 800, ""), (1920, 1080, "?present=1")])
def test_no_two_texts_of_the_animation_overlap_in_any_frame(url, titles, width, height, query):
    """Every frame, chosen on the slider: no two text boxes of the figure intersect, every one lies inside the
    figure, and the counters show their scores in all four moments."""
    with browser_page(width, height) as page:
        page.goto(f"{url}/see_it_move{query}")
        ticks = page.locator(f"{FIGURE} .slider-tick-rect")
        ticks.first.wait_for(timeout=120000)
        wait_app_style(page)
        wait_idle(page, 120000)
        assert ticks.count() == len(titles)
        rail = page.locator(f"{FIGURE} .slider-rail-touch-rect")
        rail.scroll_into_view_if_needed()
        problems = []
        for i, title in enumerate(titles):
            tick, box = ticks.nth(i).bounding_box(), rail.bounding_box()
            page.mouse.click(tick["x"] + tick["width"] / 2, box["y"] + box["height"] / 2)  # the slider jumps there
            wait_until(page, TEXTS_JS, "(v) => v.current === arg", arg=f"frame {i + 1}", what=f"frame {i + 1} chosen")
            drawn = wait_still(page, TEXTS_JS)  # the slide to the frame (300 ms) over
            texts, (fl, ft, fr, fb) = drawn["texts"], drawn["figure"]
            shown = [t["text"] for t in texts]
            outside = [t["text"] for t in texts if t["box"][0] < fl - 0.5 or t["box"][2] > fr + 0.5
                       or t["box"][1] < ft - 0.5 or t["box"][3] > fb + 0.5]  # fmt: skip
            if title not in shown:
                problems.append((i + 1, "title", title, shown[:3]))
            if not any(t.endswith(" scores") for t in shown):
                problems.append((i + 1, "no counter shows its scores"))
            if overlapping(texts) or outside:
                problems.append((i + 1, overlapping(texts), outside))
                screenshot(page, f"see-it-move-overlap-{width}-frame-{i + 1}")
    assert not problems, problems
