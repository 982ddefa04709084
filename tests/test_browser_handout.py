"""The handout opens offline: headless Chromium with every non-file request aborted and the
context offline draws each figure with the inlined plotly.js."""

import pytest

from tests.browser_util import ARTIFACTS, browser_page
from tests.test_handout import handout

pytestmark = pytest.mark.browser

DRAWN_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(
    g => ({traces: (g.data || []).length, svg: g.querySelectorAll('.main-svg').length,
           points: g.querySelectorAll('.point, .bars path, .scatterlayer path').length}))"""


def test_handout_draws_its_figures_offline(tmp_path):
    """Both figures draw (traces, SVG, marks) with the network off; no request leaves file://."""
    path = tmp_path / "handout.html"
    path.write_text(handout(), encoding="utf-8")
    blocked = []
    with browser_page(1280, 800) as page:
        page.context.set_offline(True)

        def route(r):
            if r.request.url.startswith("file://"):
                r.continue_()
            else:
                blocked.append(r.request.url)
                r.abort()

        page.context.route("**/*", route)
        page.goto(path.as_uri())
        page.wait_for_function(
            "() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 4", timeout=30000
        )
        drawn = page.evaluate(DRAWN_JS)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "handout.png"), full_page=True)
    assert blocked == []
    assert len(drawn) == 2 and all(d["traces"] > 0 and d["svg"] >= 2 and d["points"] > 0 for d in drawn), drawn
