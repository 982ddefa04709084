"""Speculative decoding: target, draft and speculative samples side by side."""

from __future__ import annotations

from typing import TYPE_CHECKING

import plotly.graph_objects as go

from core.viz.theme import CACHED, MUTED, NEW_WORK, TEMPLATE, described, safe

if TYPE_CHECKING:  # types only
    from core.serving.speculative import TokenShare


PROPOSED = "proposed (✓ accepted, ✗ rejected, then discarded)"
# Short enough for a projector's table (a longer name was cut at 1920 × 1080 in presenter mode).
CACHE_COLUMN = "target cache: before → checked → after"


def speculative_rounds(rounds, text, greedy: bool = False) -> list[dict]:
    """One table row per round of ``core.serving.speculative.Speculative`` (``text``: token id → its raw text):
    the proposals marked accepted, rejected, or discarded — the target scored those in the same pass,
    but after a rejection they are thrown away unused (they read "not checked") — the token that
    ends the round, the tokens produced and the target cache's length before the round, with all k
    checked, and after rolling back. A rejection's replacement is "resampled" from norm(max(0, p − q));
    when ``greedy`` (temperature 0) it is the target's own most likely token, nothing random."""
    replaced = "target's token" if greedy else "resampled"
    rows = []
    for i, r in enumerate(rounds, 1):
        marks = [f"{text(t)} {'✓' if ok else '✗'}" for t, ok in zip(r.proposed, r.accepted, strict=False)]
        marks += [f"{text(t)} (discarded)" for t in r.proposed[len(r.accepted) :]]
        rows.append(
            {
                "round": i,
                PROPOSED: " | ".join(marks),
                "then": f"{'bonus' if r.final_is_bonus else replaced}: {text(r.final_token)}",
                "tokens produced": r.produced,
                CACHE_COLUMN: f"{r.cache_before} → {r.cache_peak} → {r.cache_after}",
            }
        )
    return rows


def fig_three_distributions(texts: list[str], shares: list[TokenShare]) -> go.Figure:
    """Grouped bars per token: target p, draft q, and the speculative samples (``shares``, one
    ``core.serving.speculative.TokenShare`` per token; ``texts``: each token's raw text, escaped here)."""
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
        # Ordered by the larger of p and q, not by p: a token the draft favours ranks high however
        # unlikely the target finds it ("2. No" at target p = 0.003 read as the runner-up).
        xaxis=dict(type="category", title="tokens, most likely under the target or the draft first (max of p, q)"),
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
