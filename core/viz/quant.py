"""Quantization: the ruler, bits per weight, the quantized model's sweep."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from core.viz.theme import CACHED, MUTED, NEW_WORK, TEMPLATE, described

if TYPE_CHECKING:  # types only: figures take plain data and never run the model
    from core.evaluate.quant_quality import QuantReport
    from core.gguf.blocks import BlockView

# Bits-per-weight lines: colour, marker and dash differ, so no line is told apart by colour alone.
BPW_STYLES = [(CACHED, "circle", "solid"), (NEW_WORK, "square", "dash"), ("#009e73", "diamond", "dot"),
              ("#cc79a7", "triangle-up", "dashdot")]  # fmt: skip


def fig_block(v: BlockView, n_appended: int = 0) -> go.Figure:
    """One 32-value block of a llama.cpp format (``core.gguf.blocks.BlockView``): each position's
    value (dot) and what the block stores for it (square, d · q (+ m) with the fp16 d and m), a
    line between them; the block's levels as faint lines when there are at most 32 of them. The
    last ``n_appended`` positions are zeros appended to fill the block, drawn grey."""
    pos = np.arange(len(v.x))
    real = pos < len(pos) - n_appended
    fig = go.Figure()
    n_levels = int(v.q.max() - v.q.min()) + 1 if v.fmt == "Q8_0" else 2 ** (5 if v.fmt.startswith("Q5") else 4)
    if n_levels <= 32:  # the levels as one trace of faint lines: 32 add_hline calls took ~70 ms
        lo = {"Q4_0": -8, "Q5_0": -16}.get(v.fmt, 0)
        ys = v.d * np.arange(lo, lo + n_levels) + (v.m or 0.0)
        fig.add_scatter(
            x=np.tile([-0.7, len(pos) - 0.3, np.nan], n_levels),
            y=np.repeat(ys, 3),
            mode="lines",
            line=dict(color="#dddddd", width=1),
            showlegend=False,
            hoverinfo="skip",
        )
    seg_x = np.repeat(pos, 3).astype(float)
    seg_x[2::3] = np.nan
    seg_y = np.column_stack([v.x, v.x_hat, np.full(len(pos), np.nan)]).ravel()
    fig.add_scatter(x=seg_x, y=seg_y, mode="lines", line=dict(color=MUTED, width=1), showlegend=False, hoverinfo="skip")
    hover = [
        f"value {j}<br>x = {a:.6g}<br>stored code {c} (q = {k})<br>x̂ = {b:.6g}<br>error {b - a:+.3g}<br>{where}"
        for j, (a, c, k, b, where) in enumerate(zip(v.x, v.codes, v.q, v.x_hat, v.stored_at, strict=True))
    ]
    hover = np.array(hover, dtype=object)
    for mask, name, color in ((real, "your value x", CACHED), (~real, "zero appended to fill the block", MUTED)):
        if mask.any():
            fig.add_scatter(
                x=pos[mask],
                y=v.x[mask],
                mode="markers",
                name=name,
                marker=dict(size=9, color=color),
                customdata=hover[mask],
                hovertemplate="%{customdata}<extra></extra>",
            )
    fig.add_scatter(
        x=pos,
        y=v.x_hat,
        mode="markers",
        name="stored: x̂ = d·q" + (" + m" if v.m is not None else ""),
        marker=dict(size=9, color=NEW_WORK, symbol="square-open", line=dict(width=2)),
        customdata=hover,
        hovertemplate="%{customdata}<extra></extra>",
    )
    minimum = "" if v.m is None else f", min m = {v.m:.6g}"
    fig.update_layout(
        template=TEMPLATE,
        height=340,
        title=dict(text=f"{v.fmt}, block {v.index}: scale d = {v.d:.6g} (fp16){minimum}"),
        legend=dict(orientation="h", y=-0.38, yanchor="top"),
        xaxis=dict(title="position in the block", range=[-0.7, len(pos) - 0.3], dtick=4),
        yaxis=dict(title="value", zeroline=True, zerolinecolor="#aaaaaa"),
    )
    return described(fig, describe_block(v, n_appended))


def fig_bits_per_weight(group_sizes: list[int], curves: dict[str, list[float]]) -> go.Figure:
    """Effective bits per weight against group size, one line per format."""
    fig = go.Figure()
    for (name, ys), (color, symbol, dash) in zip(curves.items(), BPW_STYLES, strict=False):
        fig.add_scatter(
            x=group_sizes,
            y=ys,
            mode="lines+markers",
            name=name,
            line=dict(color=color, width=2, dash=dash),
            marker=dict(symbol=symbol, size=8),
            hovertemplate="group of %{x}: %{y:.3f} bits per weight<extra></extra>",
        )
    fig.update_layout(
        template=TEMPLATE,
        height=330,
        legend=dict(orientation="h", y=-0.35),
        title=dict(text="Scales cost bits: effective bits per weight"),
        xaxis=dict(title="group size (weights per scale, log scale)", type="log", tickvals=group_sizes),
        yaxis=dict(title="bits per weight"),
    )
    return described(fig, describe_bits_per_weight(group_sizes, curves))


def fig_quant_sweep(rows: list[QuantReport], reference: QuantReport, title: str) -> go.Figure:
    """Perplexity and greedy-change rate against bit width (``rows``, one per quantized model),
    with the float model's perplexity (``reference``) as a dashed line named in the legend (as an
    annotation it sat on the axis's tick labels)."""
    bits, labels = [r.n_bit for r in rows], [r.label for r in rows]
    fig = go.Figure()
    fig.add_scatter(
        x=bits,
        y=[r.perplexity for r in rows],
        mode="lines+markers",
        name="validation perplexity",
        line=dict(color=CACHED, width=3),
        customdata=labels,
        hovertemplate="%{customdata}: perplexity %{y:.4f}<extra></extra>",
    )
    fig.add_scatter(
        x=bits,
        y=[r.greedy_changed * 100 for r in rows],
        mode="lines+markers",
        name="greedy token changed (%)",
        yaxis="y2",
        line=dict(color=NEW_WORK, width=3, dash="dot"),
        customdata=labels,
        hovertemplate="%{customdata}: %{y:.2f}% of positions<extra></extra>",
    )
    fig.add_scatter(
        x=[max(bits), min(bits)],
        y=[reference.perplexity] * 2,
        mode="lines",
        name=f"{reference.label} perplexity: {reference.perplexity:.3f}",
        line=dict(color=MUTED, dash="dash"),
        hoverinfo="skip",
    )
    fig.update_layout(
        template=TEMPLATE,
        height=400,
        title=dict(text=title),
        legend=dict(orientation="h", y=-0.3),
        xaxis=dict(title="bits per stored value", autorange="reversed", dtick=1),
        yaxis=dict(title="perplexity (lower is better)"),
        # Its own round ticks (0, 2, 4 … %), not ticks placed to line up with the left axis.
        yaxis2=dict(
            title="greedy changed (% of positions)",
            overlaying="y",
            side="right",
            rangemode="tozero",
            showgrid=False,
            tickmode="auto",
            nticks=6,
        ),
    )
    return described(fig, describe_quant_sweep(rows, reference, title))


def describe_bits_per_weight(group_sizes: list[int], curves: dict[str, list[float]]) -> str:
    """Text alternative of ``fig_bits_per_weight``: each format at the smallest and largest group."""
    a, b = group_sizes[0], group_sizes[-1]
    items = [
        f"{name}: {ys[0]:.4g} bits per weight in groups of {a}, {ys[-1]:.4g} in groups of {b}"
        for name, ys in curves.items()
    ]
    return "Effective bits per weight: " + "; ".join(items) + "."


def describe_quant_sweep(rows: list[QuantReport], reference: QuantReport, title: str) -> str:
    """Text alternative of ``fig_quant_sweep``: the float perplexity, then per bit width its perplexity
    and how often the greedy token changed."""
    items = [
        f"{r.label}: perplexity {r.perplexity:.3f}, greedy token changed at {r.greedy_changed:.1%} of positions"
        for r in rows
    ]
    return f"{title}: {reference.label} perplexity {reference.perplexity:.3f}; " + "; ".join(items) + "."


def describe_block(v: BlockView, n_appended: int = 0) -> str:
    """Text alternative of ``fig_block``: the block's scale (and min), the largest rounding error and
    where it is, and how many positions are zeros appended to fill the block."""
    err = np.abs(v.x_hat - v.x)
    j = int(err.argmax())
    minimum = "" if v.m is None else f" and min m = {v.m:.6g}"
    filled = f" The last {n_appended} positions are zeros appended to fill the block." if n_appended else ""
    return (
        f"{v.fmt} block {v.index}: {len(v.x)} values stored with scale d = {v.d:.6g}{minimum}. "
        f"Largest error at position {j}: x = {v.x[j]:.6g} stored as {v.x_hat[j]:.6g} "
        f"({v.x_hat[j] - v.x[j]:+.3g}).{filled}"
    )
