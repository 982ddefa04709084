"""The quantization ruler's figure: each value dropping to its shelf, the stored integer under it, ±s/2
whiskers (Ch. 19 "Shrinking the numbers", Ch. 30 §30.5). Split from ``core.viz.quant``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from core.text import plural
from core.viz.theme import CACHED, MUTED, NEW_WORK, NEW_WORK_TEXT, TEMPLATE, described

if TYPE_CHECKING:  # types only: figures take plain data and never run the model
    from core.quant.ruler import Ruler


def _shelves(fig: go.Figure, levels: np.ndarray) -> None:
    fig.add_scatter(
        x=levels,
        y=np.zeros(len(levels)),
        mode="markers",
        name="representable levels (shelves)",
        marker=dict(symbol="line-ns", size=22, line=dict(width=2, color=MUTED)),
        hovertemplate="shelf at %{x:.6g}<extra></extra>",
    )


def _drops(fig: go.Figure, x: np.ndarray, x_hat: np.ndarray) -> None:
    """A thin line from each value (y = 1) down to its shelf (y = 0)."""
    seg_x = np.column_stack([x, x_hat, np.full(len(x), np.nan)]).ravel()
    seg_y = np.tile([1.0, 0.0, np.nan], len(x))
    fig.add_scatter(x=seg_x, y=seg_y, mode="lines", line=dict(color=MUTED, width=1), showlegend=False, hoverinfo="skip")


def _values(fig: go.Figure, r: Ruler, mask: np.ndarray, name: str, color: str, symbol: str, text: str) -> None:
    """The values in ``mask``: dots at y = 1, squares on their shelves with ±s/2 whiskers, and
    "q=…" labels set below the shelf ticks (a label on the line was crossed by a tick: "q±2")."""
    hover = np.array(
        [
            f"x = {a:.6g}<br>x/s = {a / r.scale:.17g}<br>stored q = {k}<br>x̂ = {b:.6g}<br>error x̂ − x = {b - a:+.4g}"
            for a, k, b in zip(r.x[mask], r.q[mask], r.x_hat[mask], strict=True)
        ],
        dtype=object,
    )
    common = dict(hovertemplate="%{customdata}<extra></extra>", customdata=hover)
    fig.add_scatter(
        x=r.x[mask],
        y=np.ones(mask.sum()),
        mode="markers",
        name=name,
        marker=dict(size=13, color=color, symbol=symbol),
        **common,
    )
    fig.add_scatter(
        x=r.x_hat[mask],
        y=np.zeros(mask.sum()),
        mode="markers",
        marker=dict(size=12, color=color, symbol="square"),
        showlegend=False,
        error_x=dict(type="constant", value=r.scale / 2, color=color, thickness=1.5, width=6),
        **common,
    )
    if len(r.x) <= 30:
        fig.add_scatter(
            x=r.x_hat[mask],
            y=label_rows(r.x_hat, r.x_hat[mask], np.diff(axis_range(r)).item()),
            mode="text",
            text=[f"q={k}" for k in r.q[mask]],
            textfont=dict(color=text),  # the value's hue, dark enough for text (4.5:1)
            showlegend=False,
            hoverinfo="skip",
        )


def axis_range(r: Ruler) -> tuple[float, float]:
    """The ruler's value axis: every value, reconstruction and shelf, padded by a scale step."""
    ends = [r.x, r.x_hat] + ([] if r.levels is None else [r.levels])
    lo, hi = min(float(a.min()) for a in ends), max(float(a.max()) for a in ends)
    pad = max(r.scale, (hi - lo) * 0.05)
    return lo - pad, hi + pad


def label_rows(every: np.ndarray, these: np.ndarray, span: float, rows=(-0.32, -0.5)) -> np.ndarray:
    """y of the "q=…" label under each of ``these`` reconstructions: the first row, or the second when
    the nearest label to its left (over ``every`` reconstruction on the ruler, in value order) is on
    the first row and closer than 1/16 of the axis ``span`` (about a label's width in a handout's
    800-px plot): side by side, "q=0" and "q=1" ran together."""
    xs = np.unique(every)
    near = span / 16
    y, prev = {}, None
    for x in xs:
        # Python floats: 1.7e308 − (−1.7e308) is inf without numpy's overflow warning in the log
        y[x] = rows[1] if prev is not None and float(x) - float(prev) < near and y[prev] == rows[0] else rows[0]
        prev = x
    return np.array([y[x] for x in these])


def fig_ruler(r: Ruler) -> go.Figure:
    """The quantization ruler (``core.quant.ruler.Ruler``): every representable level as a shelf (none
    drawn when there are too many), each value as a dot dropping to its shelf with the stored
    integer beneath, values flagged in ``r.clipped`` marked apart under ``r.outside_label``, and
    ±s/2 whiskers showing the rounding bound around each reconstruction."""
    fig = go.Figure()
    if r.levels is not None:
        _shelves(fig, r.levels)
    _drops(fig, r.x, r.x_hat)
    for mask, name, color, symbol, text in (
        (~r.clipped, "your values", CACHED, "circle", CACHED),
        (r.clipped, r.outside_label, NEW_WORK, "x", NEW_WORK_TEXT),
    ):
        if mask.any():
            _values(fig, r, mask, name, color, symbol, text)
    # Zero, marked from just above the "q=…" labels up: an axis zero line ran through a label at 0.
    fig.add_shape(type="line", x0=0, x1=0, y0=-0.16, y1=1.4, line=dict(color="#444444", width=1), layer="below")
    fig.update_layout(
        template=TEMPLATE,
        height=360,
        title=dict(text=r.title),
        # Under the axis title (at y = -0.3 the handout's narrower figure had "value" over the legend).
        legend=dict(orientation="h", y=-0.42, yanchor="top"),
        xaxis=dict(title="value", range=list(axis_range(r)), zeroline=False),
        yaxis=dict(range=[-0.6, 1.4], tickvals=[0, 1], ticktext=["stored (shelf)", "original"], showgrid=False),
    )
    return described(fig, describe_ruler(r))


def describe_ruler(r: Ruler, limit: int = 8) -> str:
    """Text alternative of ``fig_ruler``: the mapping, each value (the first ``limit``) → its stored
    integer → its reconstruction, the largest error against s/2, how many are flagged."""
    pairs = ", ".join(f"{x:.6g} → q = {q} → {xh:.6g}" for x, q, xh in list(zip(r.x, r.q, r.x_hat, strict=True))[:limit])
    more = f" and {len(r.x) - limit} more (the table lists all)" if len(r.x) > limit else ""
    err = np.abs(r.x_hat - r.x)
    inside = err[~r.clipped]
    bound = (
        f"inside the range the largest error is {inside.max():.4g}, within s/2 = {r.scale / 2:.4g}"
        if inside.size
        else "no value is inside the range"
    )
    flagged = f"; {r.outside_label}: {', '.join(f'{x:.6g}' for x in r.x[r.clipped])}" if r.clipped.any() else ""
    return f"{r.title}. {plural(len(r.x), 'value')}: {pairs}{more}. {bound[0].upper()}{bound[1:]}{flagged}."
