"""Figure 30.1 whole (Ch. 30 §30.2): three columns — known prompt, first decode, later outputs — each a numbered
stack of steps labelled with the chapter's step kinds and their side (input, model, output), a note under each
column, arrows where an emitted output becomes the next pass's input, and the caption under it all. The columns
come from ``core.serving.figure_30_1.figure_30_1``; nothing here computes a number."""

from __future__ import annotations

import textwrap

import plotly.graph_objects as go

from core.serving.figure_30_1 import CAPTION, INPUT, NUMBERS, OPERATION, OUTPUT, OUTSIDE, TEXT, Column
from core.viz.theme import CACHED, MUTED, NEW_WORK, TEMPLATE, described, safe

# Each kind its own fill and outline (dotted, solid, dashed), so no kind is told by colour alone.
STYLES = {
    OUTSIDE: ("#eeeeee", MUTED, "dot"),
    OPERATION: ("#e6f1f8", CACHED, "solid"),
    NUMBERS: ("#ffffff", CACHED, "dash"),
    TEXT: ("#fff4ec", NEW_WORK, "solid"),
}
SIDES = {INPUT: " · input", OUTPUT: " · output"}  # a model-side step needs no word: it is the model's own work
KIND_COLOUR = "#444444"  # the kind labels, quieter than the step's own text: 9.7:1 on white, ≥ 8:1 on every fill
WIDTH = 0.84  # a box's width, of 1 per column: the gaps leave room for the arrows between columns
HALF = 0.4  # a box's half height, of 1 per step: a kind label and two lines of text
TEXT_TOP = 0.3  # the step's text starts this far below the box's top, under its kind label
WRAP = 38  # characters per line inside a box (a column is about a third of the page)
NOTE_WRAP = 48


def _lines(text: str, width: int) -> str:
    return "<br>".join(safe(line) for line in textwrap.wrap(text, width)) or safe(text)


def kind_label(i: int, step) -> str:
    """The step's number, the chapter's kind and its side: "1. Outside the model · input"."""
    return f"{i}. {step.kind}{SIDES.get(step.side, '')}"


def fig_figure_30_1(columns: tuple[Column, ...], title: str) -> go.Figure:
    """The three ``columns`` side by side: column c at x = c … c + 1, step i of a column at y = i (the y axis
    reversed); each step a box in its kind's style with its kind label and text; an arrow from "emit output k"
    to the next column's first step; each column's note under it; ``CAPTION`` at the foot."""
    fig = go.Figure()
    xs, ys, hover = [], [], []
    for c, col in enumerate(columns):
        cx = c + 0.5
        fig.add_annotation(x=cx, y=0.2, text=f"<b>{safe(col.title)}</b>", showarrow=False)
        for i, step in enumerate(col.steps, 1):
            fill, line, dash = STYLES[step.kind]
            fig.add_shape(
                type="rect", x0=cx - WIDTH / 2, x1=cx + WIDTH / 2, y0=i - HALF, y1=i + HALF, fillcolor=fill,
                line=dict(color=line, width=2, dash=dash), layer="below",
            )  # fmt: skip
            fig.add_annotation(
                x=cx - WIDTH / 2 + 0.02, y=i - HALF + 0.04, text=f"<i>{safe(kind_label(i, step))}</i>",
                showarrow=False, xanchor="left", yanchor="top", font=dict(color=KIND_COLOUR),
            )  # fmt: skip
            fig.add_annotation(  # under the kind label, two lines at most (WRAP)
                x=cx, y=i - HALF + TEXT_TOP, text=_lines(step.text, WRAP), showarrow=False, yanchor="top"
            )
            xs.append(cx)
            ys.append(i)
            hover.append(f"{col.title} · {kind_label(i, step)}: {step.text}")
        fig.add_annotation(
            x=cx, y=len(col.steps) + HALF + 0.12, text=f"<i>{_lines(col.note, NOTE_WRAP)}</i>", showarrow=False,
            yanchor="top",
        )  # fmt: skip
    for c in range(len(columns) - 1):  # an emitted output is the next pass's input
        emit = [i for i, s in enumerate(columns[c].steps, 1) if s.side == OUTPUT and "emit output" in s.text]
        if emit and len(columns[c + 1].steps) > 1:
            fig.add_annotation(
                x=c + 1 + 0.5 - WIDTH / 2, y=1, ax=c + 0.5 + WIDTH / 2, ay=emit[-1], xref="x", yref="y", axref="x",
                ayref="y", text="", showarrow=True, arrowhead=2, arrowwidth=2, arrowcolor=NEW_WORK,
            )  # fmt: skip
    fig.add_scatter(
        x=xs, y=ys, mode="markers", marker=dict(size=1, opacity=0), hovertext=[safe(h) for h in hover],
        hoverinfo="text", showlegend=False, name="steps",
    )  # fmt: skip
    rows = max(len(col.steps) for col in columns)
    fig.add_annotation(x=1.5, y=rows + 1.55, text=f"<i>{safe(CAPTION)}</i>", showarrow=False, yanchor="top")
    fig.update_layout(
        template=TEMPLATE,
        title=dict(text=safe(title)),
        height=170 + 125 * rows,
        margin=dict(l=10, r=10, t=50, b=10),
        xaxis=dict(visible=False, range=[0, len(columns)]),
        yaxis=dict(visible=False, range=[rows + 2.0, -0.2]),
        showlegend=False,
    )
    return described(fig, describe_figure_30_1(columns))


def describe_figure_30_1(columns: tuple[Column, ...]) -> str:
    """Text alternative of ``fig_figure_30_1``: every column's steps in order, with kinds and sides, and its note."""
    parts = []
    for col in columns:
        steps = "; ".join(f"{kind_label(i, s)}: {s.text}" for i, s in enumerate(col.steps, 1))
        parts.append(f"{col.title}: {steps}. {col.note}")
    return " ".join(parts) + f" {CAPTION}"
