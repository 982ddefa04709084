"""Every chart on every page has its text alternative on the page, next to it, with a table toggle."""

import html

import pytest

import ui
from tests.app_util import charts, click, new_app, plotly_array

PAGES = [path for path, _, _ in ui.PAGES if path not in ("lessons/decode.py", "lessons/practice.py")]


def _shown(at) -> list[str]:
    return [h.proto.body for h in at.get("html") if 'class="chart-desc"' in h.proto.body]


@pytest.mark.parametrize("path", PAGES)
def test_every_chart_shows_its_description(path):
    """Each plotly chart carries a description, and the page shows exactly those sentences (escaped)."""
    at = new_app(path)
    if path == "lessons/batching.py":
        click(at, "Prefill the batch")
    if path == "lessons/speculative.py":
        click(at, "Sample")
    specs = charts(at)
    assert specs, f"{path}: no chart drawn"
    described = [s["layout"]["meta"]["description"] for s in specs]
    assert all(d.strip() for d in described)
    assert _shown(at) == [f'<p class="chart-desc">{html.escape(d)}</p>' for d in described]
    toggles = [t.label for t in at.toggle if t.label == "Show as table"]
    assert len(toggles) == len(specs) - (path == "lessons/quantize.py")  # the ruler's table is on the page


def test_show_as_table_lists_the_figure_numbers():
    """Turning on a chart's table shows the bytes the context page's chart draws."""
    at = new_app("lessons/context.py")
    spec = next(s for s in charts(at) if s["layout"]["title"]["text"].startswith("Cache bytes"))
    next(t for t in at.toggle if t.key == "ctx.bytes.table").set_value(True).run()
    frames = [df.value for df in at.dataframe]
    table = next(f for f in frames if "KV cache (bytes)" in f.columns)
    assert list(table["KV cache (bytes)"]) == list(plotly_array(spec["data"][0]["y"]))
