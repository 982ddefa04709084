"""KV-cache memory and the model-card budget."""

from __future__ import annotations

import plotly.graph_objects as go

from core.viz.theme import CACHED, NEW_WORK, TEMPLATE, described

# The budget's parts: a colour and a pattern each (the legend names them with their GB). The grey is
# light: MUTED came within CIEDE2000 9.9 of the green under simulated deuteranopia.
PART_STYLES = [
    (CACHED, ""),
    (NEW_WORK, "/"),
    ("#bbbbbb", "."),
    ("#009e73", "x"),
]


def fig_kv_variants(names: list[str], totals_bytes: list[int], labels: list[str], chosen: str | None) -> go.Figure:
    """KV bytes of the same model as MHA / GQA / MQA (bars), the current one marked.

    ``labels``: the byte figures as text (the caller picks the unit)."""
    fig = go.Figure(
        go.Bar(
            x=names,
            y=[float(t) for t in totals_bytes],
            marker=dict(  # the current sharing: colour and hatching, not colour alone
                color=[NEW_WORK if n == chosen else CACHED for n in names],
                pattern=dict(shape=["/" if n == chosen else "" for n in names]),
            ),
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
    return described(fig, describe_kv_variants(names, labels, chosen))


def fig_cache_vs_state(series: dict, kv_label: str, state_label: str, t_now: int, kv_now: int) -> go.Figure:
    """One request of a hybrid model: its KV cache growing with T (a line) beside the fixed state of its
    other layers (flat), from ``core.cost.kv_hybrid.growth`` (``series``: "T", "kv", "state", "crossing").
    ``kv_label``/``state_label`` name the two lines ("KV cache: 4 attention layers"); the typed T and its
    KV bytes (``t_now``, ``kv_now``) are marked."""
    t = [float(x) for x in series["T"]]
    hover = "T = %{x:,}: %{y:,} bytes<extra></extra>"
    fig = go.Figure()
    for values, name, line in (
        (series["kv"], kv_label, dict(color=CACHED, width=4)),
        (series["state"], state_label, dict(color=NEW_WORK, width=4, dash="dash")),  # dashed: not colour alone
    ):
        fig.add_scatter(x=t, y=[float(y) for y in values], name=name, mode="lines", line=line, hovertemplate=hover)
    marker = dict(color=CACHED, size=12, symbol="diamond")
    fig.add_scatter(x=[float(t_now)], y=[float(kv_now)], name=f"T = {t_now:,} typed", mode="markers", marker=marker)
    cross = series["crossing"]
    if cross is not None and cross <= series["T"][-1]:
        fig.add_annotation(
            x=float(cross), y=float(series["state"][0]), text=f"equal at T = {cross:,}", showarrow=True, arrowhead=2,
            ax=40, ay=-40, xanchor="left", bgcolor="white",
        )  # fmt: skip
    fig.update_layout(
        template=TEMPLATE,
        height=340,
        title=dict(text="The cache grows with T; the state does not"),
        xaxis=dict(title="T: positions in the request", rangemode="tozero", tickformat=",.0f"),
        yaxis=dict(title="bytes (one request)", rangemode="tozero", tickformat=",.3s"),
        legend=dict(x=0.01, y=0.99, xanchor="left", yanchor="top", bgcolor="rgba(255,255,255,0.85)"),
        margin=dict(t=50),
    )
    return described(fig, describe_cache_vs_state(series, kv_label, state_label))


def describe_cache_vs_state(series: dict, kv_label: str, state_label: str) -> str:
    """Text alternative of ``fig_cache_vs_state``: both lines' bytes at the ends, and where they meet."""
    end, cross = series["T"][-1], series["crossing"]
    meet = (
        f"; the cache holds as many bytes as the state from T = {cross:,} on"
        if cross is not None
        else "; the cache stays below the state"
    )
    return (
        f"One request: {kv_label} grows from 0 bytes at T = 0 to {series['kv'][-1]:,} bytes at T = {end:,}; "
        f"{state_label} stays at {series['state'][-1]:,} bytes at every T{meet}."
    )


def fig_memory_budget(parts: dict[str, float], budget_gb: float, labels: dict[str, str] | None = None) -> go.Figure:
    """One stacked bar of memory parts (GB = 10⁹ bytes) against a budget line. ``labels``: each
    part's size as text for the legend (default: two decimals of GB; a 2 MB part would read 0.00)."""
    fig = go.Figure()
    for (name, gb), (color, pattern) in zip(parts.items(), PART_STYLES, strict=False):
        fig.add_bar(
            x=[gb],
            y=["needed"],
            orientation="h",
            name=f"{name}: {labels[name] if labels else f'{gb:,.2f} GB'}",
            marker=dict(color=color, pattern=dict(shape=pattern)),
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
    return described(fig, describe_memory_budget(parts, budget_gb, labels))


def describe_kv_variants(names: list[str], labels: list[str], chosen: str | None) -> str:
    """Text alternative of ``fig_kv_variants``: each sharing's KV bytes, the current one named."""
    items = [
        f"{n}: {lab}" + (" (the current setting)" if n == chosen else "") for n, lab in zip(names, labels, strict=True)
    ]
    return "KV cache of the same model by KV-head sharing: " + "; ".join(items) + "."


def describe_memory_budget(parts: dict[str, float], budget_gb: float, labels: dict[str, str] | None = None) -> str:
    """Text alternative of ``fig_memory_budget``: the parts (as ``labels`` gives them, else GB to two
    decimals), their sum, the budget, spare or over."""
    total = sum(parts.values())
    verdict = f"{_gb(budget_gb - total)} spare" if total <= budget_gb else f"{_gb(total - budget_gb)} over the budget"
    items = " + ".join(f"{name} {labels[name] if labels else _gb(gb)}" for name, gb in parts.items())
    return f"Needed: {items} = {_gb(total)}, against a budget of {_gb(budget_gb)}: {verdict}."


def _gb(x: float) -> str:
    """``x`` GB to two decimals, in MB or kB (10⁶, 10³ bytes) below 0.1 GB: a small model's 0.0015 GB
    would read "0.00 GB"."""
    if abs(x) >= 0.1:
        return f"{x:,.2f} GB"
    return f"{x * 1e3:,.2f} MB" if abs(x) >= 1e-4 else f"{x * 1e6:,.2f} kB"
