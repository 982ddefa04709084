"""The context window: cache bytes over the passes."""

from __future__ import annotations

import plotly.graph_objects as go

from core.text import plural
from core.viz.theme import CACHED, TEMPLATE, described


def fig_cache_over_time(cache_bytes: list[int], window_bytes: int, title: str) -> go.Figure:
    """KV-cache bytes after each forward pass, with the window's full size as a line."""
    fig = go.Figure(
        go.Scatter(
            x=list(range(1, len(cache_bytes) + 1)),
            y=cache_bytes,
            mode="lines+markers",
            line=dict(color=CACHED, width=3),
            name="KV cache",
            hovertemplate="pass %{x}: %{y:,} bytes<extra></extra>",
        )
    )
    fig.add_hline(
        y=window_bytes,
        line=dict(color="black", dash="dash"),
        annotation_text="window full",
        annotation_position="bottom right",
    )
    fig.update_layout(
        template=TEMPLATE,
        height=300,
        title=dict(text=title),
        xaxis=dict(title="forward pass (1 = prefill)"),
        yaxis=dict(title="KV cache (bytes)", rangemode="tozero", tickformat=",.0f"),
    )
    return described(fig, describe_cache_over_time(cache_bytes, window_bytes))


def describe_cache_over_time(cache_bytes: list[int], window_bytes: int) -> str:
    """Text alternative of ``fig_cache_over_time``: first and last bytes, the most, and whether
    (from which pass) the cache reaches the window's full size."""
    full = next((i + 1 for i, b in enumerate(cache_bytes) if b >= window_bytes), None)
    wall = (
        f"it reaches the full window ({window_bytes:,} bytes) at pass {full}"
        if full
        else f"it never reaches the full window ({window_bytes:,} bytes)"
    )
    return (
        f"KV cache after each of {plural(len(cache_bytes), 'forward pass', 'forward passes')}: "
        f"{cache_bytes[0]:,} bytes after prefill, {cache_bytes[-1]:,} after the last pass, at most "
        f"{max(cache_bytes):,}; {wall}."
    )
