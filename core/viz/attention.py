"""The masked attention heatmap (decode, worked example, context window, batching)."""

from __future__ import annotations

import numpy as np
import plotly.colors as pc
import plotly.graph_objects as go

from core.text import plural
from core.viz.stage import spoken
from core.viz.theme import CACHED, COLORSCALE, NEW_WORK, TEMPLATE, blend, described, safe, text_on

PLOT_BG = "#f4f4f4"  # masked (blank) cells
DIMMED = 0.4  # opacity of the rows read from the cache


def tick_positions(T: int, keep=(), max_labels: int = 40) -> list[int]:
    """Positions to label on an axis of ``T``: about ``max_labels`` evenly spaced, always the newest
    (T − 1) and every position in ``keep`` (e.g. the newest row's most-attended key); an evenly
    spaced label closer to a kept one than the spacing is dropped, so no two labels are nearer than
    the spacing (a handout's 62-row heatmap had "60: yuan" over "61: ,")."""
    step = max(1, int(np.ceil(T / max_labels)))
    must = {T - 1, *(int(k) for k in keep if 0 <= k < T)}
    even = [i for i in range(0, T, step) if all(abs(i - m) >= step or i == m for m in must)]
    return sorted(set(even) | must)


def _heat(fig: go.Figure, att: np.ndarray, rows: slice, ticks: list[str], name: str, opacity: float) -> None:
    T = att.shape[0]
    z = np.full((T, T), np.nan, dtype=np.float32)
    z[rows] = att[rows]
    gap = 1 if T <= 40 else 0
    fig.add_heatmap(
        # Full-size z for each trace (a one-row heatmap trace is drawn as a band across the
        # plot). numpy float32 goes out as a compact typed array; NaN is a blank cell.
        z=z,
        x=ticks,
        y=ticks,
        zmin=0,
        zmax=1,
        colorscale=COLORSCALE,
        hoverongaps=False,
        hovertemplate="asking %{y}<br>scoring %{x}<br>share %{z:.4f}<extra>%{fullData.name}</extra>",
        name=name,
        opacity=opacity,
        showscale=opacity == 1.0,
        xgap=gap,
        ygap=gap,
        colorbar=dict(title=dict(text="attention<br>share (0–1)"), thickness=14),
    )


def cell_colours(att: np.ndarray, old: int) -> list[list[str | None]]:
    """The colour each cell shows (``#rrggbb``; None where masked): Cividis at its share, the first
    ``old`` rows drawn at ``DIMMED`` opacity over the plot's background."""
    out = []
    for i, row in enumerate(att):
        shown = []
        for v in row:
            if np.isnan(v):
                shown.append(None)
                continue
            c = pc.sample_colorscale(COLORSCALE, [float(np.clip(v, 0, 1))])[0]
            shown.append(blend(c, PLOT_BG, DIMMED) if i < old else blend(c, PLOT_BG, 1.0))
        out.append(shown)
    return out


def _cell_text(fig: go.Figure, att: np.ndarray, ticks: list[str], old: int) -> None:
    """Each share written in its cell (small grids), black or white against the colour the cell shows,
    dimmed or not: a text trace on top, so the dimming never fades the numbers."""
    colours = cell_colours(att, old)
    cells = [(i, j) for i in range(len(att)) for j in range(len(att)) if colours[i][j] is not None]
    fig.add_scatter(
        x=[ticks[j] for _, j in cells],
        y=[ticks[i] for i, _ in cells],
        mode="text",
        text=[f"{att[i, j]:.2f}" for i, j in cells],
        textfont=dict(color=[text_on(colours[i][j]) for i, j in cells]),
        hoverinfo="skip",
        showlegend=False,
    )


def fig_attention(
    att: np.ndarray, labels: list[str], new_rows: int, title: str, earlier: str = "read from the KV cache"
) -> go.Figure:
    """Masked attention heatmap.

    ``att`` ``(T, T)``: rows are positions asking, columns positions being scored; NaN cells
    (the causal mask) are left blank. The last ``new_rows`` rows are this pass's new work (a
    full-strength trace, outlined); earlier rows are a second, dimmed trace marked as read from
    the cache. ``labels`` (one per position, distinct, raw user text) label both axes; the newest
    row and its most-attended key are always labelled. ``earlier`` says where the earlier rows come
    from: the decode page's rows are the cache's; a sliding window's earlier rows were computed in
    earlier passes over keys it has since evicted.
    """
    T = att.shape[0]
    ticks = [safe(s) for s in labels]  # distinct: each label starts with its position
    old = T - new_rows
    fig = go.Figure()
    if old > 0:
        _heat(fig, att, slice(0, old), ticks, earlier, DIMMED)
        # On the first row, in two lines: the causal mask leaves that row blank but for its first cell,
        # so the note covers no share (in the middle rows it hid the worked example's 0.88).
        fig.add_annotation(
            x=1.0,
            xref="paper",
            y=ticks[0],
            xanchor="right",
            showarrow=False,
            text=f"earlier rows (dimmed):<br>{earlier}, never redone",
            font=dict(color=CACHED),  # no fixed size: it follows the figure's font (larger in presenter mode)
            bgcolor="rgba(255,255,255,0.85)",
        )
    _heat(fig, att, slice(old, T), ticks, "new this step", 1.0)
    if T <= 12:
        _cell_text(fig, att, ticks, old)
    fig.add_shape(
        type="rect", x0=-0.5, x1=T - 0.5, y0=old - 0.5, y1=T - 0.5, line=dict(color=NEW_WORK, width=3), layer="above"
    )
    shown = tick_positions(T, [int(np.nanargmax(att[-1]))])
    axis = dict(
        type="category",
        showgrid=False,
        automargin=True,
        tickmode="array",
        tickvals=[ticks[i] for i in shown],
        ticktext=[ticks[i] for i in shown],
    )
    fig.update_layout(
        template=TEMPLATE,
        title=dict(text=title, x=0, xanchor="left"),
        # At most 700 px: the whole grid fits a 1280×800 laptop under its 60 px top bar, and so does
        # presenter mode's 1.25× (875 px) a 1920×1080 projector under its 79 px bar.
        height=max(420, min(700, 20 * T + 200)),
        # standoff: the slanted tick labels' lowest letters touched the axis title without it
        xaxis=dict(title=dict(text="position being scored (key)", standoff=14), side="bottom", tickangle=-60, **axis),
        yaxis=dict(title="position asking (query)", autorange="reversed", **axis),
        plot_bgcolor=PLOT_BG,
    )
    return described(fig, describe_attention(att, labels, title.split(":")[0], new_rows, earlier))


def describe_attention(
    att: np.ndarray, labels: list[str], where: str, new_rows: int, earlier: str = "read from the KV cache"
) -> str:
    """The figure's text alternative: how many positions, where the newest row puts most of its
    attention and with what share, and which rows are new. ``att`` ``(T, T)`` (NaN where masked or
    evicted), ``labels`` one raw "position: token" per row, ``where`` e.g. "Layer 3, head 0"."""
    T = att.shape[0]
    focus = int(np.nanargmax(att[-1]))
    rows = (
        "every row computed in this pass"
        if new_rows >= T
        else f"{plural(new_rows, 'new row')}, {plural(T - new_rows, 'earlier row')} {earlier}"
    )
    return (
        f"{where}: {plural(T, 'position')}; the newest row ({spoken(labels[-1])}) puts {att[-1, focus]:.2f} of its "
        f"attention on position {spoken(labels[focus])}; {rows}."
    )
