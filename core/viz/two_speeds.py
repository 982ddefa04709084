"""Ch. 19's two-phase figure, drawn from a real run (``core.decode.two_speeds.run``): 'prefill — the
pause' (the prompt's chips in one bracket, one parallel pass, into a cache drum of n squares) and
'generation — the stream' (each consumed token dropping into a drum of n+1, n+2, … squares)."""

from __future__ import annotations

import plotly.graph_objects as go

from core.text import plural
from core.viz.theme import CACHED, MUTED, NEW_WORK, TEMPLATE, TEXT, described, safe

MAX_CHIPS = 8  # prompt chips drawn before the middle ones are folded into "… k more …"
MAX_SQUARES = 48  # squares drawn in one drum; a longer cache is drawn as its count alone
COLS = 8  # squares per row in a drum
CAPTION = "same machine, two speeds — a big parallel gulp, then steady sips"


def _chips(tokens: tuple[str, ...]) -> list[str]:
    shown = [safe(t.replace(" ", "␣")) for t in tokens]
    if len(shown) <= MAX_CHIPS:
        return shown
    return [*shown[:3], f"… {len(shown) - 6} more …", *shown[-3:]]


def _drum(fig: go.Figure, x0: float, x1: float, n: int, new: int, name: str) -> None:
    """A cache drum from ``x0`` to ``x1`` (y 0.4 … 4.2) holding ``n`` squares, the last ``new`` of them
    the pass's own new K/V."""
    fig.add_shape(type="rect", x0=x0, x1=x1, y0=0.4, y1=4.2, line=dict(color=MUTED, width=2), layer="below")
    fig.add_shape(type="circle", x0=x0, x1=x1, y0=3.8, y1=4.6, line=dict(color=MUTED, width=2), layer="below")
    drawn = min(n, MAX_SQUARES)
    step = (x1 - x0) / (COLS + 1)
    xs = [x0 + step * (1 + i % COLS) for i in range(drawn)]
    ys = [3.4 - 0.5 * (i // COLS) for i in range(drawn)]
    colours = [NEW_WORK if i >= n - new else CACHED for i in range(drawn)]
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="markers",
            marker=dict(symbol="square", size=9, color=colours),
            name=name,
            hovertemplate=f"{name}<extra></extra>",
            showlegend=False,
        )
    )
    label = f"{n:,} positions" if drawn == n else f"{n:,} positions ({drawn} drawn)"
    fig.add_annotation(x=(x0 + x1) / 2, y=0.1, text=label, showarrow=False, font=dict(color=TEXT, size=13))


def fig_two_speeds(passes) -> go.Figure:
    """The two phases of ``passes`` (``core.decode.two_speeds.Pass``: the prefill first, then one
    per decode step; up to three steps drawn), with the measured time of each pass in its label."""
    prefill, steps = passes[0], passes[1:4]
    n = prefill.cached
    fig = go.Figure()
    fig.add_shape(type="line", x0=10, x1=10, y0=0, y1=10, line=dict(color=MUTED, width=1))
    fig.add_annotation(x=5, y=9.8, text="<b>prefill — the pause</b>", showarrow=False, font=dict(size=16))
    fig.add_annotation(x=15, y=9.8, text="<b>generation — the stream</b>", showarrow=False, font=dict(size=16))
    chips = _chips(prefill.consumed)
    width = 9.0 / len(chips)
    for i, chip in enumerate(chips):
        fig.add_annotation(
            x=0.5 + width * (i + 0.5),
            y=8.3,
            text=chip,
            showarrow=False,
            bordercolor=TEXT,
            borderpad=3,
            bgcolor="#f2f2f2",
        )
    fig.add_shape(type="path", path="M 0.6 7.6 L 0.6 7.3 L 9.4 7.3 L 9.4 7.6", line=dict(color=TEXT, width=1.5))
    fig.add_annotation(
        x=5,
        y=6.8,
        text=f"processed together, one parallel pass: {plural(n, 'position')}, {prefill.ms:.0f} ms",
        showarrow=False,
    )
    fig.add_annotation(x=5, y=4.7, ax=5, ay=6.4, xref="x", yref="y", axref="x", ayref="y", text="", arrowwidth=2)
    _drum(fig, 2.5, 7.5, n, n, f"KV cache after prefill: {n} positions")
    fig.add_annotation(
        x=1.2, y=2.3, text="KV cache:<br>keys plus<br>values<br>per layer", showarrow=False, font=dict(size=12)
    )
    for i, p in enumerate(steps):
        cx = 11.7 + 3.1 * i
        chip = safe(p.consumed[0].replace(" ", "␣"))
        fig.add_annotation(
            x=cx,
            y=8.3,
            text=f"t+{i + 1}: {chip}",
            showarrow=False,
            bordercolor=NEW_WORK,
            borderpad=3,
            bgcolor="#fff4ec",
        )
        fig.add_annotation(x=cx, y=4.7, ax=cx, ay=7.8, xref="x", yref="y", axref="x", ayref="y", text="", arrowwidth=1)
        _drum(fig, cx - 1.4, cx + 1.4, p.cached, 1, f"KV cache after step {i + 1}: {p.cached} positions")
        fig.add_annotation(x=cx, y=6.3, text=f"{p.ms:.0f} ms", showarrow=False, font=dict(size=12))
    fig.add_annotation(x=15, y=9.1, text="each new token: compute 1, read the rest", showarrow=False)
    fig.add_annotation(x=10, y=-0.7, text=f"<i>{CAPTION}</i>", showarrow=False, font=dict(size=14))
    fig.update_layout(
        template=TEMPLATE,
        height=420,
        margin=dict(l=10, r=10, t=10, b=30),
        xaxis=dict(visible=False, range=[0, 20]),
        yaxis=dict(visible=False, range=[-1.1, 10.2]),
    )
    return described(fig, describe_two_speeds(passes))


def describe_two_speeds(passes) -> str:
    """Text alternative of ``fig_two_speeds``: the prefill's positions and time, each step's cache."""
    prefill, steps = passes[0], passes[1:4]
    stream = "; ".join(
        f"step {i + 1} consumes one token, cache {p.cached} positions, {p.ms:.0f} ms" for i, p in enumerate(steps)
    )
    return (
        f"Prefill processes {plural(prefill.cached, 'prompt position')} in one parallel pass ({prefill.ms:.0f} ms) "
        f"and the KV cache holds {prefill.cached}; then {stream}. {CAPTION.capitalize()}."
    )
