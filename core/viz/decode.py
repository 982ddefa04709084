"""The decode page: the KV-cache shelf and the next-token bars."""

from __future__ import annotations

import plotly.graph_objects as go

from core.viz.theme import CACHED, NEW_WORK, TEMPLATE, described, safe


def fig_kv_shelf(cached: int, capacity: int, pending_label: str | None, bytes_per_position: int) -> go.Figure:
    """The KV cache as a shelf of ``capacity`` slots: ``cached`` filled, the chosen-but-not-
    yet-consumed token waiting beside it, and the context-window wall at ``capacity``."""
    fig = go.Figure()
    fig.add_bar(
        y=["KV cache"],
        x=[cached],
        orientation="h",
        marker_color=CACHED,
        name="cached positions",
        hovertemplate=f"{cached} cached positions<br>{cached * bytes_per_position:,} bytes<extra></extra>",
    )
    if pending_label is not None and cached < capacity:
        fig.add_bar(
            y=["KV cache"],
            x=[1],
            base=[cached],
            orientation="h",
            name="chosen, not yet consumed",
            marker=dict(color="white", line=dict(color=NEW_WORK, width=2), pattern=dict(shape=".", fgcolor=NEW_WORK)),
            hovertemplate=f"next input: {safe(pending_label)}<br>enters the cache at the next step<extra></extra>",
        )
    fig.add_vline(x=capacity, line=dict(color="black", width=4))
    fig.add_annotation(
        x=capacity,
        y=0.5,
        yref="paper",
        text=f"context window:<br>{capacity} positions",
        showarrow=False,
        xanchor="right",
        align="right",
        bgcolor="rgba(255,255,255,0.8)",
    )
    fig.update_layout(
        template=TEMPLATE,
        barmode="overlay",
        height=220,
        showlegend=True,
        legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0),
        margin=dict(t=40, b=60, l=10, r=10),
        xaxis=dict(title="cached positions", range=[0, capacity * 1.02]),
        yaxis=dict(showticklabels=False),
    )
    return described(fig, describe_kv_shelf(cached, capacity, bytes_per_position))


def fig_next_token(rows: list[tuple[int, str, float]], chosen: int | None, title: str) -> go.Figure:
    """Horizontal bars of the top next-token probabilities, the chosen token marked.

    ``rows``: (token id, token text, probability 0..1), largest first; ``chosen``: its id."""
    labels = [f"{i + 1}. {safe(t)}" for i, (_, t, _) in enumerate(rows)]
    probs = [p for _, _, p in rows]
    colors = [NEW_WORK if tid == chosen else CACHED for tid, _, _ in rows]
    fig = go.Figure(
        go.Bar(
            x=probs,
            y=labels,
            orientation="h",
            marker_color=colors,
            text=[f"{p:.1%}" + ("  ◀ chosen" if tid == chosen else "") for tid, _, p in rows],
            textposition="outside",
            cliponaxis=False,
            hovertemplate="%{y}: %{x:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        template=TEMPLATE,
        title=dict(text=title),
        height=110 + 30 * max(1, len(rows)),
        xaxis=dict(
            title="probability", range=[0, 1.45], tickvals=[0, 0.25, 0.5, 0.75, 1], tickformat=".0%", automargin=True
        ),
        yaxis=dict(autorange="reversed", automargin=True, type="category"),
        title_x=0,
    )
    return described(fig, describe_next_token(rows, chosen))


def describe_kv_shelf(cached: int, capacity: int, bytes_per_position: int) -> str:
    """Text alternative of ``fig_kv_shelf``: positions cached of the window, and their bytes."""
    return (
        f"KV cache: {cached:,} of {capacity:,} positions ({cached * bytes_per_position:,} bytes); the chosen token "
        "waits outside until the next pass consumes it."
    )


def describe_next_token(rows: list[tuple[int, str, float]], chosen: int | None) -> str:
    """Text alternative of ``fig_next_token``: each token's probability, the chosen one named."""
    items = [f"{i + 1}. ‘{t}’ {p:.1%}" + (" (chosen)" if tid == chosen else "") for i, (tid, t, p) in enumerate(rows)]
    return "Next token: " + "; ".join(items) + "."
