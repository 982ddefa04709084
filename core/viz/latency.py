"""Latency on a timeline (Figure 30.1)."""

from __future__ import annotations

import plotly.graph_objects as go

from core.serving.latency import RequestTrace, cache_lengths, summarize_request
from core.text import plural
from core.viz.theme import CACHED, MUTED, NEW_WORK, NEW_WORK_TEXT, TEMPLATE, described, safe

QUEUE = "#dddddd"  # light grey, outlined (the fill alone is 1.4:1 on white) and dotted
LABEL_WIDTH = 0.035  # a label of up to 3 digits takes about 3.5% of the plot's width (at 1280 px; less at 1920)


def _row_name(i: int, name: str) -> str:
    """Long names would squash the plot: keep 30 characters; the number keeps them unique."""
    return safe(f"{i + 1}. " + (name if len(name) <= 30 else name[:29] + "…"))


def _bar(fig: go.Figure, y: str, start: float, end: float, name: str, marker: dict, first: bool) -> None:
    # Bars hang below the row's centre line (the y axis is reversed), so the token labels above
    # the markers on that line never sit on top of a bar.
    fig.add_bar(
        y=[y],
        x=[end - start],
        base=[start],
        orientation="h",
        marker=marker,
        width=0.4,
        offset=0,
        name=name,
        legendgroup=name,
        showlegend=first,
        hovertemplate=f"{name}: %{{x:.2f}} ms<extra></extra>",
    )


def labelled(times_ms, min_gap_ms: float) -> list[bool]:
    """Which tokens get a label: the first, then each one at least ``min_gap_ms`` after the last
    labelled one, so labels of tokens emitted close together do not run into each other."""
    marks, last = [], None
    for t in times_ms:
        keep = last is None or t - last >= min_gap_ms
        marks.append(keep)
        last = t if keep else last
    return marks


def _tokens(fig: go.Figure, y: str, t: RequestTrace, first: bool, min_gap_ms: float) -> None:
    # A prompt length of 0 means "not given" (Exercise 1): no cache lengths to label, not 0, 1, 2.
    given = t.prompt_positions > 0
    cache = cache_lengths(t) if given else ["not known (no prompt length given)"] * len(t.emissions_ms)
    keep = labelled(t.emissions_ms, min_gap_ms)
    fig.add_scatter(
        y=[y] * len(cache),
        x=list(t.emissions_ms),
        mode="markers+text",
        text=[str(c) if k and given else "" for c, k in zip(cache, keep, strict=True)],
        textposition="top center",
        name="token emitted" + (" (label: cached positions after the pass)" if given else ""),
        legendgroup="tok",
        showlegend=first,
        marker=dict(color=NEW_WORK, size=11, symbol="diamond"),
        customdata=cache,
        hovertemplate="emitted at %{x:.2f} ms<br>cache: %{customdata}"
        + (" positions" if given else "")
        + "<extra></extra>",
    )


def fig_timeline(traces: list[RequestTrace], title: str) -> go.Figure:
    """Requests on one clock (ms): the queue (arrival → start of prefill) and prefill → first
    token as bars; each emitted token a marker labelled with the cached positions after the pass
    that produced it (Table 30.1), except where tokens come too close together for their labels
    (``labelled``; the hover still tells). A request that emitted nothing is marked as an error."""
    fig = go.Figure()
    span = max([e for t in traces for e in t.emissions_ms] + [t.prefill_start_ms for t in traces] + [1.0])
    start = min([t.arrival_ms for t in traces] + [0.0])  # the axis starts here (an arrival may be < 0)
    min_gap = span * LABEL_WIDTH
    for i, t in enumerate(traces):
        y, first = _row_name(i, t.name), i == 0
        t1 = t.emissions_ms[0] if t.emissions_ms else t.prefill_start_ms
        queue = dict(color=QUEUE, line=dict(color=MUTED, width=1), pattern=dict(shape=".", fgcolor=MUTED))
        _bar(fig, y, t.arrival_ms, t.prefill_start_ms, "queue", queue, first)
        _bar(fig, y, t.prefill_start_ms, t1, "prefill → first token", dict(color=CACHED), first)
        if t.emissions_ms:
            _tokens(fig, y, t, first, min_gap)
        else:
            fig.add_annotation(
                y=y,
                x=t.prefill_start_ms,
                text="error: no tokens",
                showarrow=False,
                # In the right half of the axis the label ends at its point: written rightwards it
                # ran past the plot and was cut. Over a bar it keeps a background to stay legible.
                xanchor="right" if t.prefill_start_ms - start > (span - start) / 2 else "left",
                bgcolor="rgba(255, 255, 255, 0.85)",
                font_color=NEW_WORK_TEXT,
            )
    fig.update_layout(
        template=TEMPLATE,
        barmode="overlay",
        height=200 + 60 * len(traces),
        title=dict(text=title),
        # At the foot of the figure: above the plot, in presenter fonts or a narrow handout, the
        # legend wrapped to two lines and ran over the title.
        legend=dict(orientation="h", yref="container", y=0, yanchor="bottom", x=0),
        margin=dict(t=60),
        xaxis=dict(title="time (ms)", rangemode="tozero"),
        yaxis=dict(autorange="reversed", type="category"),
    )
    return described(fig, describe_timeline(traces))


def _ms(v: float) -> str:
    return f"{v:,.2f}".rstrip("0").rstrip(".") + " ms"


def describe_timeline(traces: list[RequestTrace], limit: int = 6) -> str:
    """Text alternative of ``fig_timeline``: per request (the first ``limit``) its arrival, start of
    prefill, first and last token with TTFT and TPOT (Ch. 30 §30.3), or that it emitted nothing."""
    parts = []
    for i, t in enumerate(traces[:limit]):
        head = f"{i + 1}. {t.name}: arrives at {_ms(t.arrival_ms)}, prefill from {_ms(t.prefill_start_ms)}"
        if not t.emissions_ms:
            parts.append(f"{head}, no tokens (an error)")
            continue
        lat = summarize_request(t.arrival_ms, t.emissions_ms)
        tpot = "no TPOT (one token)" if lat.tpot_ms is None else f"TPOT {_ms(lat.tpot_ms)}"
        parts.append(
            f"{head}, first token at {_ms(t.emissions_ms[0])} (TTFT {_ms(lat.ttft_ms)}), "
            f"{plural(lat.n_tokens, 'token')}, the last at {_ms(t.emissions_ms[-1])} ({tpot})"
        )
    more = f"; {len(traces) - limit} more requests in the table" if len(traces) > limit else ""
    return "; ".join(parts) + more + "."
