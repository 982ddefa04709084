"""Speed on this machine: the measured roofline with the model's passes on it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from core.viz.theme import CACHED, MUTED, NEW_WORK, TEMPLATE, TEXT, described

if TYPE_CHECKING:  # types only
    from core.evaluate.machine_speed.roofline import Roofline


def _short(p) -> str:
    """A point's label on the plot: B for decode (its context is in the hover and the table), T for prefill."""
    if p.kind == "decode":
        return f"B={p.batch}" + ("" if p.batch > 1 else f", n={p.context}")
    return f"T={p.new}"


def _position(p, pts) -> str:
    """Where a point's label goes: decode B=1 at two contexts lands at nearly the same spot, so the
    shorter context's label goes left and the longer one's right; other decode labels above,
    prefill labels below right."""
    if p.kind == "prefill":
        return "bottom right"
    if p.batch == 1 and sum(q.batch == 1 for q in pts) > 1:
        return "middle left" if p.context == min(q.context for q in pts) else "middle right"
    return "top center"


def fig_roofline(r: Roofline) -> go.Figure:
    """Achieved GFLOP/s against arithmetic intensity (FLOP/byte), both log: the measured memory slope
    (bandwidth × intensity) up to the ridge, the measured compute ceiling, and each pass as a point
    (decode: circles, prefill: squares)."""
    xs = [p.intensity for p in r.points]
    lo = 10 ** np.floor(np.log10(min(xs + [r.ridge]) / 2))
    hi = 10 ** np.ceil(np.log10(max(xs + [r.ridge]) * 3))
    fig = go.Figure()
    fig.add_scatter(
        x=[lo, r.ridge],
        y=[r.bandwidth_gbs * lo, r.peak_gflops],
        mode="lines",
        name=f"memory slope: {r.bandwidth_gbs:.1f} GB/s × intensity",
        line=dict(color=MUTED, width=3),
        hovertemplate="%{x:.3g} FLOP/byte → %{y:.3g} GFLOP/s at most<extra></extra>",
    )
    fig.add_scatter(
        x=[r.ridge, hi],
        y=[r.peak_gflops, r.peak_gflops],
        mode="lines",
        name=f"compute ceiling: {r.peak_gflops:.1f} GFLOP/s (GEMM)",
        line=dict(color=MUTED, width=3, dash="dash"),
        hovertemplate="%{y:.3g} GFLOP/s at most<extra></extra>",
    )
    for kind, colour, symbol in (("decode", CACHED, "circle"), ("prefill", NEW_WORK, "square")):
        pts = [p for p in r.points if p.kind == kind]
        if not pts:
            continue
        fig.add_scatter(
            x=[p.intensity for p in pts],
            y=[p.gflops for p in pts],
            mode="markers+text",
            name=f"{kind} steps (measured)",
            text=[_short(p) for p in pts],
            textposition=[_position(p, pts) for p in pts],
            textfont=dict(color=TEXT),
            marker=dict(color=colour, size=13, symbol=symbol, line=dict(color="white", width=1)),
            customdata=[[p.label, p.ms] for p in pts],
            hovertemplate="%{customdata[0]}: %{x:.3g} FLOP/byte, %{y:.3g} GFLOP/s, "
            "%{customdata[1]:.2f} ms<extra></extra>",
        )
    fig.update_layout(
        template=TEMPLATE,
        height=400,
        margin=dict(t=10, b=10),
        # Inside, bottom right: high intensity at a low rate is where no pass lands.
        legend=dict(x=0.99, y=0.01, xanchor="right", yanchor="bottom", bgcolor="rgba(255,255,255,0.85)"),
        xaxis=dict(
            title="arithmetic intensity (FLOP per byte moved, log)",
            type="log",
            range=[np.log10(lo), np.log10(hi)],
            dtick=1,  # powers of ten only: the minor 2…9 labels crowded the axis
        ),
        yaxis=dict(title="achieved GFLOP/s (log)", type="log", dtick=1),
    )
    return described(fig, describe_roofline(r))


def describe_roofline(r: Roofline) -> str:
    """Text alternative of ``fig_roofline``: the two limits, the ridge, and where decode and prefill sit
    (each point's own numbers are in the table beside it and under "Show as table")."""
    out = (
        f"Measured memory bandwidth {r.bandwidth_gbs:.1f} GB/s and peak {r.peak_gflops:.1f} GFLOP/s "
        f"({r.threads} thread{'s' if r.threads != 1 else ''}); they meet at {r.ridge:.1f} FLOP/byte."
    )
    for kind in ("decode", "prefill"):
        pts = sorted((p for p in r.points if p.kind == kind), key=lambda p: p.intensity)
        if pts:
            a, b = pts[0], pts[-1]
            out += f" {a.label[0].upper()}{a.label[1:]} at {a.intensity:.2g} FLOP/byte, {a.gflops:.3g} GFLOP/s"
            out += f"; {b.label} at {b.intensity:.3g} FLOP/byte, {b.gflops:.3g} GFLOP/s." if b is not a else "."
    return out


def fig_intensities(counted: list[tuple[str, float]]) -> go.Figure:
    """Before measuring: each pass's arithmetic intensity (FLOP/byte, log x), counted from the model's
    shape (``core.evaluate.machine_speed.counted``): decode, prefill."""
    fig = go.Figure()
    for kind, colour, symbol in (("decode", CACHED, "circle"), ("prefill", NEW_WORK, "square")):
        pts = [(label, x) for label, x in counted if label.startswith(kind)]
        fig.add_scatter(
            x=[x for _, x in pts],
            y=[label for label, _ in pts],
            mode="markers+text",
            name=f"{kind} (counted)",
            text=[f"{x:.2g}" for _, x in pts],
            textposition="middle right",
            marker=dict(color=colour, size=13, symbol=symbol),
            hovertemplate="%{y}: %{x:.3g} FLOP/byte<extra></extra>",
        )
    fig.update_layout(
        template=TEMPLATE,
        height=320,
        margin=dict(t=10, b=10),
        showlegend=False,
        xaxis=dict(title="arithmetic intensity (FLOP per byte moved, log)", type="log", dtick=1),
        yaxis=dict(autorange="reversed"),
    )
    return described(fig, describe_intensities(counted))


def describe_intensities(counted: list[tuple[str, float]]) -> str:
    """Text alternative of ``fig_intensities``: every pass's counted intensity."""
    return "Counted before measuring: " + "; ".join(f"{label} {x:.3g} FLOP/byte" for label, x in counted) + "."
