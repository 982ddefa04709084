"""The handout opens offline: headless Chromium with every non-file request aborted and the
context offline draws each figure with the inlined plotly.js."""

import pytest

from bench.browser import ARTIFACTS, browser_page
from core.viz.latency import fig_timeline
from tests.core.lesson.test_handout import handout

pytestmark = pytest.mark.browser

DRAWN_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(
    g => ({traces: (g.data || []).length, svg: g.querySelectorAll('.main-svg').length,
           points: g.querySelectorAll('.point, .bars path, .scatterlayer path').length}))"""


def test_handout_draws_its_figures_offline(tmp_path):
    """Both figures draw (traces, SVG, marks) with the network off; no request leaves file://."""
    path = tmp_path / "handout.html"
    path.write_text(handout(), encoding="utf-8")
    blocked = []
    with browser_page(1280, 800, fresh=True) as page:  # a context of its own: it is taken offline
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


BOX_JS = """(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; }"""


def test_timeline_legend_keeps_clear_of_its_title_in_presenter_fonts(tmp_path):
    """The latency timeline as a presenter-mode page leaves it in a handout (fonts 20/24, ui.chart's
    sizes): its legend wraps to two lines and must run over neither the title nor the time axis's title."""
    from core.lesson.handout import HandoutStop, build_handout
    from core.serving.latency import EDITABLE

    fig = fig_timeline(
        EDITABLE["Edit several requests"],
        "Queue, prefill, and every emitted token (label: cached positions after the pass)",
    )
    fig.update_layout(font_size=20, hoverlabel_font_size=20, title_font_size=24)
    path = tmp_path / "handout.html"
    path.write_text(build_handout("t", [HandoutStop("Latency", "text", fig)], []), encoding="utf-8")
    with browser_page(1280, 1200) as page:
        page.goto(path.as_uri())
        page.wait_for_function("() => document.querySelector('.js-plotly-plot .legend')", timeout=30000)
        title, axis = page.evaluate(BOX_JS, ".gtitle"), page.evaluate(BOX_JS, ".xtitle")
        tops = page.evaluate(
            "() => [...document.querySelectorAll('.legend .legendtext')].map(t => t.getBoundingClientRect().top)"
        )
        assert len({round(t) for t in tops}) == 2  # the case that overlapped: the legend wraps to two rows
        assert title["bottom"] < min(tops) and axis["bottom"] <= min(tops), (title, axis, tops)
