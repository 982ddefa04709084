"""Real browser: Figure 30.1 (latency page) and Ch. 19's two speeds (cache page, five positions) as drawn, at a
laptop's 1280×800 and a projector's 1920×1080 in presenter mode: each figure fits one screen and none of its texts
overlaps another."""

import pytest

from bench.browser import browser_page, running_app, screenshot, wait_idle, wait_still

pytestmark = pytest.mark.browser

# The figure whose texts include ``marker``: its height, the screen's height below the top bar, and every pair of
# its texts (annotations: labels, steps, notes, captions) whose boxes overlap by more than a pixel.
OVERLAPS_JS = """(marker) => {
  const plot = [...document.querySelectorAll('[data-testid=stMain] .js-plotly-plot')]
    .find((g) => g.textContent.includes(marker));
  if (!plot) return null;
  plot.scrollIntoView({block: 'start'});
  const texts = [...plot.querySelectorAll('g.annotation')]
    .filter((a) => a.textContent.trim())
    .map((a) => ({text: a.textContent, box: a.querySelector('text').getBoundingClientRect()}));
  const hit = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const overlaps = [];
  texts.forEach((a, i) => texts.slice(i + 1).forEach((b) => {
    if (hit(a.box, b.box)) overlaps.push([a.text, b.text]);
  }));
  return {height: plot.getBoundingClientRect().height, room: window.innerHeight
          - document.querySelector('header').getBoundingClientRect().bottom, texts: texts.length, overlaps};
}"""

# page → its figures in turn: (name, the clicks that bring the figure (role, name), a text only that drawing has).
# A page's figures share one page load (the clicks are reruns of the same session).
CASES = {
    "latency": (
        ("figure-30-1", (), "Output selection precedes consumption"),
        (
            "figure-30-1-measured",
            (
                ("radio", "Measured: a batch here, with and without the KV cache"),
                ("button", "Run 4 requests, each way"),
            ),
            "request 1 (cache): bytes from M",
        ),
    ),
    "cache": (("two-speeds-five", (("button", "Ch. 19's figure: five positions"),), "6, 7, then 8 positions"),),
    "decode": (  # the decode page's 51-position prompt: its chips folded
        (
            "two-speeds-long",
            (("text", "Two speeds, one model: this prompt's prefill and its first three steps"),),
            "52, 53, then 54 positions",
        ),
    ),
}


@pytest.mark.parametrize("size", [(1280, 800, ""), (1920, 1080, "?present=1")], ids=["laptop", "projector"])
@pytest.mark.parametrize("page_name", CASES)
def test_the_figure_fits_one_screen_and_no_text_overlaps(page_name, size):
    """Each figure is no taller than the screen under the top bar, and no two of its texts overlap."""
    width, height, query = size
    found = {}
    with running_app() as url, browser_page(width, height) as page:
        page.goto(f"{url}/{page_name}{query}")
        page.locator("[data-testid=stMain] h1").first.wait_for(timeout=120000)  # the page's title: its run began
        wait_idle(page, 120000)
        for case, clicks, marker in CASES[page_name]:
            for role, name in clicks:
                target = page.get_by_text(name, exact=True) if role == "text" else page.get_by_role(role, name=name)
                target.first.click(force=role == "radio")
                wait_idle(page, 120000)
            page.wait_for_function(f"(m) => ({OVERLAPS_JS})(m) !== null", arg=marker, timeout=120000)
            found[case] = wait_still(page, OVERLAPS_JS, marker)
            screenshot(page, f"{case}-{width}")
    for case, seen in found.items():
        assert seen["texts"] >= 10, (case, seen)
        assert seen["height"] <= seen["room"], (case, seen)
        assert seen["overlaps"] == [], (case, seen)
