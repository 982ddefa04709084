"""Inside the cache: one layer and KV head's stored keys and values as two heatmaps (position × head_dim), the rows
of a live ``core.decode.kv_cache.KVCache`` (``core.decode.cache_rows.head_rows``) in the cache's own dtype.

Ch. 19 "What the cache stores"; Ch. 30 §30.2 ("A KV cache retains each layer's projected keys and values for
positions already processed"). The rows the latest pass wrote are outlined; every earlier row was written by an
earlier pass and is read, never recomputed.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.decode.cache_rows import HeadRows
from core.text import plural
from core.viz.attention import tick_positions
from core.viz.stage import spoken
from core.viz.theme import COLORSCALE, NEW_WORK, TEMPLATE, described, safe

PANELS = (("keys", "K"), ("values", "V"))
HEIGHT = 340  # px on a laptop: the open expander, its sentence and its text on one 1280 × 800 screen


def _digits(a: np.ndarray) -> int:
    """Significant digits that give a stored number back exactly: 9 for float32, 17 for float64."""
    return 9 if a.dtype == np.float32 else 17


def fig_cache_rows(
    rows: HeadRows, labels: list[str], new_rows: int, where: str, height: int = HEIGHT, max_labels: int = 20
) -> go.Figure:
    """Keys (left) and values (right) of ``rows``: one heatmap row per cached position (``labels``, one raw
    "position: token" each), one column per head_dim coordinate, each panel coloured on its own range symmetric
    about 0. The last ``new_rows`` rows (the latest pass's) are outlined and the newest position's label is
    bold. ``where`` ("Layer 3, KV head 0") starts the text alternative."""
    T, d = rows.keys.shape
    if len(labels) != T or not 0 < new_rows <= T:
        raise ValueError(f"{len(labels)} labels and {new_rows} new rows for {T} cached positions")
    ticks = [safe(s) for s in labels]  # distinct: each starts with its position
    fig = make_subplots(
        rows=1,
        cols=2,
        shared_yaxes=True,
        horizontal_spacing=0.12,
        subplot_titles=[f"{name} {sym}: one row per cached position" for name, sym in PANELS],
    )
    gap = 1 if T <= 40 else 0
    for col, ((name, sym), z) in enumerate(zip(PANELS, (rows.keys, rows.values), strict=True), start=1):
        m = float(np.abs(z).max()) or 1.0
        fig.add_heatmap(
            z=z,  # the cache's own dtype: float32 goes out as a float32 typed array
            x=list(range(d)),
            y=ticks,
            zmin=-m,
            zmax=m,
            colorscale=COLORSCALE,
            name=f"{name} {sym}",
            hovertemplate=f"%{{y}}<br>coordinate %{{x}}<br>{sym} = %{{z:.{_digits(z)}g}}<extra></extra>",
            xgap=gap,
            ygap=gap,
            # Each panel's colour bar just right of it (the left one in the gap between the panels).
            colorbar=dict(title=dict(text=sym), thickness=12, len=0.9, x=0.44 if col == 1 else 1.0, xanchor="left"),
            row=1,
            col=col,
        )
        fig.add_shape(
            type="rect",
            x0=-0.5,
            x1=d - 0.5,
            y0=T - new_rows - 0.5,
            y1=T - 0.5,
            line=dict(color=NEW_WORK, width=3),
            layer="above",
            row=1,
            col=col,
        )
        fig.update_xaxes(title=dict(text="head_dim coordinate"), showgrid=False, row=1, col=col)
    shown = tick_positions(T, max_labels=max_labels)
    fig.update_yaxes(
        type="category",
        autorange="reversed",
        showgrid=False,
        tickmode="array",
        tickvals=[ticks[i] for i in shown],
        ticktext=[f"<b>{ticks[i]}</b>" if i == T - 1 else ticks[i] for i in shown],
    )
    fig.update_yaxes(title=dict(text="cached position"), row=1, col=1)
    fig.update_yaxes(showticklabels=False, ticks="", row=1, col=2)  # the left panel's labels name both
    for title in fig.layout.annotations:  # the panels' titles follow the figure's font (larger on a projector)
        title.font.size = None
    fig.update_layout(template=TEMPLATE, height=height, margin=dict(l=10, r=10, t=40, b=10))
    return described(fig, describe_cache_rows(rows, labels, new_rows, where))


def describe_cache_rows(rows: HeadRows, labels: list[str], new_rows: int, where: str) -> str:
    """The figure's text alternative: its shape, each panel's range and which rows the latest pass wrote."""
    T, d = rows.keys.shape
    k, v = rows.keys, rows.values
    earlier = T - new_rows
    before = f"the {plural(earlier, 'earlier row')} {'was' if earlier == 1 else 'were'} stored before it"
    if new_rows >= T:
        wrote = "every row was written by this Prefill"
    elif new_rows == 1:
        wrote = f"the newest row ({spoken(labels[-1])}) was written by this pass; {before}"
    else:
        wrote = f"the last {plural(new_rows, 'row')} were written by this pass; {before}"
    return (
        f"{where}: {plural(T, 'cached position')} × {d} head_dim coordinates, {k.dtype}; keys K from "
        f"{_num(k.min())} to {_num(k.max())}, values V from {_num(v.min())} to {_num(v.max())}; {wrote}."
    )


def _num(x: float) -> str:
    """Three decimals with a true minus sign, as the colour bars write it."""
    return f"{x:.3f}".replace("-", "−")


NEWEST = 3  # rows enlarged with their numbers under the heatmap: the newest and the two before it


def fig_newest_rows(rows: HeadRows, labels: list[str], n: int = NEWEST, height: int = 300) -> go.Figure:
    """The last ``n`` cached rows of ``rows`` enlarged, each cell with its stored value to two decimals: keys K
    above, values V below, one row per position (``labels``), one column per head_dim coordinate, coloured as
    ``fig_cache_rows``. The same rows as the heatmap, read from the same cache: a teacher reads them from the back
    of the room; the stored bytes are what ``core.decode.cache_rows.compare`` proves unchanged."""
    T, d = rows.keys.shape
    if len(labels) != T:
        raise ValueError(f"{len(labels)} labels for {T} cached positions")
    n = min(n, T)
    ticks = [safe(s) for s in labels[T - n :]]
    titles = [f"{name} {sym}: the {plural(n, 'newest row')}, stored values" for name, sym in PANELS]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.16, subplot_titles=titles)
    for row, ((name, sym), z) in enumerate(zip(PANELS, (rows.keys, rows.values), strict=True), start=1):
        m = float(np.abs(z).max()) or 1.0
        fig.add_heatmap(
            z=z[T - n :], x=list(range(d)), y=ticks, zmin=-m, zmax=m, colorscale=COLORSCALE, showscale=False,
            texttemplate="%{z:.2f}", name=f"{name} {sym}", xgap=1, ygap=1,
            hovertemplate=f"%{{y}}<br>coordinate %{{x}}<br>{sym} = %{{z:.{_digits(z)}g}}<extra></extra>",
            row=row, col=1,
        )  # fmt: skip
        fig.update_yaxes(type="category", autorange="reversed", showgrid=False, row=row, col=1)
    fig.update_xaxes(title=dict(text="head_dim coordinate"), showgrid=False, dtick=4, row=2, col=1)
    for title in fig.layout.annotations:
        title.font.size = None
    fig.update_layout(template=TEMPLATE, height=height, margin=dict(l=10, r=10, t=40, b=10))
    newest = ", ".join(_num(x) for x in rows.keys[-1][:4])
    return described(
        fig,
        f"The {plural(n, 'newest cached row')} ({', '.join(spoken(s) for s in labels[T - n :])}) enlarged with their "
        f"stored values to two decimals; the newest key row starts {newest}, ….",
    )
