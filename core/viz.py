"""Figures: pure ``fig_*(data) -> go.Figure`` functions, one shared template.

The only plotly importer. No streamlit. Text that came from a user (tokens of a prompt) is
escaped before it reaches plotly, whose labels otherwise interpret a subset of HTML.
Colour scale: Cividis, designed to be readable with colour-vision deficiency.
"""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

TEMPLATE = "explainer"
COLORSCALE = "Cividis"
NEW_WORK = "#d55e00"  # Okabe-Ito vermillion: the one new thing this step
CACHED = "#0072b2"  # Okabe-Ito blue: read from the KV cache
MUTED = "#999999"

pio.templates[TEMPLATE] = go.layout.Template(
    layout=go.Layout(
        font=dict(family="Source Sans Pro, Arial, sans-serif", size=14),
        paper_bgcolor="white",
        plot_bgcolor="white",
        margin=dict(l=10, r=10, t=50, b=10),
        hoverlabel=dict(font_size=14),
        xaxis=dict(automargin=True),
        yaxis=dict(automargin=True),
        title=dict(x=0, xanchor="left", font=dict(size=17)),
    )
)


def safe(text: str) -> str:
    """Escape user text for plotly labels and hover text (shown literally, never as markup)."""
    return html.escape(str(text), quote=True)


def fig_attention(att: np.ndarray, labels: list[str], new_rows: int, title: str) -> go.Figure:
    """Masked attention heatmap.

    ``att`` ``(T, T)``: rows are positions asking, columns positions being scored; NaN cells
    (the causal mask) are left blank. The last ``new_rows`` rows are this pass's new work (a
    full-strength trace, outlined); earlier rows are a second, dimmed trace marked as read from
    the cache. ``labels`` (one per position, distinct, raw user text) label both axes.
    """
    T = att.shape[0]
    ticks = [safe(s) for s in labels]  # distinct: each label starts with its position
    old = T - new_rows
    gap = 1 if T <= 40 else 0
    hover = "asking %{y}<br>scoring %{x}<br>share %{z:.4f}<extra>%{fullData.name}</extra>"
    fig = go.Figure()
    for rows, name, opacity in ((slice(0, old), "read from the KV cache", 0.4), (slice(old, T), "new this step", 1.0)):
        if rows.stop <= rows.start:
            continue
        z = np.full((T, T), np.nan, dtype=np.float32)
        z[rows] = att[rows]
        fig.add_heatmap(
            # Full-size z for each trace (a one-row heatmap trace is drawn as a band across the
            # plot). numpy float32 goes out as a compact typed array; NaN is a blank cell.
            z=z,
            x=ticks,
            y=ticks,
            zmin=0,
            zmax=1,
            colorscale=COLORSCALE,
            hoverongaps=False,
            hovertemplate=hover,
            name=name,
            opacity=opacity,
            showscale=opacity == 1.0,
            xgap=gap,
            ygap=gap,
            texttemplate="%{z:.2f}" if T <= 12 else None,
            textfont=dict(size=15),
            colorbar=dict(title=dict(text="attention<br>share (0–1)"), thickness=14),
        )
    if old > 0:
        fig.add_annotation(
            x=1.0,
            xref="paper",
            y=ticks[(old - 1) // 2],
            xanchor="right",
            showarrow=False,
            text="earlier rows (dimmed): read from the KV cache, never redone",
            font=dict(color=CACHED, size=13),
            bgcolor="rgba(255,255,255,0.85)",
        )
    fig.add_shape(
        type="rect", x0=-0.5, x1=T - 0.5, y0=old - 0.5, y1=T - 0.5, line=dict(color=NEW_WORK, width=3), layer="above"
    )
    step = max(1, int(np.ceil(T / 40)))  # about 40 labels at most, and always the newest row
    shown = sorted(set(range(0, T, step)) | {T - 1})
    if len(shown) > 1 and shown[-1] - shown[-2] < step / 2:
        shown.pop(-2)  # keep the newest label clear of its neighbour
    axis = dict(
        type="category",
        showgrid=False,
        automargin=True,
        tickmode="array",
        tickvals=[ticks[i] for i in shown],
        ticktext=[ticks[i] for i in shown],
    )
    fig.update_layout(
        template=TEMPLATE,
        title=dict(text=title, x=0, xanchor="left"),
        height=max(420, min(900, 20 * T + 200)),
        xaxis=dict(title="position being scored (key)", side="bottom", tickangle=-60, **axis),
        yaxis=dict(title="position asking (query)", autorange="reversed", **axis),
        plot_bgcolor="#f4f4f4",
    )
    return fig


def fig_kv_shelf(cached: int, capacity: int, pending_label: str | None, bytes_per_position: int) -> go.Figure:
    """The KV cache as a shelf of ``capacity`` slots: ``cached`` filled, the chosen-but-not-
    yet-consumed token waiting beside it, and the context-window wall at ``capacity``."""
    fig = go.Figure()
    fig.add_bar(
        y=["KV cache"],
        x=[cached],
        orientation="h",
        marker_color=CACHED,
        name="cached positions",
        hovertemplate=f"{cached} cached positions<br>{cached * bytes_per_position:,} bytes<extra></extra>",
    )
    if pending_label is not None and cached < capacity:
        fig.add_bar(
            y=["KV cache"],
            x=[1],
            base=[cached],
            orientation="h",
            name="chosen, not yet consumed",
            marker=dict(color="white", line=dict(color=NEW_WORK, width=2)),
            hovertemplate=f"next input: {safe(pending_label)}<br>enters the cache at the next step<extra></extra>",
        )
    fig.add_vline(x=capacity, line=dict(color="black", width=4))
    fig.add_annotation(
        x=capacity,
        y=0.5,
        yref="paper",
        text=f"context window:<br>{capacity} positions",
        showarrow=False,
        xanchor="right",
        align="right",
        bgcolor="rgba(255,255,255,0.8)",
    )
    fig.update_layout(
        template=TEMPLATE,
        barmode="overlay",
        height=220,
        showlegend=True,
        legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0),
        margin=dict(t=40, b=60, l=10, r=10),
        xaxis=dict(title="cached positions", range=[0, capacity * 1.02]),
        yaxis=dict(showticklabels=False),
    )
    return fig


def fig_next_token(rows: list[tuple[int, str, float]], chosen: int | None, title: str) -> go.Figure:
    """Horizontal bars of the top next-token probabilities, the chosen token marked.

    ``rows``: (token id, token text, probability 0..1), largest first; ``chosen``: its id."""
    labels = [f"{i + 1}. {safe(t)}" for i, (_, t, _) in enumerate(rows)]
    probs = [p for _, _, p in rows]
    colors = [NEW_WORK if tid == chosen else CACHED for tid, _, _ in rows]
    fig = go.Figure(
        go.Bar(
            x=probs,
            y=labels,
            orientation="h",
            marker_color=colors,
            text=[f"{p:.1%}" + ("  ◀ chosen" if tid == chosen else "") for tid, _, p in rows],
            textposition="outside",
            cliponaxis=False,
            hovertemplate="%{y}: %{x:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        template=TEMPLATE,
        title=dict(text=title),
        height=110 + 30 * max(1, len(rows)),
        xaxis=dict(
            title="probability", range=[0, 1.45], tickvals=[0, 0.25, 0.5, 0.75, 1], tickformat=".0%", automargin=True
        ),
        yaxis=dict(autorange="reversed", automargin=True, type="category"),
        title_x=0,
    )
    return fig


# ---- the bill per token (Ch. 19) -------------------------------------------------------------


def fig_growth_shapes(
    n: np.ndarray, grid: np.ndarray, causal: np.ndarray, memory: np.ndarray, marks: list[tuple[int, int]], per: str
) -> go.Figure:
    """Prefill scores (n² grid and n(n+1)/2 kept by the mask) against KV memory (∝ n); scores
    relative to the n = 1,000 grid (so the triangle starts at ≈ 0.5), memory to n = 1,000.
    ``marks``: (n, n²) points to annotate; ``per`` says what the absolute counts are per
    (e.g. "per layer, per head")."""
    fig = go.Figure()
    fig.add_scatter(
        x=n,
        y=grid / 1_000_000,
        name="prefill scores, full n² grid (before masking)",
        line=dict(color=NEW_WORK, width=3),
        hovertemplate="n = %{x:,}<br>%{y:.2f}× the n = 1,000 grid<extra></extra>",
    )
    fig.add_scatter(
        x=n,
        y=causal / 1_000_000,
        name="prefill scores the causal mask keeps, n(n+1)/2 (≈ half)",
        line=dict(color=NEW_WORK, width=2, dash="dot"),
        hovertemplate="n = %{x:,}<br>%{y:.2f}× the n = 1,000 grid<extra></extra>",
    )
    fig.add_scatter(
        x=n,
        y=memory / 1000,
        name="KV-cache memory, grows as n",
        line=dict(color=CACHED, width=3),
        hovertemplate="n = %{x:,}<br>%{y:.2f}× the n = 1,000 cache<extra></extra>",
    )
    for x, sq in marks:
        fig.add_scatter(
            x=[x],
            y=[x * x / 1_000_000],  # per layer and head; the label carries the scaled count
            mode="markers",
            marker=dict(size=11, color=NEW_WORK),
            showlegend=False,
            hoverinfo="skip",
        )
        fig.add_annotation(
            x=x,
            y=x * x / 1_000_000,
            text=f"{x:,} tokens → {sq:,} scores ({per})",
            ax=-40 if x > n.max() / 2 else 60,
            ay=-30,
            xanchor="right" if x > n.max() / 2 else "left",
        )
    fig.update_layout(
        template=TEMPLATE,
        height=430,
        legend=dict(orientation="h", y=-0.25),
        title=dict(text="Scores grow quadratically; the cache linearly (both = 1 at n = 1,000)"),
        xaxis=dict(title="context length n (tokens)", tickformat=","),
        yaxis=dict(title="relative cost (n = 1,000 → 1)"),
    )
    return fig


def fig_step_work(n: np.ndarray, cached: np.ndarray, naive: np.ndarray) -> go.Figure:
    """Scores for one decode step at context n: cached (n) vs full-prefix recompute (n(n+1)/2)."""
    fig = go.Figure()
    fig.add_scatter(
        x=n,
        y=cached,
        name="with the KV cache: n scores",
        line=dict(color=CACHED, width=3),
        hovertemplate="n = %{x:,}: %{y:,} scores<extra></extra>",
    )
    fig.add_scatter(
        x=n,
        y=naive,
        name="full-prefix recompute: n(n+1)/2",
        line=dict(color=NEW_WORK, width=3),
        hovertemplate="n = %{x:,}: %{y:,} scores<extra></extra>",
    )
    fig.update_layout(
        template=TEMPLATE,
        height=380,
        legend=dict(orientation="h", y=-0.3),
        title=dict(text="Scores in one decode step (per layer, per head)"),
        xaxis=dict(title="context length n (tokens)", tickformat=","),
        yaxis=dict(title="scores (log scale)", type="log"),
    )
    return fig


def fig_measured(lengths, cached_ms, naive_ms, title: str) -> go.Figure:
    """Measured median ms per decode step against context length, both paths."""
    fig = go.Figure()
    fig.add_scatter(
        x=list(lengths),
        y=list(cached_ms),
        mode="lines+markers",
        name="with the KV cache",
        line=dict(color=CACHED, width=3),
        hovertemplate="n = %{x}: %{y:.2f} ms<extra></extra>",
    )
    fig.add_scatter(
        x=list(lengths),
        y=list(naive_ms),
        mode="lines+markers",
        name="full-prefix recompute",
        line=dict(color=NEW_WORK, width=3),
        hovertemplate="n = %{x}: %{y:.2f} ms<extra></extra>",
    )
    fig.update_layout(
        template=TEMPLATE,
        height=400,
        legend=dict(orientation="h", y=-0.3),
        title=dict(text=title),
        xaxis=dict(title="context length after the step (positions)"),
        yaxis=dict(title="median time per decode step (ms)", rangemode="tozero"),
    )
    return fig


# ---- memory ------------------------------------------------------------------------------------


def fig_kv_variants(names: list[str], totals_bytes: list[int], labels: list[str], chosen: str | None) -> go.Figure:
    """KV bytes of the same model as MHA / GQA / MQA (bars), the current one marked.

    ``labels``: the byte figures as text (the caller picks the unit)."""
    fig = go.Figure(
        go.Bar(
            x=names,
            y=[float(t) for t in totals_bytes],
            marker_color=[NEW_WORK if n == chosen else CACHED for n in names],
            text=labels,
            textposition="outside",
            cliponaxis=False,
            hovertemplate="%{x}: %{y:,} bytes<extra></extra>",
        )
    )
    fig.update_layout(
        template=TEMPLATE,
        height=340,
        title=dict(text="Same model, different KV-head sharing"),
        yaxis=dict(title="KV cache (bytes)", rangemode="tozero", tickformat=",.0f"),
        xaxis=dict(automargin=True),
        margin=dict(t=60),
    )
    return fig


def fig_memory_budget(parts: dict[str, float], budget_gb: float) -> go.Figure:
    """One stacked bar of memory parts (GB = 10⁹ bytes) against a budget line."""
    colors = [CACHED, NEW_WORK, MUTED, "#009e73"]
    fig = go.Figure()
    for (name, gb), color in zip(parts.items(), colors, strict=False):
        fig.add_bar(
            x=[gb],
            y=["needed"],
            orientation="h",
            name=f"{name}: {gb:,.2f} GB",
            marker_color=color,
            hovertemplate=f"{name}: %{{x:,.3f}} GB<extra></extra>",
        )
    fig.add_vline(x=budget_gb, line=dict(color="black", width=3, dash="dash"))
    fig.add_annotation(
        x=budget_gb,
        y=0,
        yref="paper",
        text=f"budget {budget_gb:,.1f} GB",
        showarrow=False,
        yanchor="top",
        bgcolor="white",
    )
    total = sum(parts.values())
    fig.update_layout(
        template=TEMPLATE,
        barmode="stack",
        height=240,
        legend=dict(orientation="h", y=1.25, x=0, traceorder="normal"),
        xaxis=dict(title="memory (GB = 10⁹ bytes)", range=[0, max(total, budget_gb) * 1.1]),
        yaxis=dict(showticklabels=False),
        margin=dict(t=70),
    )
    return fig


# ---- quantization ---------------------------------------------------------------------------------

MAX_SHELVES = 257  # beyond this the shelves merge into a solid bar; say so instead of drawing them


def fig_ruler(
    x: np.ndarray,
    q: np.ndarray,
    x_hat: np.ndarray,
    clipped: np.ndarray,
    levels: np.ndarray | None,
    scale: float,
    title: str,
    outside_label: str = "clipped values (error not bounded by s/2)",
) -> go.Figure:
    """The quantization ruler: every representable level as a shelf (``levels``, None if too
    many to draw), each value ``x`` as a dot dropping to its shelf ``x_hat`` with the stored
    integer ``q`` beneath, values flagged in ``clipped`` (clipped, or with clipping off outside
    the range) marked differently under ``outside_label``, and ±s/2 whiskers showing the
    rounding bound around each reconstruction."""
    fig = go.Figure()
    if levels is not None:
        fig.add_scatter(
            x=levels,
            y=np.zeros(len(levels)),
            mode="markers",
            name="representable levels (shelves)",
            marker=dict(symbol="line-ns", size=22, line=dict(width=2, color=MUTED)),
            hovertemplate="shelf at %{x:.6g}<extra></extra>",
        )
    seg_x, seg_y = [], []
    for a, b in zip(x, x_hat, strict=True):
        seg_x += [a, b, None]
        seg_y += [1, 0, None]
    fig.add_scatter(x=seg_x, y=seg_y, mode="lines", line=dict(color=MUTED, width=1), showlegend=False, hoverinfo="skip")
    ok = ~clipped
    err = x_hat - x
    hover = [
        f"x = {a:.6g}<br>x/s = {a / scale:.6g}<br>stored q = {k}<br>x̂ = {b:.6g}<br>error x̂ − x = {e:+.4g}"
        for a, k, b, e in zip(x, q, x_hat, err, strict=True)
    ]
    hover = np.array(hover, dtype=object)
    show_text = len(x) <= 30
    for mask, name, color, symbol in (
        (ok, "your values", CACHED, "circle"),
        (clipped, outside_label, NEW_WORK, "x"),
    ):
        if not mask.any():
            continue
        fig.add_scatter(
            x=x[mask],
            y=np.ones(mask.sum()),
            mode="markers",
            name=name,
            marker=dict(size=13, color=color, symbol=symbol),
            hovertemplate="%{customdata}<extra></extra>",
            customdata=hover[mask],
        )
        fig.add_scatter(
            x=x_hat[mask],
            y=np.zeros(mask.sum()),
            mode="markers+text" if show_text else "markers",
            marker=dict(size=12, color=color, symbol="square"),
            showlegend=False,
            text=[f"q={k}" for k in q[mask]],
            textposition="bottom center",
            error_x=dict(type="constant", value=scale / 2, color=color, thickness=1.5, width=6),
            hovertemplate="%{customdata}<extra></extra>",
            customdata=hover[mask],
        )
    lo = min(float(x.min()), float(x_hat.min()), float(levels.min()) if levels is not None else np.inf)
    hi = max(float(x.max()), float(x_hat.max()), float(levels.max()) if levels is not None else -np.inf)
    pad = max(scale, (hi - lo) * 0.05)
    fig.update_layout(
        template=TEMPLATE,
        height=330,
        title=dict(text=title),
        legend=dict(orientation="h", y=-0.3),
        xaxis=dict(title="value", range=[lo - pad, hi + pad], zeroline=True),
        yaxis=dict(range=[-0.6, 1.4], tickvals=[0, 1], ticktext=["stored (shelf)", "original"], showgrid=False),
    )
    return fig


def fig_bits_per_weight(group_sizes: list[int], curves: dict[str, list[float]]) -> go.Figure:
    """Effective bits per weight against group size, one line per format."""
    fig = go.Figure()
    palette = [CACHED, NEW_WORK, "#009e73", "#cc79a7"]
    for (name, ys), color in zip(curves.items(), palette, strict=False):
        fig.add_scatter(
            x=group_sizes,
            y=ys,
            mode="lines+markers",
            name=name,
            line=dict(color=color, width=2),
            hovertemplate="group of %{x}: %{y:.3f} bits per weight<extra></extra>",
        )
    fig.update_layout(
        template=TEMPLATE,
        height=330,
        legend=dict(orientation="h", y=-0.35),
        title=dict(text="Scales cost bits: effective bits per weight"),
        xaxis=dict(title="group size (weights per scale, log scale)", type="log", tickvals=group_sizes),
        yaxis=dict(title="bits per weight"),
    )
    return fig


def fig_quant_sweep(
    labels: list[str], bits: list[int], perplexity: list[float], changed: list[float], reference_ppl: float, title: str
) -> go.Figure:
    """Perplexity and greedy-change rate against bit width, the float model as a reference line."""
    fig = go.Figure()
    fig.add_scatter(
        x=bits,
        y=perplexity,
        mode="lines+markers",
        name="validation perplexity",
        line=dict(color=CACHED, width=3),
        customdata=labels,
        hovertemplate="%{customdata}: perplexity %{y:.4f}<extra></extra>",
    )
    fig.add_scatter(
        x=bits,
        y=[c * 100 for c in changed],
        mode="lines+markers",
        name="greedy token changed (%)",
        yaxis="y2",
        line=dict(color=NEW_WORK, width=3, dash="dot"),
        customdata=labels,
        hovertemplate="%{customdata}: %{y:.2f}% of positions<extra></extra>",
    )
    fig.add_hline(
        y=reference_ppl,
        line=dict(color=MUTED, dash="dash"),
        annotation_text=f"float32: {reference_ppl:.3f}",
        annotation_position="top left",
    )
    fig.update_layout(
        template=TEMPLATE,
        height=380,
        title=dict(text=title),
        legend=dict(orientation="h", y=-0.3),
        xaxis=dict(title="bits per stored value", autorange="reversed", dtick=1),
        yaxis=dict(title="perplexity (lower is better)"),
        yaxis2=dict(
            title="greedy changed (% of positions)", overlaying="y", side="right", rangemode="tozero", showgrid=False
        ),
    )
    return fig


# ---- latency timeline (Figure 30.1) ---------------------------------------------------------------


def fig_timeline(rows: list[dict], title: str) -> go.Figure:
    """Requests on one clock. ``rows``: dicts with ``name`` (user text), ``arrival``,
    ``prefill_start``, ``emissions`` (ms) and ``cache`` (positions after each pass). Queue and
    prefill are bars; each emitted token is a marker labelled with the cache length."""
    fig = go.Figure()
    # Long names would squash the plot: keep 30 characters (and make them unique).
    names = [
        safe(f"{i + 1}. " + (r["name"] if len(r["name"]) <= 30 else r["name"][:29] + "…")) for i, r in enumerate(rows)
    ]
    for r, name in zip(rows, names, strict=True):
        first = r["emissions"][0] if r["emissions"] else r["prefill_start"]
        fig.add_bar(
            y=[name],
            x=[r["prefill_start"] - r["arrival"]],
            base=[r["arrival"]],
            orientation="h",
            marker_color="#dddddd",
            # Bars hang below the row's centre line (the y axis is reversed), so the token labels
            # above the markers on that line never sit on top of a bar.
            width=0.4,
            offset=0,
            name="queue",
            legendgroup="queue",
            showlegend=r is rows[0],
            hovertemplate="queue: %{x:.2f} ms<extra></extra>",
        )
        fig.add_bar(
            y=[name],
            x=[first - r["prefill_start"]],
            base=[r["prefill_start"]],
            orientation="h",
            marker_color=CACHED,
            width=0.4,
            offset=0,
            name="prefill → first token",
            legendgroup="prefill",
            showlegend=r is rows[0],
            hovertemplate="prefill to first token: %{x:.2f} ms<extra></extra>",
        )
        if r["emissions"]:
            text = [str(c) for c in r["cache"]] if len(r["emissions"]) <= 25 else None
            fig.add_scatter(
                y=[name] * len(r["emissions"]),
                x=r["emissions"],
                mode="markers+text" if text else "markers",
                text=text,
                textposition="top center",
                name="token emitted (label: cached positions after the pass)",
                legendgroup="tok",
                showlegend=r is rows[0],
                marker=dict(color=NEW_WORK, size=11, symbol="diamond"),
                customdata=r["cache"],
                hovertemplate="emitted at %{x:.2f} ms<br>cache: %{customdata} positions<extra></extra>",
            )
        else:
            fig.add_annotation(
                y=name,
                x=r["prefill_start"],
                text="error: no tokens",
                showarrow=False,
                xanchor="left",
                font=dict(color=NEW_WORK),
            )
    fig.update_layout(
        template=TEMPLATE,
        barmode="overlay",
        height=230 + 60 * len(rows),
        title=dict(text=title),
        legend=dict(orientation="h", y=1.0, yanchor="bottom", x=0),
        margin=dict(t=90),
        xaxis=dict(title="time (ms)", rangemode="tozero"),
        yaxis=dict(autorange="reversed", type="category"),
    )
    return fig


def fig_cache_over_time(cache_bytes: list[int], window_bytes: int, title: str) -> go.Figure:
    """KV-cache bytes after each forward pass, with the window's full size as a line."""
    fig = go.Figure(
        go.Scatter(
            x=list(range(1, len(cache_bytes) + 1)),
            y=cache_bytes,
            mode="lines+markers",
            line=dict(color=CACHED, width=3),
            name="KV cache",
            hovertemplate="pass %{x}: %{y:,} bytes<extra></extra>",
        )
    )
    fig.add_hline(
        y=window_bytes,
        line=dict(color="black", dash="dash"),
        annotation_text="window full",
        annotation_position="bottom right",
    )
    fig.update_layout(
        template=TEMPLATE,
        height=300,
        title=dict(text=title),
        xaxis=dict(title="forward pass (1 = prefill)"),
        yaxis=dict(title="KV cache (bytes)", rangemode="tozero", tickformat=",.0f"),
    )
    return fig


# ---- batching --------------------------------------------------------------------------------------


def fig_batch_cache(names: list[str], lengths: list[int], s_max: int, layout: str) -> go.Figure:
    """Each request's cache row: used positions, and (padded layout) the padding it wastes."""
    fig = go.Figure()
    labels = [safe(n) for n in names]
    fig.add_bar(
        y=labels,
        x=lengths,
        orientation="h",
        marker_color=CACHED,
        name="cached positions (used)",
        hovertemplate="%{y}: %{x} positions<extra></extra>",
    )
    if layout == "padded":
        fig.add_bar(
            y=labels,
            x=[s_max - n for n in lengths],
            base=lengths,
            orientation="h",
            name="padding (wasted)",
            marker=dict(color="#eeeeee", line=dict(color=MUTED, width=1), pattern=dict(shape="/")),
            hovertemplate="%{y}: %{x} padded slots<extra></extra>",
        )
    fig.update_layout(
        template=TEMPLATE,
        barmode="overlay",
        height=120 + 40 * len(names),
        title=dict(text=f"{layout.capitalize()} KV cache, one row per request"),
        legend=dict(orientation="h", y=1.0, yanchor="bottom", x=0),
        margin=dict(t=80),
        xaxis=dict(title="positions (slots)", range=[0, s_max]),
        yaxis=dict(autorange="reversed", type="category"),
    )
    return fig


def fig_batch_speed(rows: list[dict]) -> go.Figure:
    """Output tokens per second against batch size, batched vs one by one."""
    b = [r["batch_size"] for r in rows]
    fig = go.Figure()
    fig.add_scatter(
        x=b,
        y=[r["batched_tokens_per_s"] for r in rows],
        mode="lines+markers",
        name="one batch",
        line=dict(color=NEW_WORK, width=3),
        text=[f"{r['speedup']:.1f}×" for r in rows],
        textposition="top center",
        hovertemplate="B = %{x}: %{y:,.0f} tokens/s (%{text} one by one)<extra></extra>",
    )
    fig.add_scatter(
        x=b,
        y=[r["solo_tokens_per_s"] for r in rows],
        mode="lines+markers",
        name="one by one",
        line=dict(color=CACHED, width=3),
        hovertemplate="B = %{x}: %{y:,.0f} tokens/s<extra></extra>",
    )
    fig.update_layout(
        template=TEMPLATE,
        height=360,
        title=dict(text="Throughput: output tokens per second"),
        legend=dict(orientation="h", y=-0.3),
        xaxis=dict(title="batch size B", type="log", tickvals=b),
        yaxis=dict(title="output tokens / s", rangemode="tozero"),
    )
    return fig


def fig_three_distributions(rows: list[tuple[str, float, float, float]]) -> go.Figure:
    """Grouped bars per token (raw text): target p, draft q, and the speculative samples."""
    labels = [f"{i + 1}. {safe(t)}" for i, (t, _, _, _) in enumerate(rows)]
    fig = go.Figure()
    for j, (name, color) in enumerate((("target p", CACHED), ("draft q", MUTED), ("speculative samples", NEW_WORK))):
        fig.add_bar(
            x=labels,
            y=[r[j + 1] for r in rows],
            name=name,
            marker_color=color,
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
    return fig


def figure_html(fig: go.Figure, include_plotlyjs: bool, div_id: str) -> str:
    """A figure as an HTML fragment (``<div>`` + ``<script>``) for a self-contained file. With
    ``include_plotlyjs`` the plotly.js bundled in the installed ``plotly`` package is inlined
    (~4.8 MB; once per file is enough); otherwise the fragment expects it already loaded. No
    network: no CDN, no MathJax. plotly writes the figure JSON with ``</`` escaped."""
    return pio.to_html(
        fig,
        include_plotlyjs=include_plotlyjs,
        full_html=False,
        div_id=div_id,
        include_mathjax=False,
        config={"displaylogo": False, "responsive": True},
    )
