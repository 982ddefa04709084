"""Every chart on every page has its text alternative on the page, next to it, with a table toggle."""

import html

import pytest

from bench.fresh_app import new_app
from core.viz.memory import fig_kv_variants, fig_memory_budget
from tests.helpers.app_util import charts, click, plotly_array
from ui import frame

# Pages whose charts draw later (decode's stage in the browser, Practice's after a Check, Serve the class's once the
# engine has served a request: tests/browser/test_serve_class.py) or never (the summaries).
NO_CHART = ("app_pages/decode.py", "app_pages/practice.py", "app_pages/summary.py", "app_pages/serve_class.py")
PAGES = [path for path, _, _ in frame.PAGES if path not in NO_CHART]


def _shown(at) -> list[str]:
    return [h.proto.body for h in at.get("html") if 'class="chart-desc"' in h.proto.body]


@pytest.mark.parametrize("path", PAGES)
def test_every_chart_shows_its_description(path):
    """Each plotly chart carries a description, and the page shows exactly those sentences (escaped)."""
    at = new_app(path)
    if path == "app_pages/batching.py":
        click(at, "Prefill the batch")
    if path == "app_pages/speculative.py":
        click(at, "Sample")
    specs = charts(at)
    assert specs, f"{path}: no chart drawn"
    described = [s["layout"]["meta"]["description"] for s in specs]
    assert all(d.strip() for d in described)
    assert _shown(at) == [f'<p class="chart-desc">{html.escape(d)}</p>' for d in described]
    toggles = [t.label for t in at.toggle if t.label == "Show as table"]
    assert len(toggles) == len(specs) - (path == "app_pages/quantize.py")  # the ruler's table is on the page


def test_show_as_table_lists_the_figure_numbers():
    """Turning on a chart's table shows the bytes the context page's chart draws."""
    at = new_app("app_pages/context.py")
    spec = next(s for s in charts(at) if s["layout"]["title"]["text"].startswith("Cache bytes"))
    next(t for t in at.toggle if t.key == "ctx.bytes.table").set_value(True).run()
    frames = [df.value for df in at.dataframe]
    table = next(f for f in frames if "KV cache (bytes)" in f.columns)
    assert list(table["KV cache (bytes)"]) == list(plotly_array(spec["data"][0]["y"]))


def test_a_heatmap_table_marks_masked_cells_and_keeps_its_shares():
    """The worked example's table: the future (masked) cells read "—", not "None"; the newest row ('on')
    holds Ch. 19's shares e^s / Σ e^s for scores (1, 3, 1, 2) to 4 decimals."""
    import math

    at = new_app("app_pages/worked.py")
    next(t for t in at.toggle if t.key == "worked.grid.table").set_value(True).run()
    table = next(df.value for df in at.dataframe if "position asking (query)" in df.value.columns)
    first = table[table["position asking (query)"].str.endswith("the")].iloc[0]
    assert first.iloc[-1] == "—" and "None" not in table.to_string()
    e = [math.exp(s) for s in (1, 3, 1, 2)]
    newest = table[table["position asking (query)"].str.endswith("on")].iloc[-1]
    assert [float(v) for v in newest.iloc[-4:]] == [round(v / sum(e), 4) for v in e]


def test_a_table_names_untitled_axes_by_role():
    """A bar chart whose category axis has no title: its columns are "label" and the value axis's title
    (the memory budget's bar), never a bare "x" or "y"."""
    from core.viz.table import figure_table

    rows = figure_table(fig_memory_budget({"weights": 3.5, "KV cache": 1.0}, 4.0))
    assert set(rows[0]) >= {"label", "memory (GB = 10⁹ bytes)"} and not {"x", "y"} & set(rows[0])


def test_a_bar_label_never_replaces_its_category():
    """The KV-variants bars (untitled category axis, each bar's bytes written on it): the table keeps the
    sharing names MHA/GQA/MQA and their texts 4 B/2 B/1 B in separate columns."""
    from core.viz.table import figure_table

    rows = figure_table(fig_kv_variants(["MHA", "GQA", "MQA"], [4, 2, 1], ["4 B", "2 B", "1 B"], "GQA"))
    assert [r["label"] for r in rows] == ["MHA", "GQA", "MQA"]
    assert [r["text shown"] for r in rows] == ["4 B", "2 B", "1 B"]
