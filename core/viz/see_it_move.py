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


def _counters(f: Frame) -> go.Bar:
    values = [f.recompute_scores or 0, f.cached_scores or 0]
    text = [f"{v:,} scores" if v else "" for v in values]
    labels = ["without a cache", "with the KV cache"]
    return go.Bar(x=values, y=labels, orientation="h", marker_color=[NEW_WORK, CACHED], text=text, showlegend=False)


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


def _layout(f: Frame) -> dict:
    wall = f.capacity * f.bits / 32  # the window's bytes, in 32-bit positions' worth
    return dict(
        title=dict(text=f"<b>{MOMENTS[f.moment]}</b><br><span style='font-size:0.8em'>{f.caption}</span>"),
        shapes=[
            dict(type="line", xref="x2", yref="y2", x0=wall, x1=wall, y0=0, y1=1.3, line=dict(color=MUTED, width=4))
        ],
        annotations=[
            dict(xref="x2", yref="y2", x=wall, y=1.38, xanchor="right", showarrow=False,
                 text=f"the wall: the context window ({f.capacity:,} positions at {f.bits} bits)"),
        ],
    )  # fmt: skip


def fig_see_it_move(frames: list[Frame], reduce_motion: bool = False) -> go.Figure:
    """The animation: counters of scores computed (top) and the shelf of cached positions against the
    wall of the context window's bytes (bottom), one plotly frame per ``Frame``; ``reduce_motion``
    jumps between frames without sliding."""
    first, top = frames[0], max((f.recompute_scores or 0) for f in frames) or 1
    fig = make_subplots(rows=2, cols=1, row_heights=[0.35, 0.65], vertical_spacing=0.18)
    fig.add_trace(_counters(first), row=1, col=1)
    fig.add_trace(_shelf(first), row=2, col=1)
    fig.frames = [
        go.Frame(data=[_counters(f), _shelf(f)], layout=_layout(f), name=str(i)) for i, f in enumerate(frames)
    ]
    transition = 0 if reduce_motion else TRANSITION_MS
    play = dict(frame=dict(duration=FRAME_MS, redraw=True), transition=dict(duration=transition), fromcurrent=True)
    pause = dict(frame=dict(duration=0, redraw=False), mode="immediate", transition=dict(duration=0))
    steps = [
        dict(method="animate", label=str(i + 1), args=[[str(i)], dict(mode="immediate", frame=dict(redraw=True))])
        for i in range(len(frames))
    ]
    fig.update_layout(
        template=TEMPLATE,
        height=480,
        margin=dict(l=10, r=10, t=80, b=95),
        bargap=0,
        updatemenus=[
            dict(
                type="buttons",
                direction="left",
                x=0,
                y=-0.2,
                xanchor="left",
                yanchor="top",
                buttons=[
                    dict(label="Play ▶", method="animate", args=[None, play]),
                    dict(label="Pause", method="animate", args=[[None], pause]),
                ],
            ),
        ],  # fmt: skip
        sliders=[dict(active=0, steps=steps, x=0.2, len=0.8, y=-0.16, currentvalue=dict(prefix="frame "))],
        **_layout(first),
    )
    fig.update_xaxes(range=[0, top * 1.25], title="scores computed so far (per layer and head)", row=1, col=1)
    wall = max(f.capacity * f.bits / 32 for f in frames)
    fig.update_xaxes(range=[0, wall * 1.05], title="KV-cache bytes (in 32-bit positions' worth)", row=2, col=1)
    fig.update_yaxes(visible=False, range=[0, 1.4], row=2, col=1)
    return described(fig, describe_see_it_move(frames))


def describe_see_it_move(frames: list[Frame]) -> str:
    """Text alternative: the four moments with their numbers (the last frame of each)."""
    last = {f.moment: f for f in frames}
    parts = [f"{MOMENTS[m].split(' · ')[1]}: {last[m].caption}" for m in sorted(last)]
    return "See it move, in four moments. " + " ".join(p if p.endswith(".") else p + "." for p in parts)
