"""Speculative decoding: target, draft and speculative samples side by side."""

from __future__ import annotations

import plotly.graph_objects as go

from core.viz.theme import CACHED, MUTED, NEW_WORK, TEMPLATE, safe


def fig_three_distributions(rows: list[tuple[str, float, float, float]]) -> go.Figure:
    """Grouped bars per token (raw text): target p, draft q, and the speculative samples."""
    labels = [f"{i + 1}. {safe(t)}" for i, (t, _, _, _) in enumerate(rows)]
    fig = go.Figure()
    for j, (name, color) in enumerate((("target p", CACHED), ("draft q", MUTED), ("speculative samples", NEW_WORK))):
        fig.add_bar(
            x=labels,
            y=[r[j + 1] for r in rows],
            name=name,
            marker_color=color,
            hovertemplate="%{x}: %{y:.4f}<extra>" + name + "</extra>",
        )
    fig.update_layout(
        template=TEMPLATE,
        barmode="group",
        height=360,
        legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0),
        xaxis=dict(type="category"),
        yaxis=dict(title="probability"),
        margin=dict(t=60),
    )
    return fig
