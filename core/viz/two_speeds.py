"""Ch. 19's two-phase figure, drawn from a real run (``core.decode.two_speeds.run``): 'prefill — the
pause' (the prompt's chips in one bracket, one parallel pass, into a cache drum of n squares) and
'generation — the stream' (t+1, t+2, t+3 each dropping into one second drum that shows n+1, n+2, then n+3
squares), under it the chapter's caption "Prefill is parallel; decoding is sequential." """

from __future__ import annotations

import statistics

import plotly.graph_objects as go

from core.text import plural
from core.viz.theme import CACHED, MUTED, NEW_WORK, TEMPLATE, TEXT, described, safe

MAX_CHIPS = 8  # prompt chips drawn before the middle ones are folded into "… k more …" (2 + it + 2)
MAX_SQUARES = 48  # squares drawn for a cache in one drum; a longer cache says how many are drawn
COLS = 8  # squares per row in a drum
DRUM_TOP, DRUM_BOTTOM = 4.2, 0.4  # a drum's body (y); its lid is an ellipse at the top
CHIP_Y = 8.2
STREAM_X = (15.2, 17.9, 20.6)  # where t+1, t+2, t+3 arrive: each chip, its arrow and its new square
CAPTION = "same machine, two speeds — a big parallel gulp, then steady sips"
FIGURE_CAPTION = "Prefill is parallel; decoding is sequential."  # Ch. 19's caption under the figure


def _chips(tokens: tuple[str, ...]) -> list[str]:
    shown = [safe(t.replace(" ", "␣")) for t in tokens]
    if len(shown) <= MAX_CHIPS:
        return shown
    return [*shown[:2], f"… {len(shown) - 4} more …", *shown[-2:]]  # five chips: they fit the bracket at any font


def _drum(fig: go.Figure, x0: float, x1: float) -> None:
    """A cache drum's outline from ``x0`` to ``x1``: a body and its lid."""
    fig.add_shape(
        type="rect", x0=x0, x1=x1, y0=DRUM_BOTTOM, y1=DRUM_TOP, line=dict(color=MUTED, width=2), layer="below"
    )
    lid = dict(type="circle", x0=x0, x1=x1, y0=DRUM_TOP - 0.4, y1=DRUM_TOP + 0.4, line=dict(color=MUTED, width=2))
    fig.add_shape(**lid, layer="below")


def _squares(fig: go.Figure, x0: float, width: float, n: int, colour: str, name: str) -> None:
    """``n`` squares (at most ``MAX_SQUARES``) in rows of ``COLS`` from ``x0``, over ``width``: one per position."""
    drawn = min(n, MAX_SQUARES)
    step = width / COLS
    fig.add_scatter(
        x=[x0 + step * (0.5 + i % COLS) for i in range(drawn)],
        y=[3.4 - 0.5 * (i // COLS) for i in range(drawn)],
        mode="markers",
        marker=dict(symbol="square", size=9, color=colour),
        name=name,
        hovertemplate=f"{safe(name)}<extra></extra>",
        showlegend=False,
    )


def _drawn(n: int) -> str:
    """What a drum of ``n`` cached squares leaves out, in words ("" when it draws them all)."""
    return "" if n <= MAX_SQUARES else f" ({MAX_SQUARES} of the {n:,} cached drawn)"


def _ms(ms: float) -> str:
    """A time as measured: 3 significant digits ("2.14 ms", "0.428 ms", "12.3 ms")."""
    return f"{ms:.3g} ms"


def fig_two_speeds(passes) -> go.Figure:
    """The two phases of ``passes`` (``core.decode.two_speeds.Pass``: the prefill first, then one per decode
    step; up to three steps drawn) as Ch. 19 draws them: the prompt's chips in one bracket, one parallel pass,
    into a drum of n squares; then t+1, t+2, t+3 appearing one at a time, each with an arrow down into one second
    drum, which holds the n cached squares and shows n + 1, n + 2, then n + 3 as they arrive. Each pass's time
    (``Pass.ms``) is written with the time per position, the fair comparison of the two speeds. Traces: the
    prefill's squares, the second drum's cached squares, the arriving squares (labelled with the count)."""
    prefill, steps = passes[0], passes[1:4]
    n = prefill.cached
    fig = go.Figure()
    fig.add_shape(type="line", x0=10, x1=10, y0=-0.3, y1=10, line=dict(color=MUTED, width=1))
    fig.add_annotation(x=5, y=9.85, text="<b>prefill — the pause</b>", showarrow=False)
    fig.add_annotation(x=16, y=9.85, text="<b>generation — the stream</b>", showarrow=False)
    chips = _chips(prefill.consumed)
    width = 9.0 / len(chips)
    for i, chip in enumerate(chips):
        fig.add_annotation(
            x=0.5 + width * (i + 0.5), y=CHIP_Y, text=chip, showarrow=False, bordercolor=TEXT, borderpad=3,
            bgcolor="#f2f2f2",
        )  # fmt: skip
    fig.add_shape(type="path", path="M 0.6 7.55 L 0.6 7.25 L 9.4 7.25 L 9.4 7.55", line=dict(color=TEXT, width=1.5))
    fig.add_annotation(
        x=5, y=6.7, showarrow=False,
        text=f"processed together, one parallel pass: {plural(n, 'position')}, {_ms(prefill.ms)}",
    )  # fmt: skip
    fig.add_annotation(x=5, y=4.7, ax=5, ay=6.2, xref="x", yref="y", axref="x", ayref="y", text="", arrowwidth=2)
    _drum(fig, 2.5, 7.5)
    _squares(fig, 2.9, 4.2, n, NEW_WORK, f"KV cache after prefill: {n} positions")
    fig.add_annotation(
        x=5, y=-0.1, showarrow=False, text=f"{n:,} positions{_drawn(n)} · {_ms(prefill.ms_per_position)} per position"
    )
    fig.add_annotation(x=1.2, y=2.3, text="KV cache:<br>keys plus<br>values<br>per layer", showarrow=False)
    fig.add_annotation(x=16, y=9.2, text="each new token: compute 1, read the rest", showarrow=False)
    _drum(fig, 10.6, 21.8)
    _squares(fig, 10.9, 3.4, n, CACHED, f"read from the cache: {n} positions")
    xs = list(STREAM_X[: len(steps)])
    fig.add_scatter(
        x=xs, y=[3.4] * len(steps), mode="markers+text", text=[f"{p.cached:,}" for p in steps],
        textposition="bottom center", marker=dict(symbol="square", size=11, color=NEW_WORK),
        name="arriving K/V: the cache's positions after each step", showlegend=False,
        hovertemplate="after this step: %{text} positions<extra></extra>",
    )  # fmt: skip
    for i, (p, cx) in enumerate(zip(steps, xs, strict=True)):
        chip = safe(p.consumed[0].replace(" ", "␣"))
        fig.add_annotation(
            x=cx, y=CHIP_Y, text=f"t+{i + 1}: {chip}", showarrow=False, bordercolor=NEW_WORK, borderpad=3,
            bgcolor="#fff4ec",
        )  # fmt: skip
        # A step timed longer than the whole prefill is the machine's noise (core.decode.two_speeds.noisy_steps):
        # written "busy", never drawn as decode's cost.
        fig.add_annotation(x=cx, y=7.25, text="busy" if p.ms > prefill.ms else _ms(p.ms), showarrow=False)
        fig.add_annotation(
            x=cx, y=3.75, ax=cx, ay=6.8, xref="x", yref="y", axref="x", ayref="y", text="", arrowwidth=1,
            arrowcolor=NEW_WORK,
        )  # fmt: skip
    if steps:
        counts = ", ".join(f"{p.cached:,}" for p in steps[:-1]) + f", then {steps[-1].cached:,}"
        per = statistics.median(p.ms_per_position for p in steps)
        fig.add_annotation(
            x=16.2, y=-0.1, showarrow=False,
            text=f"{counts} positions{_drawn(n)} · {_ms(per)} per position (one per pass)",
        )  # fmt: skip
    fig.add_annotation(x=10, y=-0.95, text=f"<i>{CAPTION}</i>", showarrow=False)
    fig.add_annotation(x=10, y=-1.75, text=f"<b>{FIGURE_CAPTION}</b>", showarrow=False)
    fig.update_layout(
        template=TEMPLATE,
        height=460,
        margin=dict(l=10, r=10, t=10, b=10),
        xaxis=dict(visible=False, range=[0, 22]),
        yaxis=dict(visible=False, range=[-2.2, 10.2]),
    )
    return described(fig, describe_two_speeds(passes))


def describe_two_speeds(passes) -> str:
    """Text alternative of ``fig_two_speeds``: the prefill's positions and time (and per position), each step's
    cache and time, the captions."""
    prefill, steps = passes[0], passes[1:4]
    stream = "; ".join(
        f"t+{i + 1} consumes one token, cache {p.cached} positions, "
        + ("timed while the machine was busy" if p.ms > prefill.ms else _ms(p.ms))
        for i, p in enumerate(steps)
    )
    return (
        f"Prefill processes {plural(prefill.cached, 'prompt position')} in one parallel pass ({_ms(prefill.ms)}, "
        f"{_ms(prefill.ms_per_position)} per position) and the KV cache holds {prefill.cached}; then {stream}. "
        f"{CAPTION.capitalize()}. {FIGURE_CAPTION}"
    )
