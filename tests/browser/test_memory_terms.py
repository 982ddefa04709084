"""Real browser: the KV-memory page's term boxes (L, query heads, H_kv, d, W, b, T) line up on the lesson's memory
stop at 1920×1080 presenting and on a laptop: every label one line, so every box starts at the same height in its
row (issue 50: in five columns of presenter-size text "H_kv: KV heads per layer" wrapped to three lines beside
one-line "L: layers", the boxes sat at three heights)."""

import pytest

from bench.browser import browser_page, running_app, wait_app_style, wait_idle, wait_still

pytestmark = pytest.mark.browser

# The term boxes' labels (L, query heads, H_kv, d, W, then b and T): text, height and top, the top of the box under
# each, and the label's line height, in CSS px.
TERMS = ("L:", "Query heads", "H_kv:", "d:", "W:", "b:", "T:")
TERMS_JS = """(terms) => [...document.querySelectorAll('[data-testid=stMain] [data-testid=stWidgetLabel]')]
  .filter((l) => terms.some((t) => l.innerText.startsWith(t)))
  .map((l) => { const r = l.getBoundingClientRect();
    const box = l.parentElement.lastElementChild;  // the widget's box (a select box has a hidden element between)
    return {label: l.innerText, height: Math.round(r.height), top: Math.round(r.top),
            box: Math.round(box.getBoundingClientRect().top),
            line: parseFloat(getComputedStyle(l.querySelector('p')).lineHeight)}; })"""


@pytest.fixture(scope="module")
def url():
    with running_app() as u:
        yield u


@pytest.mark.parametrize(
    ("width", "height", "where"),
    [(1920, 1080, "?lesson=fifteen-minutes&stop=4&present=1"), (1280, 800, "memory")],
)
def test_the_term_labels_are_one_line_and_the_boxes_line_up(url, width, height, where):
    """Llama-3-8B's terms (the lesson's stop 4, and the page on a laptop): the seven labels have one height, one line
    of their text, and the boxes of a row start at one height (presenter mode's rows: L, query heads, H_kv; d, W;
    b, T). Before: labels 39, 77 and 116 px high in presenter mode, the boxes at three heights."""
    with browser_page(width, height) as page:
        page.goto(f"{url}/{where}")
        page.locator("[data-testid=stMain] [data-testid=stNumberInput]").first.wait_for(timeout=120000)
        wait_app_style(page)
        wait_idle(page, 120000)
        terms = wait_still(page, TERMS_JS, list(TERMS))
    assert [t["label"].split(":")[0] for t in terms] == ["L", "Query heads", "H_kv", "d", "W", "b", "T"], terms
    assert len({t["height"] for t in terms}) == 1 and terms[0]["height"] < 1.5 * terms[0]["line"], terms
    rows = {}
    for t in terms:
        rows.setdefault(t["top"], set()).add(t["box"])
    assert all(len(boxes) == 1 for boxes in rows.values()), rows
