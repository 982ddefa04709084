"""Speculative decoding: target, draft and speculative samples side by side."""

from __future__ import annotations

from typing import TYPE_CHECKING

import plotly.graph_objects as go

from core.viz.theme import CACHED, MUTED, NEW_WORK, TEMPLATE, described, safe

if TYPE_CHECKING:  # types only
    from core.speculative import TokenShare


def fig_three_distributions(texts: list[str], shares: list[TokenShare]) -> go.Figure:
    """Grouped bars per token: target p, draft q, and the speculative samples (``shares``, one
    ``core.speculative.TokenShare`` per token; ``texts``: each token's raw text, escaped here)."""
    labels = [f"{i + 1}. {safe(t)}" for i, t in enumerate(texts)]
    fig = go.Figure()
    for attr, name, color, pattern in (  # colour and pattern: not colour alone
        ("p", "target p", CACHED, ""),
        ("q", "draft q", MUTED, "."),
        ("sampled", "speculative samples", NEW_WORK, "/"),
    ):
        fig.add_bar(
            x=labels,
            y=[getattr(s, attr) for s in shares],
            name=name,
            marker=dict(color=color, pattern=dict(shape=pattern)),
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
    return described(fig, describe_three_distributions(texts, shares))


def describe_three_distributions(texts: list[str], shares: list[TokenShare]) -> str:
    """Text alternative of ``fig_three_distributions``: per token the target, draft and sampled shares."""
    items = [
        f"{i + 1}. ‘{t}’ {s.p:.3f} / {s.q:.3f} / {s.sampled:.3f}"
        for i, (t, s) in enumerate(zip(texts, shares, strict=True))
    ]
    return "Target p / draft q / speculative samples: " + "; ".join(items) + "."
