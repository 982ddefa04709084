"""The class's answers on the projector (issue 41): how many students picked each option, per voting
round, beside the model's own share per option, the right answer marked. Counts only: never who."""

from __future__ import annotations

import plotly.graph_objects as go

from core.viz.theme import CACHED, MUTED, NEW_WORK, TEMPLATE, safe

ROUND_COLOURS = (MUTED, CACHED)  # round 1 grey, round 2 blue: "vote again" reads as the later, darker bars


def fig_class_answers(options, tallies, answer: int, shares=(), height: int = 260) -> go.Figure:
    """Grouped bars of the class's picks. ``options``: the answers' texts; ``tallies``: one list of
    counts per round (students per option); ``answer``: the right option's index; ``shares``: the
    model's own probability (or attention) per option, drawn as a line on a second axis (empty:
    a numeric question has no such share). Raises ValueError when a tally's length differs."""
    if any(len(t) != len(options) for t in tallies):
        raise ValueError("each round's tally needs one count per option")
    labels = [f"{'✓ ' if i == answer else ''}{i + 1}. {safe(o)}" for i, o in enumerate(options)]
    fig = go.Figure(layout=dict(template=TEMPLATE, height=height, barmode="group"))
    for r, counts in enumerate(tallies):
        fig.add_bar(
            x=labels,
            y=list(counts),
            name=f"round {r + 1}" if len(tallies) > 1 else "class",
            marker_color=ROUND_COLOURS[r % 2],
            marker_pattern_shape=["/" if i == answer else "" for i in range(len(options))],
            text=[str(c) for c in counts],
            textposition="outside",
            hovertemplate="%{x}: %{y} students<extra></extra>",
        )
    if shares:
        fig.add_scatter(
            x=labels,
            y=[100 * s for s in shares],
            name="model",
            yaxis="y2",
            mode="markers+text",
            marker=dict(symbol="diamond", size=12, color=NEW_WORK),
            text=[f"{100 * s:.0f} %" for s in shares],
            textposition="top center",
            hovertemplate="%{x}: the model gives %{y:.1f} %<extra></extra>",
        )
    total = max((max(t) for t in tallies if len(t)), default=0)
    fig.update_layout(
        title="The class's answers (✓ right, hatched)" + (" and the model's own share (◆)" if shares else ""),
        yaxis=dict(title="students", rangemode="tozero", range=[0, max(1, total) * 1.25], dtick=max(1, total // 5)),
        yaxis2=dict(title="model (%)", overlaying="y", side="right", range=[0, 115], showgrid=False),
        xaxis=dict(type="category"),  # "2. 54" is an option's label, never the number 2.54
        legend=dict(orientation="h", y=-0.25),
        margin=dict(t=40, b=10),
    )
    return fig


def describe_class_answers(options, tallies, answer: int, shares=()) -> str:
    """The figure in words (screen readers, tables)."""
    parts = []
    for r, counts in enumerate(tallies):
        said = ", ".join(f"option {i + 1}: {c}" for i, c in enumerate(counts))
        parts.append(f"Round {r + 1}: {said}.")
    if shares:
        parts.append("The model: " + ", ".join(f"option {i + 1} {100 * s:.0f} %" for i, s in enumerate(shares)) + ".")
    return f"{' '.join(parts)} The right answer is option {answer + 1}."
