"""Batching: each request's cache row, measured throughput."""

from __future__ import annotations

import plotly.graph_objects as go

from core.evaluate.speedups import BatchSpeed
from core.text import plural
from core.viz.theme import CACHED, MUTED, NEW_WORK, TEMPLATE, described, safe


def fig_batch_cache(names: list[str], lengths: list[int], s_max: int, layout: str) -> go.Figure:
    """Each request's cache row: used positions and, in the padded layout, the padding up to the
    longest row now (wasted) and the slots reserved past it for tokens still to come."""
    fig = go.Figure()
    labels = [safe(n) for n in names]
    longest = max(lengths)
    segments = [("cached positions (used)", lengths, [0] * len(lengths), dict(color=CACHED))]
    if layout == "padded":
        segments += [
            (
                "padding to the longest row (wasted)",
                [longest - n for n in lengths],
                lengths,
                dict(color="#eeeeee", line=dict(color=MUTED, width=1), pattern=dict(shape="/")),
            ),
            (
                "reserved for tokens still to come",
                [s_max - longest] * len(lengths),
                [longest] * len(lengths),
                dict(color="white", line=dict(color=MUTED, width=1), pattern=dict(shape=".", fgcolor=MUTED)),
            ),
        ]
    for name, widths, base, marker in segments:
        fig.add_bar(
            y=labels,
            x=widths,
            base=base,
            orientation="h",
            name=name,
            marker=marker,
            hovertemplate=f"%{{y}}: %{{x}} slots, {name}<extra></extra>",
        )
    fig.update_layout(
        template=TEMPLATE,
        barmode="overlay",
        height=170 + 40 * len(names),
        title=dict(text=f"{layout.capitalize()} KV cache, one row per request"),
        # At the figure's foot: above the plot, three entries wrapped into the title in presenter mode.
        legend=dict(orientation="h", yref="container", y=0, yanchor="bottom", x=0),
        xaxis=dict(title="positions (slots)", range=[0, s_max]),
        yaxis=dict(autorange="reversed", type="category"),
    )
    return described(fig, describe_batch_cache(names, lengths, s_max, layout))


def fig_batch_speed(rows: list[BatchSpeed]) -> go.Figure:
    """Output tokens per second against batch size, batched vs one by one (each batch size's
    median repeat, ``core.evaluate.speedups.median_repeat``), each batched point labelled with its speed-up."""
    b = [r.batch_size for r in rows]
    top = max(max(r.batched_tokens_per_s, r.solo_tokens_per_s) for r in rows)
    fig = go.Figure()
    fig.add_scatter(
        x=b,
        y=[r.batched_tokens_per_s for r in rows],
        mode="lines+markers+text",
        name="one batch",
        line=dict(color=NEW_WORK, width=3),
        text=[f"{r.speedup:.1f}×" for r in rows],
        textposition="top center",
        hovertemplate="B = %{x}: %{y:,.0f} tokens/s (%{text} one by one)<extra></extra>",
    )
    fig.add_scatter(
        x=b,
        y=[r.solo_tokens_per_s for r in rows],
        mode="lines+markers",
        name="one by one",
        line=dict(color=CACHED, width=3, dash="dash"),
        marker_symbol="square",
        hovertemplate="B = %{x}: %{y:,.0f} tokens/s<extra></extra>",
    )
    fig.update_layout(
        template=TEMPLATE,
        height=360,
        title=dict(text="Throughput: output tokens per second (the median repeat)"),
        legend=dict(orientation="h", y=-0.3),
        xaxis=dict(title="batch size B", type="log", tickvals=b),
        # Headroom above the highest point: its "6.1×" label sits above it and was cut off.
        yaxis=dict(title="output tokens / s", range=[0, 1.18 * top]),
    )
    return described(fig, describe_batch_speed(rows))


def describe_batch_cache(names: list[str], lengths: list[int], s_max: int, layout: str) -> str:
    """Text alternative of ``fig_batch_cache``: each request's positions and, padded, its padding and the
    slots reserved past the longest row."""
    if layout != "padded":
        items = [f"{n} {plural(k, 'position')}" for n, k in zip(names, lengths, strict=True)]
        return "Per-request caches, each as long as its request: " + "; ".join(items) + "."
    longest = max(lengths)
    items = [f"{n} {k:,} used + {longest - k:,} padding" for n, k in zip(names, lengths, strict=True)]
    return (
        f"Padded layout, {s_max:,} slots per row: " + "; ".join(items) + f"; each row reserves {s_max - longest:,} "
        "more slots for tokens still to come."
    )


def describe_batch_speed(rows: list[BatchSpeed]) -> str:
    """Text alternative of ``fig_batch_speed``: per batch size, tokens/s both ways and the speed-up."""
    items = [
        f"B = {r.batch_size}: {r.batched_tokens_per_s:,.0f} tokens/s batched, {r.solo_tokens_per_s:,.0f} one by one "
        f"({r.speedup:.1f}×)"
        for r in rows
    ]
    return "Output tokens per second (the median repeat): " + "; ".join(items) + "."
