"""Quantization: the ruler, bits per weight, the quantized model's sweep."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.viz.theme import CACHED, MUTED, NEW_WORK, TEMPLATE


def fig_ruler(
    x: np.ndarray,
    q: np.ndarray,
    x_hat: np.ndarray,
    clipped: np.ndarray,
    levels: np.ndarray | None,
    scale: float,
    title: str,
    outside_label: str = "clipped values (error not bounded by s/2)",
) -> go.Figure:
    """The quantization ruler: every representable level as a shelf (``levels``, None if too
    many to draw), each value ``x`` as a dot dropping to its shelf ``x_hat`` with the stored
    integer ``q`` beneath, values flagged in ``clipped`` (clipped, or with clipping off outside
    the range) marked differently under ``outside_label``, and ±s/2 whiskers showing the
    rounding bound around each reconstruction."""
    fig = go.Figure()
    if levels is not None:
        fig.add_scatter(
            x=levels,
            y=np.zeros(len(levels)),
            mode="markers",
            name="representable levels (shelves)",
            marker=dict(symbol="line-ns", size=22, line=dict(width=2, color=MUTED)),
            hovertemplate="shelf at %{x:.6g}<extra></extra>",
        )
    seg_x, seg_y = [], []
    for a, b in zip(x, x_hat, strict=True):
        seg_x += [a, b, None]
        seg_y += [1, 0, None]
    fig.add_scatter(x=seg_x, y=seg_y, mode="lines", line=dict(color=MUTED, width=1), showlegend=False, hoverinfo="skip")
    ok = ~clipped
    err = x_hat - x
    hover = [
        f"x = {a:.6g}<br>x/s = {a / scale:.6g}<br>stored q = {k}<br>x̂ = {b:.6g}<br>error x̂ − x = {e:+.4g}"
        for a, k, b, e in zip(x, q, x_hat, err, strict=True)
    ]
    hover = np.array(hover, dtype=object)
    show_text = len(x) <= 30
    for mask, name, color, symbol in (
        (ok, "your values", CACHED, "circle"),
        (clipped, outside_label, NEW_WORK, "x"),
    ):
        if not mask.any():
            continue
        fig.add_scatter(
            x=x[mask],
            y=np.ones(mask.sum()),
            mode="markers",
            name=name,
            marker=dict(size=13, color=color, symbol=symbol),
            hovertemplate="%{customdata}<extra></extra>",
            customdata=hover[mask],
        )
        fig.add_scatter(
            x=x_hat[mask],
            y=np.zeros(mask.sum()),
            mode="markers+text" if show_text else "markers",
            marker=dict(size=12, color=color, symbol="square"),
            showlegend=False,
            text=[f"q={k}" for k in q[mask]],
            textposition="bottom center",
            error_x=dict(type="constant", value=scale / 2, color=color, thickness=1.5, width=6),
            hovertemplate="%{customdata}<extra></extra>",
            customdata=hover[mask],
        )
    lo = min(float(x.min()), float(x_hat.min()), float(levels.min()) if levels is not None else np.inf)
    hi = max(float(x.max()), float(x_hat.max()), float(levels.max()) if levels is not None else -np.inf)
    pad = max(scale, (hi - lo) * 0.05)
    fig.update_layout(
        template=TEMPLATE,
        height=330,
        title=dict(text=title),
        legend=dict(orientation="h", y=-0.3),
        xaxis=dict(title="value", range=[lo - pad, hi + pad], zeroline=True),
        yaxis=dict(range=[-0.6, 1.4], tickvals=[0, 1], ticktext=["stored (shelf)", "original"], showgrid=False),
    )
    return fig


def fig_bits_per_weight(group_sizes: list[int], curves: dict[str, list[float]]) -> go.Figure:
    """Effective bits per weight against group size, one line per format."""
    fig = go.Figure()
    palette = [CACHED, NEW_WORK, "#009e73", "#cc79a7"]
    for (name, ys), color in zip(curves.items(), palette, strict=False):
        fig.add_scatter(
            x=group_sizes,
            y=ys,
            mode="lines+markers",
            name=name,
            line=dict(color=color, width=2),
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
    return fig


def fig_quant_sweep(
    labels: list[str], bits: list[int], perplexity: list[float], changed: list[float], reference_ppl: float, title: str
) -> go.Figure:
    """Perplexity and greedy-change rate against bit width, the float model as a reference line."""
    fig = go.Figure()
    fig.add_scatter(
        x=bits,
        y=perplexity,
        mode="lines+markers",
        name="validation perplexity",
        line=dict(color=CACHED, width=3),
        customdata=labels,
        hovertemplate="%{customdata}: perplexity %{y:.4f}<extra></extra>",
    )
    fig.add_scatter(
        x=bits,
        y=[c * 100 for c in changed],
        mode="lines+markers",
        name="greedy token changed (%)",
        yaxis="y2",
        line=dict(color=NEW_WORK, width=3, dash="dot"),
        customdata=labels,
        hovertemplate="%{customdata}: %{y:.2f}% of positions<extra></extra>",
    )
    fig.add_hline(
        y=reference_ppl,
        line=dict(color=MUTED, dash="dash"),
        annotation_text=f"float32: {reference_ppl:.3f}",
        annotation_position="top left",
    )
    fig.update_layout(
        template=TEMPLATE,
        height=380,
        title=dict(text=title),
        legend=dict(orientation="h", y=-0.3),
        xaxis=dict(title="bits per stored value", autorange="reversed", dtick=1),
        yaxis=dict(title="perplexity (lower is better)"),
        yaxis2=dict(
            title="greedy changed (% of positions)", overlaying="y", side="right", rangemode="tozero", showgrid=False
        ),
    )
    return fig
