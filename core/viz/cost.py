"""The bill per token (Ch. 19): score growth, one decode step's work, measured step times."""

from __future__ import annotations

from typing import TYPE_CHECKING

import plotly.graph_objects as go

from core.viz.theme import CACHED, MUTED, NEW_WORK, TEMPLATE, described

if TYPE_CHECKING:  # types only
    from core.cost.bill import Growth, StepWork


def _mark(fig: go.Figure, x: int, scores: int, per: str, n_max: int, first: bool) -> None:
    """A chapter point on the n² curve and its label. The label sits where no curve runs: the
    first (1,000-token) one high in the left part of the plot (the curves are still low there),
    others to the upper left of their point (the convex curves run below it; at n = 20,000 the
    10,000-token label once took the same high spot and hid the first); a white box keeps grid
    lines off it."""
    y = x * x / 1_000_000
    fig.add_scatter(
        x=[x], y=[y], mode="markers", marker=dict(size=11, color=NEW_WORK), showlegend=False, hoverinfo="skip"
    )
    text = f"{x:,} tokens → {scores:,} scores ({per})"
    box = dict(bgcolor="rgba(255,255,255,0.9)", arrowcolor=MUTED, arrowwidth=1.5)
    if first and x * 2 <= n_max:
        top = (n_max / 1000) ** 2
        fig.add_annotation(
            x=x, y=y, ax=n_max * 0.02, ay=top * 0.85, axref="x", ayref="y", text=text, xanchor="left", **box
        )
    else:
        fig.add_annotation(x=x, y=y, ax=-40, ay=-30, text=text, xanchor="right", **box)


def fig_growth_shapes(g: Growth, per: str) -> go.Figure:
    """Prefill scores (n² grid and n(n+1)/2 kept by the mask) against KV memory (∝ n), relative
    to n = 1,000 (the grid there is 1, so the triangle starts at ≈ 0.5; the cache there is 1).
    ``g``: ``core.cost.bill.Growth``; ``per`` says what the marks' absolute counts are per (e.g.
    "per layer, per head")."""
    fig = go.Figure()
    hover = "n = %{x:,}<br>%{y:.2f}× the n = 1,000 "
    for ys, scale, name, line, what in (
        (g.grid, 1e6, "prefill scores, full n² grid (before masking)", dict(width=3), "grid"),
        (g.causal, 1e6, "prefill scores the causal mask keeps, n(n+1)/2 (≈ half)", dict(width=2, dash="dot"), "grid"),
        (g.cache_entries, 1e3, "KV-cache memory, grows as n", dict(width=3, color=CACHED, dash="dash"), "cache"),
    ):
        fig.add_scatter(
            x=g.n,
            y=[v / scale for v in ys],
            name=name,
            line=dict(color=NEW_WORK) | line,
            hovertemplate=hover + what + "<extra></extra>",
        )
    for i, (x, scores) in enumerate(g.marks):
        _mark(fig, x, scores, per, g.n[-1], first=i == 0)
    # Ch. 19's muted footnote (the marks count per layer, per head, or the page's choice) as the title's second
    # line: inside the plot the first mark's arrow crossed it, and no spot stays clear of the curves for every n_max.
    note = f'<span style="font-size:0.8em;color:{MUTED}">{per} — the shapes are the story, not the units</span>'
    fig.update_layout(
        template=TEMPLATE,
        height=450,
        margin=dict(t=80),
        legend=dict(orientation="h", y=-0.25),
        title=dict(text=f"Scores grow quadratically; the cache linearly (both = 1 at n = 1,000)<br>{note}"),
        xaxis=dict(title="context length n (tokens)", tickformat=","),
        yaxis=dict(title="relative cost (n = 1,000 → 1)"),
    )
    return described(fig, describe_growth(g, per))


def fig_step_work(w: StepWork) -> go.Figure:
    """Scores for one decode step at context n (``core.cost.bill.StepWork``): cached (n) vs full-prefix
    recompute (n(n+1)/2), log scale."""
    fig = go.Figure()
    for ys, name, color, dash in (
        (w.cached, "with the KV cache: n scores", CACHED, "solid"),
        (w.recompute, "full-prefix recompute: n(n+1)/2", NEW_WORK, "dash"),
    ):
        fig.add_scatter(
            x=w.n,
            y=ys,
            name=name,
            line=dict(color=color, width=3, dash=dash),
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
    return described(fig, describe_step_work(w))


def fig_measured(lengths, cached_ms, naive_ms, title: str) -> go.Figure:
    """Measured median ms per decode step against context length, both paths (``title`` says
    what was measured: medians of how many runs)."""
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
        line=dict(color=NEW_WORK, width=3, dash="dash"),
        marker=dict(symbol="square", size=8),
        hovertemplate="n = %{x}: %{y:.2f} ms<extra></extra>",
    )
    fig.update_layout(
        template=TEMPLATE,
        height=400,
        legend=dict(orientation="h", y=-0.3),
        title=dict(text=title),
        margin=dict(t=70),
        xaxis=dict(title="context length after the step (positions)"),
        # Short: a rotated title longer than the plot ran up into the chart's title in presenter mode.
        yaxis=dict(title="ms per step", rangemode="tozero"),
    )
    return described(fig, describe_measured(lengths, cached_ms, naive_ms))


def describe_growth(g: Growth, per: str) -> str:
    """Text alternative of ``fig_growth_shapes``: at the largest n, the grid, the causal pairs and the
    cache (per layer and head) and their multiples of the n = 1,000 values; the chapter's points."""
    n = g.n[-1]
    marks = "; ".join(f"{x:,} tokens → {s:,} scores ({per})" for x, s in g.marks)
    return (
        f"At n = {n:,} tokens a prefill has {g.grid[-1]:,} query-key pairs before masking and "
        f"{g.causal[-1]:,} after it, per layer and head: {g.grid[-1] / 1e6:,.0f}× and {g.causal[-1] / 1e6:,.0f}× "
        f"the n = 1,000 grid; the KV cache holds {g.cache_entries[-1]:,} entries, {g.cache_entries[-1] / 1e3:,.0f}× "
        f"its size at n = 1,000." + (f" Marked: {marks}." if marks else "")
    )


def describe_step_work(w: StepWork) -> str:
    """Text alternative of ``fig_step_work``: scores of one decode step at the largest n, both ways."""
    n, c, r = w.n[-1], w.cached[-1], w.recompute[-1]
    return (
        f"One decode step at n = {n:,}: {c:,} scores with the KV cache, {r:,} by full-prefix recompute "
        f"({r / c:,.0f}×), per layer and head; at n = {w.n[0]:,}: {w.cached[0]:,} and {w.recompute[0]:,}."
    )


def describe_measured(lengths, cached_ms, naive_ms) -> str:
    """Text alternative of ``fig_measured``: the medians at the shortest and the longest context."""
    a, b = 0, len(lengths) - 1
    return (
        f"At {lengths[b]} positions a cached step took {cached_ms[b]:.2f} ms, a full recompute {naive_ms[b]:.2f} ms "
        f"({naive_ms[b] / cached_ms[b]:.1f}×); at {lengths[a]} positions {cached_ms[a]:.2f} and {naive_ms[a]:.2f} ms."
    )
