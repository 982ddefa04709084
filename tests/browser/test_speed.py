"""Real browser: "Fewer bits on two machines" on the speed page, at a laptop's 1280×800 and a projector's 1920×1080
(presenter mode): every text of the figure (panel titles, bar labels, the model and batch groups, ticks, axis
titles) apart from every other, and the whole figure no taller than the screen."""

import pytest

from bench.browser import browser_page, running_app, screenshot, wait_idle, wait_until

pytestmark = pytest.mark.browser

TWO_MACHINES_JS = """() => {
  const g = [...document.querySelectorAll('.js-plotly-plot')]
    .find(g => (g.layout?.annotations || []).some(a => (a.text || '').includes('measured elsewhere')));
  if (!g) return null;
  const sel = ['.barlayer .bartext', '.annotation-text-g', '.xtick text', '.x2tick text', '.ytick text',
               '.y2tick text', '.g-xtitle text', '.g-x2title text', '.yaxislayer-above text'];
  const boxes = [...new Set(sel.flatMap(s => [...g.querySelectorAll(s)]))]
    .map(e => [e.textContent, e.getBoundingClientRect()]).filter(([, r]) => r.width > 0 && r.height > 0);
  const hit = (p, q) => !(p.right <= q.left + 0.5 || q.right <= p.left + 0.5 || p.bottom <= q.top + 0.5
                          || q.bottom <= p.top + 0.5);
  const out = [];
  boxes.forEach(([a, p], i) => boxes.slice(i + 1).forEach(([b, q]) => { if (hit(p, q)) out.push([a, b]); }));
  return [boxes.length, out, g.getBoundingClientRect().height <= innerHeight];
}"""


@pytest.mark.parametrize("size,query", [((1280, 800), ""), ((1920, 1080), "?present=1")])
def test_two_machines_figure_has_nothing_overlapping_and_fits_a_screen(size, query):
    """The reference GPU's 17 bars and their labels, both panels' titles and axes: no two texts overlap, and the
    figure fits one screen (presenter mode: 1920 × 1080)."""
    with running_app() as url, browser_page(*size) as page:
        page.goto(url + "/speed" + query)
        wait_idle(page, 120000)
        page.wait_for_function(TWO_MACHINES_JS, timeout=60000)
        found = wait_until(page, TWO_MACHINES_JS, "([n, pairs, fits]) => n >= 40 && pairs.length === 0 && fits",
                           what="no overlap, one screen tall")  # fmt: skip
        page.get_by_text("Fewer bits on two machines").scroll_into_view_if_needed()
        screenshot(page, f"speed-two-machines-{size[0]}")
        assert found[1] == []
