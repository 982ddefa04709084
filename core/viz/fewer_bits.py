"""Fewer bits on two machines (Ch. 30 §30.6): this server's weight formats (against float32) and the reference
GPU's (against bfloat16, as measured), side by side on one log scale, bars from 1× (faster right, slower left and
hatched), each panel titled with what was measured where and the lesson its numbers teach."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.evaluate.format_speed.reference import times
from core.viz.theme import CACHED, MUTED, NEW_WORK, TEMPLATE, TEXT, described

if TYPE_CHECKING:  # types only
    from core.evaluate.format_speed.reference import GpuReference

SHORT = {"int4 weight-only, g64": "int4 g64", "int8 weight-only": "int8", "fp8 e4m3": "fp8"}


def _bars(fig: go.Figure, col: int, y, ratios: list[float], hover: list[str], baseline: list[bool]) -> None:
    """Bars from 1× to each ratio (``base`` 1, length ratio − 1 on the log axis), labelled "1.7× faster" (the
    baseline's own row: "baseline")."""
    faster = [x >= 1 for x in ratios]
    fig.add_bar(
        x=[x - 1 for x in ratios],
        y=y,
        base=1,
        orientation="h",
        marker=dict(
            color=[CACHED if f else NEW_WORK for f in faster],
            pattern=dict(shape=["" if f else "/" for f in faster], fgcolor="white"),
        ),
        text=["baseline" if b else times(x) for x, b in zip(ratios, baseline, strict=True)],
        textposition="outside",
        textfont=dict(color=TEXT),
        cliponaxis=False,
        customdata=hover,
        hovertemplate="%{customdata}<extra></extra>",
        showlegend=False,
        row=1,
        col=col,
    )


def fig_two_machines(
    here: tuple[str, str, list[tuple[str, float]]] | None, here_lesson: str, ref: GpuReference, gpu_lesson: str
) -> go.Figure:
    """Left: this server (``reference.here_ratios``: baseline, what was timed, [(format, speed)]; None before a
    measurement, said in the panel); right: the reference GPU (``GpuReference``), grouped by model and batch.
    Both on the same log range of speed against each machine's baseline; each panel's title says where and when
    it was measured and its lesson (``here_lesson``, ``gpu_lesson``: one short line each)."""
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.2,
        subplot_titles=(
            f"<b>This server's CPU</b>, measured here<br>{here_lesson}",
            f"<b>{ref.device.removeprefix('one ').split(' (')[0]}</b>, measured elsewhere, {ref.when}<br>{gpu_lesson}",
        ),
    )
    ratios = [ref.speed(r) for r in ref.rows]
    if here is not None:
        base, what, pairs = here
        ratios += [x for _, x in pairs]
        _bars(
            fig,
            1,
            [f for f, _ in pairs],
            [x for _, x in pairs],
            [f"{f}: {x:.3g}× the speed of {base} ({what}, batch 1)" for f, x in pairs],
            [f == base for f, _ in pairs],
        )
    else:
        base = "float32"
        left = fig.layout.xaxis.domain
        fig.add_annotation(
            text="Not measured on this server yet:<br>press <b>Measure</b> above.",
            x=(left[0] + left[1]) / 2,
            y=0.5,
            xref="paper",
            yref="paper",
            showarrow=False,
            font=dict(color=TEXT),
        )
        fig.update_yaxes(visible=False, row=1, col=1)
    groups = [f"{r.model.split('-')[-1]}, B = {r.batch}" for r in ref.rows]
    _bars(
        fig,
        2,
        [groups, [SHORT.get(r.fmt, r.fmt) for r in ref.rows]],
        [ref.speed(r) for r in ref.rows],
        [
            f"{r.model}, batch {r.batch}, {r.fmt}: {r.step_ms:g} ms, {ref.speed(r):.3g}× bfloat16's speed, "
            f"{r.over_floor:g}× its byte floor ({r.weights_mib:,g} MiB of weights)"
            for r in ref.rows
        ],
        [r.fmt == "bfloat16" for r in ref.rows],
    )
    lo, hi = np.log10(min(ratios)) - 1.0, np.log10(max(ratios)) + 0.75  # room for the labels
    for col, label in ((1, f"speed against {base} (log)"), (2, "speed against bfloat16 (log)")):
        fig.update_xaxes(type="log", range=[lo, hi], title=label, row=1, col=col, dtick=1)
        fig.add_vline(x=1, line=dict(color=MUTED, width=1, dash="dot"), row=1, col=col)
    fig.update_yaxes(autorange="reversed", row=1, col=1)
    fig.update_yaxes(autorange="reversed", row=1, col=2)
    fig.update_annotations(font_size=None)  # the panels' titles at the figure's font (larger in presenter mode)
    fig.update_layout(template=TEMPLATE, height=560, margin=dict(t=90, b=10, r=40), bargap=0.25)
    return described(fig, describe_two_machines(here, ref))


def describe_two_machines(here: tuple[str, str, list[tuple[str, float]]] | None, ref: GpuReference) -> str:
    """Text alternative of ``fig_two_machines``: every bar's speed, this server's and the reference GPU's."""
    if here is None:
        mine = "This server: not measured yet"
    else:
        base, what, pairs = here
        mine = f"This server ({what}, batch 1), against {base}: " + "; ".join(f"{f} {times(x)}" for f, x in pairs)
    gpu = "; ".join(f"{r.model} batch {r.batch} {r.fmt} {times(ref.speed(r))}" for r in ref.rows)
    where = f"Reference GPU ({ref.device}), measured elsewhere on {ref.when}, weight products against bfloat16"
    return f"{mine}. {where}: {gpu}."
