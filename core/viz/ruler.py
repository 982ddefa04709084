"""The quantization ruler's figure in the three bands of Ch. 19 "Shrinking the numbers" (Ch. 30 §30.5 for
the mapping): the number line with every shelf and its number under the title "the 4-bit ruler — 16
possible stored values, spacing = scale = 0.1"; each value as a labelled dot dropping an arrow to its
shelf, with ±s/2 whiskers and the stored integer beneath; two storage pills for the first value and the
caption "Fewer bits give fewer possible levels." What goes where is ``core.quant.ruler_bands``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from core.quant.ruler_bands import (
    CAPTION,
    LABELLED,
    axis_range,
    chapter_title,
    end_values,
    per_value,
    pills,
    shelf_marks,
    shelf_text,
    text_positions,
    text_width,
    value_text,
)
from core.text import plural
from core.viz.theme import CACHED, MUTED, NEW_WORK, NEW_WORK_TEXT, TEMPLATE, TEXT, described, safe

if TYPE_CHECKING:  # types only: figures take plain data and never run the model
    from core.quant.ruler import Ruler

# Rows of the plot (data y): dot labels, dots, the line, shelf numbers (a second row for stored numbers
# that would run into their left neighbour's).
Y_LABEL = (1.22, 1.42)
Y_LABEL_SPREAD = (1.22, 1.5)  # when a label takes the second row: further apart, for presenter mode's 20 px text
Y_DOT = 1.0
Y_LINE = 0.0
Y_NUMBER = (-0.27, -0.47)
BAND = 0.4  # the bottom band's share of the figure's height (paper y 0 … BAND): pills and caption
PILL_BG = "#e8f1f8"  # the pills' fill: TEXT on it 15:1


def _number_line(fig: go.Figure, r: Ruler, marks) -> None:
    """Top band: the line, a tick on every shelf drawn, the plain shelf numbers beneath."""
    ends = (marks.ticks.min(), marks.ticks.max()) if marks.ticks.size else axis_range(r)
    fig.add_shape(type="line", x0=ends[0], x1=ends[1], y0=Y_LINE, y1=Y_LINE, line=dict(color=MUTED, width=2))
    fig.add_scatter(
        x=marks.ticks,
        y=np.full(len(marks.ticks), Y_LINE),
        mode="markers",
        name="representable levels (shelves)",
        marker=dict(symbol="line-ns", size=22, line=dict(width=2, color=MUTED)),
        hovertemplate="shelf at %{x:.6g}<extra></extra>",
        showlegend=False,
    )
    fig.add_scatter(
        x=marks.numbered_x,
        y=np.full(len(marks.numbers), Y_NUMBER[0]),
        mode="text",
        name="shelf numbers",
        text=[shelf_text(q) for q in marks.numbers],
        textfont=dict(color=MUTED),
        customdata=marks.numbers,
        hovertemplate="shelf %{customdata} at %{x:.6g}<extra></extra>",
        showlegend=False,
    )


def _values(
    fig: go.Figure, r: Ruler, gap: float, mask: np.ndarray, name: str, color: str, symbol: str, text: str
) -> None:
    """Middle band, the values in ``mask``: dots labelled with their value (a second row when a label to the
    left is too close), squares on their shelves with ±s/2 whiskers."""
    hover = np.array(
        [
            f"x = {a:.6g}<br>x/s = {a / r.scale:.17g}<br>stored q = {k}<br>x̂ = {b:.6g}<br>error x̂ − x = {b - a:+.4g}"
            for a, k, b in zip(r.x[mask], r.q[mask], r.x_hat[mask], strict=True)
        ],
        dtype=object,
    )
    common = dict(hovertemplate="%{customdata}<extra></extra>", customdata=hover, showlegend=False)
    fig.add_scatter(
        x=r.x[mask],
        y=np.full(mask.sum(), Y_DOT),
        mode="markers",
        name=name,
        marker=dict(size=13, color=color, symbol=symbol),
        **common,
    )
    fig.add_scatter(
        x=r.x_hat[mask],
        y=np.full(mask.sum(), Y_LINE),
        mode="markers",
        name=f"{name}: stored",
        marker=dict(size=12, color=color, symbol="square"),
        error_x=dict(type="constant", value=r.scale / 2, color=color, thickness=1.5, width=6),
        **common,
    )
    if len(r.x) <= LABELLED:
        by_value = _label_rows(r, gap)
        rows = [by_value[v] for v in r.x[mask].tolist()]
        label_y = Y_LABEL_SPREAD if 1 in by_value.values() else Y_LABEL
        flag = "" if color == CACHED else _flag(r)
        texts = [value_text(v) + flag for v in r.x[mask]]
        fig.add_scatter(
            x=r.x[mask],
            y=[label_y[k] for k in rows],
            mode="text",
            name=f"{name}: labels",
            text=[safe(t) for t in texts],
            textposition=text_positions(r, r.x[mask], [text_width(r, len(t)) for t in texts]),
            textfont=dict(color=text),  # the value's hue, dark enough for text (4.5:1)
            hoverinfo="skip",
            showlegend=False,
        )


def _flag(r: Ruler) -> str:
    """What a flagged value's label adds: " (clipped)", or " (q not storable)" with clipping off."""
    return " (clipped)" if r.clip else " (q not storable)"


def _label_rows(r: Ruler, gap: float) -> dict[float, int]:
    """Each value's label row: 0, or 1 when its left neighbour on row 0 stands closer than half their two widths.
    A plain label is ``gap`` wide (the shelf numbers' width, as before); a flagged one wider by its " (clipped)" (the
    shelf numbers' width alone let two "(clipped)" labels overprint at 2 bits)."""
    flag = text_width(r, len(_flag(r)))
    widths: dict[float, float] = {}
    for v, c in zip(r.x.tolist(), r.clipped.tolist(), strict=True):
        widths[v] = max(widths.get(v, 0.0), gap + (flag if c else 0.0))
    rows: dict[float, int] = {}
    prev = None
    for x in sorted(widths):
        close = prev is not None and x - prev < (widths[x] + widths[prev]) / 2
        rows[x] = 1 if close and rows[prev] == 0 else 0
        prev = x
    return rows


def _drops(fig: go.Figure, r: Ruler) -> None:
    """Each value's thin arrow down to its shelf (a line each past ``LABELLED`` values: arrows would crowd)."""
    if len(r.x) > LABELLED:
        seg_x = np.column_stack([r.x, r.x_hat, np.full(len(r.x), np.nan)]).ravel()
        seg_y = np.tile([Y_DOT, Y_LINE, np.nan], len(r.x))
        fig.add_scatter(
            x=seg_x, y=seg_y, mode="lines", line=dict(color=MUTED, width=1), showlegend=False, hoverinfo="skip"
        )
        return
    for a, b in zip(r.x, r.x_hat, strict=True):
        fig.add_annotation(
            x=b, y=Y_LINE + 0.1, ax=a, ay=Y_DOT - 0.08, xref="x", yref="y", axref="x", ayref="y",
            text="", showarrow=True, arrowhead=2, arrowsize=1, arrowwidth=1.2, arrowcolor=MUTED,
        )  # fmt: skip


def _stored(fig: go.Figure, r: Ruler, marks) -> None:
    """The stored integers beneath their shelves, in their values' hue (flagged values' where every value on
    that shelf is flagged)."""
    if not marks.stored:
        return
    flagged = {int(q) for q in r.q[r.clipped]} - {int(q) for q in r.q[~r.clipped]}
    for keep, colour in ((lambda q: q not in flagged, CACHED), (lambda q: q in flagged, NEW_WORK_TEXT)):
        idx = [i for i, q in enumerate(marks.stored) if keep(q)]
        if not idx:
            continue
        fig.add_scatter(
            x=marks.stored_x[idx],
            y=[Y_NUMBER[marks.stored_row[i]] for i in idx],
            mode="text",
            name="stored integers" if colour == CACHED else "stored integers (flagged)",
            text=[f"<b>{shelf_text(marks.stored[i])}</b>" for i in idx],
            textfont=dict(color=colour),
            customdata=[marks.stored[i] for i in idx],
            hovertemplate="stored q = %{customdata}, rebuilt %{x:.6g}<extra></extra>",
            showlegend=False,
        )


def _bottom_band(fig: go.Figure, r: Ruler) -> None:
    """The two storage pills for the first value, joined by an arrow, and the chapter's caption."""
    first, second = pills(r)
    for y, pill in ((0.72 * BAND, first), (0.28 * BAND, second)):
        fig.add_annotation(
            x=0.5, y=y, xref="paper", yref="paper", text=safe(pill.text), hovertext=safe(pill.hover),
            showarrow=False, bgcolor=PILL_BG, bordercolor=MUTED, borderwidth=1, borderpad=5, font=dict(color=TEXT),
        )  # fmt: skip
    fig.add_annotation(
        x=0.5, y=0.5 * BAND, xref="paper", yref="paper", text="↓", showarrow=False, font=dict(color=TEXT, size=22)
    )
    fig.add_annotation(
        x=0.5, y=0.02 * BAND, xref="paper", yref="paper", text=f"<i>{CAPTION}</i>", showarrow=False,
        font=dict(color=TEXT), yanchor="bottom",
    )  # fmt: skip


def fig_ruler(r: Ruler) -> go.Figure:
    """The quantization ruler (``core.quant.ruler.Ruler``) in Ch. 19's three bands: the number line (a tick
    on every shelf, its number beneath; a numbered tick every k-th shelf when there are too many, said in
    the title), each value as a dot labelled with its value dropping an arrow to its shelf, with the stored
    integer beneath and ±s/2 whiskers (values flagged in ``r.clipped`` marked apart: an ×, "(clipped)"),
    and the storage pills and caption at the bottom."""
    marks = shelf_marks(r)
    fig = go.Figure()
    _number_line(fig, r, marks)
    _drops(fig, r)
    for mask, name, color, symbol, text in (
        (~r.clipped, "your values", CACHED, "circle", CACHED),
        (r.clipped, r.outside_label, NEW_WORK, "x", NEW_WORK_TEXT),
    ):
        if mask.any():
            _values(fig, r, marks.gap, mask, name, color, symbol, text)
    _stored(fig, r, marks)
    _bottom_band(fig, r)
    sub = "<br>".join(f'<span style="font-size:0.8em">{safe(t)}</span>' for t in (r.title, marks.note) if t)
    ticks = end_values(r)
    second_row = 40 if len(r.x) <= LABELLED and 1 in _label_rows(r, marks.gap).values() else 0
    fig.update_layout(
        template=TEMPLATE,
        height=540 + second_row,
        showlegend=False,  # every mark is labelled where it is; the flagged ones say so in their labels
        title=dict(text=f"{chapter_title(r)}<br>{sub}"),
        # A label on the second row stands where the title's last line would: room for it above the plot, the
        # figure taller by as much (a shorter plot crowded the shelf numbers against their ticks).
        margin=dict(t=(100 if marks.note else 80) + second_row, b=10),
        xaxis=dict(
            title=dict(text="value", standoff=4),
            range=list(axis_range(r)),
            zeroline=False,
            showgrid=False,
            tickvals=ticks,
            ticktext=None if ticks is None else [value_text(v) for v in ticks],
            anchor="y",
        ),
        yaxis=dict(
            domain=[BAND + 0.12, 1],
            range=[Y_NUMBER[1] - 0.1, (Y_LABEL_SPREAD if second_row else Y_LABEL)[1] + 0.12],
            tickvals=[Y_DOT, Y_LINE, Y_NUMBER[0]],
            ticktext=["original", "stored (shelf)", "shelf number"],
            showgrid=False,
            zeroline=False,
        ),
    )
    # Zero, marked from the line up (an axis zero line ran through the shelf numbers).
    fig.add_shape(
        type="line", x0=0, x1=0, y0=Y_LINE, y1=Y_LABEL[0] - 0.1, line=dict(color="#444444", width=1), layer="below"
    )
    return described(fig, describe_ruler(r))


def describe_ruler(r: Ruler, limit: int = 8) -> str:
    """Text alternative of ``fig_ruler``: the mapping, each value (the first ``limit``) → its stored
    integer → its reconstruction, the largest error against s/2, how many are flagged; the caption with this
    width's levels and bytes against float32's (the pills' numbers)."""
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
    return (
        f"{r.title}. {plural(len(r.x), 'value')}: {pairs}{more}. {bound[0].upper()}{bound[1:]}{flagged}. "
        f"{CAPTION[:-1]}: {2**r.n_bit:,} at {r.n_bit} bits, {per_value(r.n_bit)}; float32 {per_value(32)}."
    )
