"""Figures for every student: text contrast (WCAG 2.1 AA), palettes apart under simulated colour-vision
deficiency, and no meaning carried by colour alone. References: coloraide (contrast, CIEDE2000) and
colorspacious (Machado et al. 2009 simulation), not our own formulas."""

import itertools

import numpy as np
import pytest
from coloraide import Color
from colorspacious import cspace_convert

from core.cost import bill
from core.evaluate.format_speed.reference import gpu_headline, load_reference
from core.evaluate.quant_quality import QuantReport
from core.evaluate.speedups import BatchSpeed
from core.quant import ruler
from core.serving.latency import EDITABLE
from core.serving.paged import PagedKVCache
from core.serving.paged_presets import compare_policies
from core.serving.scheduler import Request
from core.serving.speculative import TokenShare
from core.viz import latency, memory, paged, quant, theme
from core.viz.attention import PLOT_BG, cell_colours, fig_attention
from core.viz.batching import fig_batch_cache, fig_batch_speed
from core.viz.context import fig_cache_over_time
from core.viz.cost import fig_growth_shapes, fig_measured, fig_step_work
from core.viz.fewer_bits import fig_two_machines
from core.viz.ruler import fig_ruler
from core.viz.speculative import fig_three_distributions
from tests.conftest import make_model

# Under simulated deuteranopia, protanopia and tritanopia (full severity), every two colours of a palette
# stay at least this far apart (CIEDE2000). ΔE00 ≈ 1 is a just-noticeable difference between large patches
# side by side under lab viewing; chart marks are small, apart, and seen on classroom projectors and
# uncalibrated laptops, where crowdsourced measurements (Stone, Szafir & Setlur 2014; Szafir 2018) put the
# difference needed for reliably distinct marks several times higher. 10 is our floor.
MIN_DELTA_E = 10
CVD = ("deuteranomaly", "protanomaly", "tritanomaly")

PALETTES = {
    "cached vs new rows (heatmap outline, bars, lines)": [theme.CACHED, theme.NEW_WORK],
    "cached vs recompute lines": [theme.CACHED, theme.NEW_WORK],
    "shelves, values, values outside the range (ruler)": [theme.MUTED, theme.CACHED, theme.NEW_WORK],
    "request colours (paged pool, block tables) and shared blocks": [*paged.REQUEST_COLOURS, paged.SHARED_FILL],
    "static vs continuous batching": [theme.CACHED, theme.NEW_WORK],
    "queue, prefill, tokens (latency timeline)": [latency.QUEUE, theme.CACHED, theme.NEW_WORK],
    "memory budget parts": [c for c, _ in memory.PART_STYLES],
    "bits-per-weight lines": [c for c, _, _ in quant.BPW_STYLES],
    "target, draft, samples (speculative)": [theme.CACHED, theme.MUTED, theme.NEW_WORK],
}


def _simulate(hex_colour: str, kind: str) -> Color:
    rgb = np.array(Color(hex_colour).convert("srgb").coords())
    seen = cspace_convert(rgb, {"name": "sRGB1+CVD", "cvd_type": kind, "severity": 100}, "sRGB1")
    return Color("srgb", list(np.clip(seen, 0, 1)))


@pytest.mark.parametrize("name", PALETTES)
def test_palettes_stay_apart_under_colour_vision_deficiency(name):
    """Every pair of the palette stays ≥ MIN_DELTA_E (CIEDE2000) apart under each simulated deficiency."""
    colours = PALETTES[name]
    for kind in CVD:
        seen = [_simulate(c, kind) for c in colours]
        for (a, ca), (b, cb) in itertools.combinations(zip(colours, seen, strict=True), 2):
            d = ca.delta_e(cb, method="2000")
            assert d >= MIN_DELTA_E, f"{name}: {a} vs {b} under {kind}: ΔE00 = {d:.1f}"


def test_the_old_request_grey_was_too_close():
    """The control: the grey the pool used before came within 10 of the pink under deuteranopia."""
    d = _simulate("#CC79A7", "deuteranomaly").delta_e(_simulate("#AAAAAA", "deuteranomaly"), method="2000")
    assert d < MIN_DELTA_E


@pytest.mark.parametrize(
    "a,b", [("#0e0d0c", "#ffffff"), ("#767676", "#ffffff"), ("#d55e00", "#f4f4f4"), ("rgb(0, 34, 78)", "#ffffff")]
)
def test_contrast_ratio_matches_coloraide(a, b):
    """theme.contrast_ratio (used to pick cell text colours) agrees with coloraide's WCAG 2.1 ratio."""
    assert theme.contrast_ratio(a, b) == pytest.approx(Color(a).contrast(b, method="wcag21"), abs=0.01)


# ---- every figure, built from small real data ----------------------------------------------------------


def _paged_cache():
    cache = PagedKVCache(make_model().cfg, 6, 4)
    cache.add("A", [1, 2, 3, 4, 5, 6])
    cache.add("B", [1, 2, 3, 4, 9])
    return cache, [Request("A", [1], 1, state="running"), Request("B", [1], 1, state="running")]


def _figures():
    att = np.tril(np.full((5, 5), 0.2))
    att[np.triu_indices(5, 1)] = np.nan
    labels = [f"{i}: t{i}" for i in range(5)]
    traces = EDITABLE["Edit several requests"]
    reports = [QuantReport(f"{b}-bit", b, 1000 * b, 8.0 * b, 0.1 / b, 0.2 / b, 1.5, 4.5 + 1 / b) for b in (8, 4, 2)]
    ref = QuantReport("float32", None, 32000, 256.0, 0.0, 0.0, 1.4, 4.0)
    cache, requests = _paged_cache()
    spec = [TokenShare(i, 0.5 / (i + 1), 0.4 / (i + 1), 0.45 / (i + 1)) for i in range(4)]
    speed = [BatchSpeed(b, 2.0 + b, 400.0 * b, 400.0, 0.9 * b, 0.8 * b, b) for b in (1, 2, 4)]
    runs = compare_policies(make_model(), [dict(prompt=[1, 2, 3], max_new_tokens=3, arrival=i) for i in range(3)], 8, 4)
    r = ruler.ruler([-1.2, -0.2, 0.7, 1.8, 8], 4, 0.5)
    gpu = load_reference()
    return {
        "attention (prefill)": fig_attention(att, labels, 5, "t"),
        "attention (a step)": fig_attention(att, labels, 1, "t"),
        "growth": fig_growth_shapes(bill.growth(20_000), "per layer, per head"),
        "step work": fig_step_work(bill.step_work(20_000)),
        "measured": fig_measured([16, 32], [1.0, 1.1], [2.0, 4.0], "t"),
        "kv variants": memory.fig_kv_variants(["MHA", "GQA", "MQA"], [4, 2, 1], ["4 B", "2 B", "1 B"], "GQA"),
        "memory budget": memory.fig_memory_budget({"weights": 3.5, "KV cache": 1.0, "overhead": 0.5}, 4.0),
        "ruler (outlier clipped)": fig_ruler(r),
        "bits per weight": quant.fig_bits_per_weight([4, 8, 32], ruler.bits_per_weight_curves([4, 8, 32])),
        "quant sweep": quant.fig_quant_sweep(reports, ref, "Weights"),
        "timeline": latency.fig_timeline(list(traces), "t"),
        "cache over time": fig_cache_over_time([10, 20, 30], 30, "t"),
        "batch cache (padded)": fig_batch_cache(["request 1", "request 2"], [5, 9], 20, "padded"),
        "batch speed": fig_batch_speed(speed),
        "block pool": paged.fig_block_pool(cache, requests, columns=3),
        "block tables": paged.fig_block_tables(cache, requests),
        "policy comparison": paged.fig_policy_comparison(runs),
        "three distributions": fig_three_distributions(["a", "b", "c", "d"], spec),
        "fewer bits on two machines": fig_two_machines(None, "not measured yet", gpu, gpu_headline(gpu)),
    }


FIGURES = _figures()


def _template():
    return theme.pio.templates[theme.TEMPLATE].layout


def _font_colour(font, fig) -> str:
    return (font and font.color) or fig.layout.font.color or _template().font.color or "#444444"


def _font_px(font, fig) -> float:
    return (font and font.size) or fig.layout.font.size or _template().font.size or 12


def _backgrounds(fig) -> list[str]:
    paper = fig.layout.paper_bgcolor or _template().paper_bgcolor or "#ffffff"
    plot = fig.layout.plot_bgcolor or _template().plot_bgcolor or "#ffffff"
    return [paper, plot]


def _over(colour: str | None, back: str) -> str:
    """An annotation's box colour (maybe rgba) composited over ``back``."""
    if not colour:
        return back
    return Color.layer([Color(colour), Color(back)]).convert("srgb").to_string(hex=True)


def _texts(fig):
    """(what, text colour, background, px) for every text the figure draws outside its cells."""
    backs = _backgrounds(fig)
    for back in backs:
        yield "layout font", _font_colour(None, fig), back, _font_px(None, fig)
        for a in fig.layout.annotations:
            yield f"annotation {a.text!r}", _font_colour(a.font, fig), _over(a.bgcolor, back), _font_px(a.font, fig)
        for t in fig.data:
            if t.type not in ("scatter", "bar") or t.text is None or (t.type == "scatter" and "text" not in t.mode):
                continue
            colours = t.textfont.color if t.textfont and t.textfont.color is not None else _font_colour(None, fig)
            if not isinstance(colours, str):
                continue  # per-cell colours: the attention numbers, checked against their cells below
            if t.textfont.shadow and "#fff" in t.textfont.shadow:
                back = "#ffffff"  # a solid halo is the text's background (WCAG Understanding 1.4.3)
            yield f"{t.name or t.type} text", colours, back, _font_px(t.textfont, fig)


@pytest.mark.parametrize("name", FIGURES)
def test_every_text_in_every_figure_reaches_aa_contrast(name):
    """Titles, ticks, legends, annotations and point labels: ≥ 4.5:1 (≥ 3:1 from 24 px) on what is behind them."""
    fig = FIGURES[name]
    for what, fg, bg, px in _texts(fig):
        need = 3.0 if px >= 24 else 4.5
        ratio = Color(fg).contrast(Color(bg), method="wcag21")
        assert ratio >= need, f"{name}: {what}: {fg} on {bg} = {ratio:.2f}:1"


def test_the_old_vermillion_text_would_fail():
    """The control: the labels of clipped values were vermillion, 3.9:1 on white, below 4.5 (the values' labels
    and stored integers use the text hues; the plain shelf numbers are muted grey)."""
    assert Color(theme.NEW_WORK).contrast("white", method="wcag21") < 4.5
    labels = [t for t in FIGURES["ruler (outlier clipped)"].data if t.mode == "text" and t.name != "shelf numbers"]
    assert {t.textfont.color for t in labels} == {theme.CACHED, theme.NEW_WORK_TEXT}


def test_attention_numbers_readable_on_dimmed_and_new_cells():
    """Each share written in a cell reaches 4.5:1 against the colour that cell shows: Cividis at its share,
    dimmed rows drawn at their opacity over the plot background (composited here by coloraide)."""
    rng = np.random.default_rng(0)
    att = np.tril(rng.random((8, 8)))
    att[np.triu_indices(8, 1)] = np.nan
    fig = fig_attention(att, [f"{i}: t" for i in range(8)], 1, "t")
    old, new, numbers = fig.data
    from plotly.colors import sample_colorscale

    k = 0
    for i in range(8):
        for j in range(i + 1):
            base = Color(sample_colorscale("Cividis", [att[i, j]])[0])
            shown = Color.layer([base.set("alpha", old.opacity if i < 7 else 1.0), Color(PLOT_BG)])
            assert numbers.text[k] == f"{att[i, j]:.2f}"
            ratio = Color(numbers.textfont.color[k]).contrast(shown, method="wcag21")
            assert ratio >= 4.5, (i, j, ratio)
            k += 1
    assert cell_colours(att, 7)[0][1] is None  # masked cells stay blank


def _style(t) -> tuple:
    """What tells a trace apart besides its colour: mode, dash, marker symbol, pattern."""
    line = getattr(t, "line", None)
    marker = getattr(t, "marker", None)
    pattern = marker.pattern.shape if marker is not None and "pattern" in marker else None
    return (
        t.type,
        getattr(t, "mode", None),
        line.dash if line is not None and "dash" in line else None,
        marker.symbol if marker is not None and "symbol" in marker else None,
        pattern if isinstance(pattern, str) or pattern is None else tuple(pattern),
    )


@pytest.mark.parametrize("name", FIGURES)
def test_no_meaning_rests_on_colour_alone(name):
    """Series in a legend differ in dash, marker or pattern, not only in colour; a bar coloured apart from
    its neighbours is also hatched or labelled."""
    fig = FIGURES[name]
    shown = [t for t in fig.data if t.type in ("scatter", "bar") and t.showlegend is not False and t.name]
    if fig.layout.showlegend is not False and len(shown) > 1:
        styles = [_style(t) for t in shown]
        assert len(set(styles)) == len(styles), f"{name}: {[t.name for t in shown]} {styles}"
    for t in fig.data:
        colours = t.marker.color if t.type == "bar" else None
        if colours is not None and not isinstance(colours, str) and len(set(colours)) > 1:
            patterns = t.marker.pattern.shape
            texts = list(t.text) if t.text is not None else [None] * len(colours)
            for c1, p1, x1 in zip(colours, patterns or [None] * len(colours), texts, strict=True):
                for c2, p2, x2 in zip(colours, patterns or [None] * len(colours), texts, strict=True):
                    if c1 != c2:
                        assert p1 != p2 or ("chosen" in str(x1)) != ("chosen" in str(x2)), name
