"""Figures: pure ``fig_*(data) -> go.Figure`` functions, one shared template.

The only plotly importer. No streamlit. Text that came from a user (tokens of a prompt) is
escaped before it reaches plotly, whose labels otherwise interpret a subset of HTML.
Colour scale: Cividis, designed to be readable with colour-vision deficiency.
"""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

TEMPLATE = "explainer"
COLORSCALE = "Cividis"
NEW_WORK = "#d55e00"  # Okabe-Ito vermillion: the one new thing this step
CACHED = "#0072b2"  # Okabe-Ito blue: read from the KV cache
MUTED = "#999999"

pio.templates[TEMPLATE] = go.layout.Template(
    layout=go.Layout(
        font=dict(family="Source Sans Pro, Arial, sans-serif", size=14),
        paper_bgcolor="white",
        plot_bgcolor="white",
        margin=dict(l=10, r=10, t=50, b=10),
        hoverlabel=dict(font_size=14),
    )
)


def safe(text: str) -> str:
    """Escape user text for plotly labels and hover text (shown literally, never as markup)."""
    return html.escape(str(text), quote=True)


def fig_attention(att: np.ndarray, labels: list[str], new_rows: int, title: str) -> go.Figure:
    """Masked attention heatmap.

    ``att`` ``(T, T)``: rows are positions asking, columns positions being scored; NaN cells
    (the causal mask) are left blank. The last ``new_rows`` rows are this pass's new work,
    outlined; earlier rows are dimmed and marked as read from the cache. ``labels`` (one per
    position, distinct, raw user text) label both axes.
    """
    T = att.shape[0]
    ticks = [safe(s) for s in labels]  # distinct: each label starts with its position
    z = np.where(np.isnan(att), None, att).tolist()
    fig = go.Figure(
        go.Heatmap(
            z=z, x=ticks, y=ticks, zmin=0, zmax=1, colorscale=COLORSCALE, hoverongaps=False,
            hovertemplate="asking %{y}<br>scoring %{x}<br>share %{z:.4f}<extra></extra>",
            colorbar=dict(title=dict(text="attention<br>share (0–1)"), thickness=14),
            xgap=1 if T <= 40 else 0, ygap=1 if T <= 40 else 0,
        )
    )
    old = T - new_rows
    if old > 0:
        fig.add_shape(type="rect", x0=-0.5, x1=T - 0.5, y0=-0.5, y1=old - 0.5, line_width=0,
                      fillcolor="rgba(255,255,255,0.5)", layer="above")
        fig.add_annotation(x=T - 0.5, y=(old - 1) / 2, xanchor="right", showarrow=False,
                           text="earlier rows: read from the KV cache, never redone",
                           font=dict(color=CACHED, size=13), bgcolor="rgba(255,255,255,0.85)")
    fig.add_shape(type="rect", x0=-0.5, x1=T - 0.5, y0=old - 0.5, y1=T - 0.5,
                  line=dict(color=NEW_WORK, width=3), layer="above")
    axis = dict(type="category", showgrid=False, nticks=40, automargin=True)  # plotly thins labels past ~40
    fig.update_layout(
        template=TEMPLATE, title=dict(text=title, x=0, xanchor="left"), height=max(420, min(900, 20 * T + 200)),
        xaxis=dict(title="position being scored (key)", side="bottom", tickangle=-60, **axis),
        yaxis=dict(title="position asking (query)", autorange="reversed", **axis),
        plot_bgcolor="#f4f4f4",
    )
    return fig


def fig_kv_shelf(cached: int, capacity: int, pending_label: str | None, bytes_per_position: int) -> go.Figure:
    """The KV cache as a shelf of ``capacity`` slots: ``cached`` filled, the chosen-but-not-
    yet-consumed token waiting beside it, and the context-window wall at ``capacity``."""
    fig = go.Figure()
    fig.add_bar(y=["KV cache"], x=[cached], orientation="h", marker_color=CACHED, name="cached positions",
                hovertemplate=f"{cached} cached positions<br>{cached * bytes_per_position:,} bytes<extra></extra>")
    if pending_label is not None and cached < capacity:
        fig.add_bar(y=["KV cache"], x=[1], base=[cached], orientation="h", name="chosen, not yet consumed",
                    marker=dict(color="white", line=dict(color=NEW_WORK, width=2)),
                    hovertemplate=f"next input: {safe(pending_label)}<br>enters the cache at the next step"
                                  "<extra></extra>")
    fig.add_vline(x=capacity, line=dict(color="black", width=4))
    fig.add_annotation(x=capacity, y=0.5, yref="paper", text=f"context window:<br>{capacity} positions",
                       showarrow=False, xanchor="right", align="right", bgcolor="rgba(255,255,255,0.8)")
    fig.update_layout(
        template=TEMPLATE, barmode="overlay", height=190, showlegend=True,
        legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0), margin=dict(t=40, b=10, l=10, r=10),
        xaxis=dict(title="cached positions", range=[0, capacity * 1.02]), yaxis=dict(showticklabels=False),
    )
    return fig


def fig_next_token(rows: list[tuple[int, str, float]], chosen: int | None, title: str) -> go.Figure:
    """Horizontal bars of the top next-token probabilities, the chosen token marked.

    ``rows``: (token id, token text, probability 0..1), largest first; ``chosen``: its id."""
    labels = [f"{i + 1}. {safe(t)}" for i, (_, t, _) in enumerate(rows)]
    probs = [p for _, _, p in rows]
    colors = [NEW_WORK if tid == chosen else CACHED for tid, _, _ in rows]
    fig = go.Figure(go.Bar(
        x=probs, y=labels, orientation="h", marker_color=colors,
        text=[f"{p:.1%}" + ("  ◀ chosen" if tid == chosen else "") for tid, _, p in rows],
        textposition="outside", cliponaxis=False, hovertemplate="%{y}: %{x:.4f}<extra></extra>",
    ))
    fig.update_layout(
        template=TEMPLATE, title=dict(text=title), height=110 + 30 * max(1, len(rows)),
        xaxis=dict(title="probability", range=[0, 1.45], tickvals=[0, 0.25, 0.5, 0.75, 1], tickformat=".0%",
                   automargin=True),
        yaxis=dict(autorange="reversed", automargin=True), title_x=0,
    )
    return fig
