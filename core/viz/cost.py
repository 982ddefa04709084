"""The bill per token (Ch. 19): score growth, one decode step's work, measured step times."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.viz.theme import CACHED, NEW_WORK, TEMPLATE


def fig_growth_shapes(
    n: np.ndarray, grid: np.ndarray, causal: np.ndarray, memory: np.ndarray, marks: list[tuple[int, int]], per: str
) -> go.Figure:
    """Prefill scores (n² grid and n(n+1)/2 kept by the mask) against KV memory (∝ n); scores
    relative to the n = 1,000 grid (so the triangle starts at ≈ 0.5), memory to n = 1,000.
    ``marks``: (n, n²) points to annotate; ``per`` says what the absolute counts are per
    (e.g. "per layer, per head")."""
    fig = go.Figure()
    fig.add_scatter(
        x=n,
        y=grid / 1_000_000,
        name="prefill scores, full n² grid (before masking)",
        line=dict(color=NEW_WORK, width=3),
        hovertemplate="n = %{x:,}<br>%{y:.2f}× the n = 1,000 grid<extra></extra>",
    )
    fig.add_scatter(
        x=n,
        y=causal / 1_000_000,
        name="prefill scores the causal mask keeps, n(n+1)/2 (≈ half)",
        line=dict(color=NEW_WORK, width=2, dash="dot"),
        hovertemplate="n = %{x:,}<br>%{y:.2f}× the n = 1,000 grid<extra></extra>",
    )
    fig.add_scatter(
        x=n,
        y=memory / 1000,
        name="KV-cache memory, grows as n",
        line=dict(color=CACHED, width=3),
        hovertemplate="n = %{x:,}<br>%{y:.2f}× the n = 1,000 cache<extra></extra>",
    )
    for x, sq in marks:
        fig.add_scatter(
            x=[x],
            y=[x * x / 1_000_000],  # per layer and head; the label carries the scaled count
            mode="markers",
            marker=dict(size=11, color=NEW_WORK),
            showlegend=False,
            hoverinfo="skip",
        )
        fig.add_annotation(
            x=x,
            y=x * x / 1_000_000,
            text=f"{x:,} tokens → {sq:,} scores ({per})",
            ax=-40 if x > n.max() / 2 else 60,
            ay=-30,
            xanchor="right" if x > n.max() / 2 else "left",
        )
    fig.update_layout(
        template=TEMPLATE,
        height=430,
        legend=dict(orientation="h", y=-0.25),
        title=dict(text="Scores grow quadratically; the cache linearly (both = 1 at n = 1,000)"),
        xaxis=dict(title="context length n (tokens)", tickformat=","),
        yaxis=dict(title="relative cost (n = 1,000 → 1)"),
    )
    return fig


def fig_step_work(n: np.ndarray, cached: np.ndarray, naive: np.ndarray) -> go.Figure:
    """Scores for one decode step at context n: cached (n) vs full-prefix recompute (n(n+1)/2)."""
    fig = go.Figure()
    fig.add_scatter(
        x=n,
        y=cached,
        name="with the KV cache: n scores",
        line=dict(color=CACHED, width=3),
        hovertemplate="n = %{x:,}: %{y:,} scores<extra></extra>",
    )
    fig.add_scatter(
        x=n,
        y=naive,
        name="full-prefix recompute: n(n+1)/2",
        line=dict(color=NEW_WORK, width=3),
        hovertemplate="n = %{x:,}: %{y:,} scores<extra></extra>",
    )
    fig.update_layout(
        template=TEMPLATE,
        height=380,
        legend=dict(orientation="h", y=-0.3),
        title=dict(text="Scores in one decode step (per layer, per head)"),
        xaxis=dict(title="context length n (tokens)", tickformat=","),
        yaxis=dict(title="scores (log scale)", type="log"),
    )
    return fig


def fig_measured(lengths, cached_ms, naive_ms, title: str) -> go.Figure:
    """Measured median ms per decode step against context length, both paths."""
    fig = go.Figure()
    fig.add_scatter(
        x=list(lengths),
        y=list(cached_ms),
        mode="lines+markers",
        name="with the KV cache",
        line=dict(color=CACHED, width=3),
        hovertemplate="n = %{x}: %{y:.2f} ms<extra></extra>",
    )
    fig.add_scatter(
        x=list(lengths),
        y=list(naive_ms),
        mode="lines+markers",
        name="full-prefix recompute",
        line=dict(color=NEW_WORK, width=3),
        hovertemplate="n = %{x}: %{y:.2f} ms<extra></extra>",
    )
    fig.update_layout(
        template=TEMPLATE,
        height=400,
        legend=dict(orientation="h", y=-0.3),
        title=dict(text=title),
        xaxis=dict(title="context length after the step (positions)"),
        yaxis=dict(title="median time per decode step (ms)", rangemode="tozero"),
    )
    return fig
