"""Ch. 19 "See it move": the frames of ``core.decode.see_it_move`` as a plotly animation (Play, Pause
and a step slider, drawn by the browser) and as a video file for slides (matplotlib's animation
writer with the ffmpeg binary the ``imageio-ffmpeg`` package ships; an animated GIF through Pillow
where no ffmpeg is found)."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.decode.see_it_move import MOMENTS, Frame
from core.viz.theme import CACHED, MUTED, NEW_WORK, TEMPLATE, described

SHELF = "#6a3d9a"  # the chapter's violet shelf (7.9:1 on white)
FRAME_MS = 700  # one frame on screen
TRANSITION_MS = 300  # the slide from one frame to the next (0 with reduced motion)


# Where everything sits, in the figure's own pixels (presenter mode, ``ui.page.chart``, makes the figure 1.25× as
# tall and its text 20 px instead of 14: each gap below holds the larger text too). Top to bottom: the title (two
# lines) above the counters; the counters' axis (ticks and title) in the gap under them; the shelf with the wall's
# label inside its own plot, over the boxes (it sat in that gap, on the counters' axis title); the shelf's axis;
# then Play / Pause and the frame slider, pushed down past that axis by a pad in pixels (at a fraction of the
# figure's height they sat among its ticks and title at one size or the other).
HEIGHT = 540
COUNTERS, SHELF_ROWS = (0.64, 1.0), (0.0, 0.36)  # the two plots' vertical domains (fractions of the plot area)
SHELF_TOP = 1.75  # the shelf's y range: boxes 1 tall, the wall's label in the room above them
CONTROLS_PAD = 96  # px from the shelf's bottom edge to the buttons and slider: its ticks and axis title fit above
TOP = 112  # px above the plots: the title, two lines, 28 px down from the figure's top edge
BOTTOM = 180  # px under the plots: the shelf's axis, then the buttons and the slider with its labels


def _counters(f: Frame) -> go.Bar:
    values = [f.recompute_scores or 0, f.cached_scores or 0]
    text = [f"{v:,} scores" if v else "" for v in values]
    labels = ["without a cache", "with the KV cache"]
    return go.Bar(
        x=values,
        y=labels,
        orientation="h",
        marker_color=[NEW_WORK, CACHED],
        text=text,
        textposition="outside",
        cliponaxis=False,
        showlegend=False,
    )


def _shelf(f: Frame) -> go.Bar:
    width = f.bits / 32  # a position's box: as wide as its bytes, in 32-bit positions
    xs = [width * (i + 0.5) for i in range(f.positions)]
    return go.Bar(
        x=xs or [0],
        y=[1] * f.positions or [0],
        width=[width * 0.9] * f.positions or [0],
        marker_color=SHELF,
        showlegend=False,
        hoverinfo="skip",
    )


def counter_top(frames: list[Frame], moment: int) -> int:
    """The counters' axis end for ``moment`` (scores): the largest count of moments 1–2 while they play, then of
    moments 3–4, whose steps to the wall count thousands of times more (one scale for all four hid moment 1's climb)."""
    group = (0, 1) if moment < 2 else (2, 3)
    return max((f.recompute_scores or 0) for f in frames if f.moment in group) or 1


def _layout(f: Frame, top: int) -> dict:
    wall = f.capacity * f.bits / 32  # the window's bytes, in 32-bit positions' worth
    return dict(
        title=dict(text=f"<b>{MOMENTS[f.moment]}</b><br><span style='font-size:0.8em'>{f.caption}</span>"),
        xaxis=dict(range=[0, top * 1.3]),
        shapes=[
            dict(type="line", xref="x2", yref="y2", x0=wall, x1=wall, y0=0, y1=SHELF_TOP,
                 line=dict(color=MUTED, width=4))
        ],
        annotations=[
            dict(xref="x2", yref="y2", x=wall, y=SHELF_TOP, xanchor="right", yanchor="top", xshift=-8,
                 showarrow=False, text=f"the wall: the context window ({f.capacity:,} positions at {f.bits} bits)"),
        ],
    )  # fmt: skip


def fig_see_it_move(frames: list[Frame], reduce_motion: bool = False) -> go.Figure:
    """The animation: counters of scores computed (top) and the shelf of cached positions against the
    wall of the context window's bytes (bottom), one plotly frame per ``Frame``; ``reduce_motion``
    jumps between frames without sliding (Play and the slider alike)."""
    first = frames[0]
    fig = make_subplots(rows=2, cols=1)
    fig.add_trace(_counters(first), row=1, col=1)
    fig.add_trace(_shelf(first), row=2, col=1)
    fig.frames = [
        go.Frame(data=[_counters(f), _shelf(f)], layout=_layout(f, counter_top(frames, f.moment)), name=str(i))
        for i, f in enumerate(frames)
    ]
    transition = dict(duration=0 if reduce_motion else TRANSITION_MS)
    play = dict(frame=dict(duration=FRAME_MS, redraw=True), transition=transition, fromcurrent=True)
    pause = dict(frame=dict(duration=0, redraw=False), mode="immediate", transition=dict(duration=0))
    steps = [
        dict(method="animate", label=str(i + 1),
             args=[[str(i)], dict(mode="immediate", frame=dict(redraw=True), transition=transition)])
        for i in range(len(frames))
    ]  # fmt: skip
    controls = dict(y=0, yanchor="top", pad=dict(t=CONTROLS_PAD))
    fig.update_layout(
        template=TEMPLATE,
        height=HEIGHT,
        margin=dict(l=10, r=10, t=TOP, b=BOTTOM),
        bargap=0,
        updatemenus=[
            dict(
                type="buttons",
                direction="left",
                x=0,
                xanchor="left",
                **controls,
                buttons=[
                    dict(label="Play ▶", method="animate", args=[None, play]),
                    dict(label="Pause", method="animate", args=[[None], pause]),
                ],
            ),
        ],  # fmt: skip
        sliders=[
            dict(
                active=0,
                steps=steps,
                x=0.27,
                len=0.73,
                xanchor="left",
                **controls,
                currentvalue=dict(prefix="frame ", offset=8),
            )
        ],  # fmt: skip
        **_layout(first, counter_top(frames, first.moment)),
    )
    fig.update_layout(title=dict(yref="container", y=1, yanchor="top", pad=dict(t=28)))  # two lines, down from the top
    fig.update_yaxes(domain=COUNTERS, row=1, col=1)
    fig.update_xaxes(title="scores computed so far (per layer and head)", row=1, col=1)
    wall = max(f.capacity * f.bits / 32 for f in frames)
    fig.update_xaxes(range=[0, wall * 1.05], title="KV-cache bytes (in 32-bit positions' worth)", row=2, col=1)
    fig.update_yaxes(visible=False, range=[0, SHELF_TOP], domain=SHELF_ROWS, row=2, col=1)
    return described(fig, describe_see_it_move(frames))


def describe_see_it_move(frames: list[Frame]) -> str:
    """Text alternative: the four moments with their numbers (the last frame of each)."""
    last = {f.moment: f for f in frames}
    parts = [f"{MOMENTS[m].split(' · ')[1]}: {last[m].caption}" for m in sorted(last)]
    return "See it move, in four moments. " + " ".join(p if p.endswith(".") else p + "." for p in parts)
