"""Ch. 19's worked 4×4 grid as the chapter draws it: masked cells as dark panels with muted em-dashes,
the cached rows dimmed with a slim bracket 'computed in earlier steps — read from cache, never
redone', and the newest row outlined as 'the only new work this step'. The shares are the model's
own (``core.model.worked``), drawn by ``fig_attention``; this adds the chapter's marks."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.viz.attention import fig_attention
from core.viz.theme import MUTED, NEW_WORK_TEXT, described, description_of, safe

MASKED = "#2b2b2b"  # the causal mask's dark panels
DASH = "#a6a6a6"  # their muted em-dashes: 6.6:1 on MASKED
EARLIER = "computed in earlier steps — read from cache, never redone"
NEW = "the only new work this step"


def fig_worked_grid(att: np.ndarray, labels: list[str], title: str) -> go.Figure:
    """The worked example's grid: ``att`` ``(T, T)`` shares (NaN above the diagonal), ``labels`` one
    per position; the last row is this step's new work, the rows before it read from the cache."""
    T = att.shape[0]
    fig = fig_attention(att, labels, 1, title, earlier="read from cache")
    fig.layout.annotations = ()  # the bracket below says where the earlier rows come from
    fig.update_traces(showscale=False, selector=dict(type="heatmap"))  # every share is written in its cell
    masked = [(i, j) for i in range(T) for j in range(T) if np.isnan(att[i, j])]
    for i, j in masked:
        fig.add_shape(
            type="rect", x0=j - 0.5, x1=j + 0.5, y0=i - 0.5, y1=i + 0.5, fillcolor=MASKED, line_width=0, layer="below"
        )
    ticks = [safe(s) for s in labels]  # as fig_attention labels its axes
    fig.add_scatter(
        x=[ticks[j] for _, j in masked],
        y=[ticks[i] for i, _ in masked],
        mode="text",
        text=["—"] * len(masked),
        textfont=dict(color=DASH, size=18),
        hoverinfo="skip",
        showlegend=False,
        name="masked (future)",
    )
    old = T - 1
    if old > 0:  # a slim bracket beside the cached rows, outside the grid on the right
        top, bottom = -0.45, old - 0.55
        path = f"M 1.02,{top} L 1.035,{top} L 1.035,{bottom} L 1.02,{bottom}"
        fig.add_shape(type="path", path=path, xref="paper", yref="y", line=dict(color=MUTED, width=1.5))
        fig.add_annotation(
            x=1.05, xref="paper", y=(old - 1) / 2, yref="y", xanchor="left", showarrow=False, align="left",
            text="computed in earlier<br>steps — read from<br>cache, never redone", font=dict(color=MUTED),
        )  # fmt: skip
    fig.add_annotation(
        x=1.05, xref="paper", y=T - 1, yref="y", xanchor="left", showarrow=False, align="left",
        text="<b>the only new<br>work this step</b>", font=dict(color=NEW_WORK_TEXT),
    )  # fmt: skip
    fig.update_layout(margin=dict(r=280))  # the labels, three lines at most: fit at presenter mode's 20 px
    rows = f"rows 1–{old} dimmed: {EARLIER}; " if old > 0 else ""
    return described(
        fig,
        f"{description_of(fig)} Masked cells (the causal mask) are dark with em-dashes; {rows}the last row is {NEW}.",
    )
