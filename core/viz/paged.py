"""Paged KV cache: the physical block pool, each request's block table, static vs continuous batching.

A block is a rectangle; the coloured part is how many of its positions are filled (left to right),
so the unused tail of a request's last block — internal fragmentation — shows as blank. A block
held by several requests is hatched and labelled with how many share it (not colour alone); a free
block is an empty outline.
"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.serving.paged import PagedKVCache
from core.serving.paged_presets import PolicyRun
from core.serving.scheduler import Request
from core.text import plural
from core.viz.theme import CACHED, MUTED, NEW_WORK, TEMPLATE, TEXT, described, safe

# Okabe-Ito (colour-blind safe), one per request in order, with a light green in place of its black: the
# grey used before came within CIEDE2000 8 of the pink under simulated deuteranopia; now every pair,
# the shared blocks' grey included, stays ≥ 10 apart under deuteranopia, protanopia and tritanopia
# (tests/core/viz/test_a11y.py). Each block also carries its request's name (not colour alone).
REQUEST_COLOURS = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#A2D18B"]
SHARED_FILL = "#dddddd"
# The labels sit on fills and on blank tails alike: dark text in a solid white halo (offset outlines
# plus a glow). WCAG's Understanding 1.4.3 measures a halo as the text's background: 16:1.
HALO = "1px 1px 0 #fff, -1px -1px 0 #fff, 1px -1px 0 #fff, -1px 1px 0 #fff, 0 0 3px #fff"


def colour_of(i: int) -> str:
    return REQUEST_COLOURS[i % len(REQUEST_COLOURS)]


def _rect(x: float, y: float, frac: float) -> tuple[list, list]:
    """A closed rectangle path for cell (x, y), ``frac`` of its width filled from the left."""
    x0, x1, y0, y1 = x + 0.06, x + 0.06 + 0.88 * frac, y - 0.42, y + 0.42
    return [x0, x1, x1, x0, x0, None], [y0, y0, y1, y1, y0, None]


def _draw(fig: go.Figure, cells: list[dict], names: list[str], label_px: int = 14) -> None:
    """``cells``: dict(x, y, owner: request index | "shared" | None, frac, text, hover)."""
    outline_x, outline_y = [], []
    for c in cells:
        xs, ys = _rect(c["x"], c["y"], 1.0)
        outline_x += xs
        outline_y += ys
    fig.add_scatter(
        x=outline_x, y=outline_y, mode="lines", line=dict(color=MUTED, width=1), name="free (blank)",
        hoverinfo="skip", legendgroup="free",
    )  # fmt: skip
    owners = {c["owner"] for c in cells if c["owner"] is not None}
    groups = sorted(owners - {"shared"}) + (["shared"] if "shared" in owners else [])
    for owner in groups:
        xs, ys = [], []
        for c in cells:
            if c["owner"] == owner and c["frac"] > 0:
                a, b = _rect(c["x"], c["y"], c["frac"])
                xs += a
                ys += b
        shared = owner == "shared"
        fig.add_scatter(
            x=xs, y=ys, mode="lines", fill="toself", line=dict(width=0),
            fillcolor=SHARED_FILL if shared else colour_of(owner),
            fillpattern=dict(shape="x", fgcolor="#9a9a9a", bgcolor=SHARED_FILL, size=12, solidity=0.15)
            if shared
            else None,
            name="shared (hatched, ×n holders)" if shared else safe(names[owner]),
            legendgroup=str(owner), hoverinfo="skip",
        )  # fmt: skip
    fig.add_scatter(
        x=[c["x"] + 0.5 for c in cells], y=[c["y"] for c in cells], mode="text",
        text=[c["text"] for c in cells], hovertext=[c["hover"] for c in cells], hoverinfo="text",
        textfont=dict(size=label_px, color=TEXT, shadow=HALO), showlegend=False,
    )  # fmt: skip


def _owners(cache: PagedKVCache, index: dict[str, int]) -> list[list[int]]:
    """For every physical block, the indices of the requests holding it."""
    owners: list[list[int]] = [[] for _ in range(cache.n_blocks)]
    for r, table in cache.tables.items():
        for b in table:
            owners[b].append(index[r])
    return owners


def figure_height(cache: PagedKVCache, requests: list[Request], columns: int = 8) -> int:
    """One height (px) for the pool and the block tables side by side: rows of the pool or requests."""
    return 50 + max(30 * -(-cache.n_blocks // columns), 24 * len(requests))


def fig_block_pool(cache: PagedKVCache, requests: list[Request], columns: int = 8, label_px: int = 14) -> go.Figure:
    """The physical pool, block #0 top left: each block labelled and coloured by the request holding
    it (hatched and ×n when n requests share it, blank when free), filled in proportion to its positions.
    ``label_px``: the blocks' labels (presenter mode passes a projector's size)."""
    index = {r.name: i for i, r in enumerate(requests)}
    names = [r.name for r in requests]
    owners, fill = _owners(cache, index), cache.block_fill()
    cells = []
    for b in range(cache.n_blocks):
        own, n = owners[b], fill.get(b, 0)
        owner = None if not own else own[0] if len(own) == 1 else "shared"
        label = "" if not own else names[own[0]] if len(own) == 1 else f"×{len(own)}"
        holders = ", ".join(names[i] for i in own) or "free"
        cells.append(
            dict(
                x=b % columns, y=b // columns, owner=owner, frac=n / cache.block_size,
                text=f"#{b} {label}".strip(), hover=f"block #{b}: {holders}; {n} of {cache.block_size} positions",
            )
        )  # fmt: skip
    fig = go.Figure()
    _draw(fig, cells, names, label_px)
    rows = -(-cache.n_blocks // columns)
    fig.update_layout(
        template=TEMPLATE,
        height=figure_height(cache, requests, columns),
        title=dict(text=f"Physical pool: {cache.n_used} of {cache.n_blocks} blocks in use"),
        showlegend=False,  # every block carries its owner's name: the legend would only repeat it
        margin=dict(t=40, l=10, r=10, b=10),
        xaxis=dict(visible=False, range=[0, columns]),
        yaxis=dict(visible=False, range=[rows - 0.5, -0.5]),
    )
    return described(fig, describe_block_pool(cache, requests))


def fig_block_tables(cache: PagedKVCache, requests: list[Request], label_px: int = 14) -> go.Figure:
    """One row per request: its block table (logical block j → physical block #id), the same colours
    as the pool; waiting and finished requests hold no blocks. ``label_px`` as in ``fig_block_pool``."""
    index = {r.name: i for i, r in enumerate(requests)}
    names = [r.name for r in requests]
    owners, cells = _owners(cache, index), []
    for y, r in enumerate(requests):
        table, n = cache.tables.get(r.name, []), len(cache.tokens.get(r.name, []))
        for j, b in enumerate(table):
            filled = min(cache.block_size, n - j * cache.block_size)
            shared = len(owners[b]) > 1
            cells.append(
                dict(
                    x=j, y=y, owner="shared" if shared else index[r.name], frac=filled / cache.block_size,
                    text=f"#{b}" + (f" ×{len(owners[b])}" if shared else ""),
                    hover=f"{r.name}: logical block {j} → physical #{b}, {filled} of {cache.block_size} positions",
                )
            )  # fmt: skip
    width = max([len(cache.tables.get(r.name, [])) for r in requests] + [4])
    fig = go.Figure()
    _draw(fig, cells, names, label_px)
    fig.update_traces(showlegend=False)
    labels = [safe(f"{r.name} · {r.state}") for r in requests]
    fig.update_layout(
        template=TEMPLATE,
        height=figure_height(cache, requests),
        title=dict(text="Block tables: logical block → physical #"),
        margin=dict(t=40, l=10, r=10, b=10),
        xaxis=dict(range=[0, width + 0.05], dtick=1, tick0=0.5, showticklabels=False, zeroline=False),
        yaxis=dict(
            range=[len(requests) - 0.5, -0.5], tickvals=list(range(len(requests))), ticktext=labels, zeroline=False
        ),
    )
    return described(fig, describe_block_tables(cache, requests))


def fig_policy_comparison(runs: dict[str, PolicyRun]) -> go.Figure:
    """Left: output tokens per step under each policy. Right: each request's wait before its prefill
    (steps). Static is dashed/hatched, continuous solid: not colour alone."""
    fig = make_subplots(
        rows=1, cols=2, column_widths=[0.55, 0.45], horizontal_spacing=0.1,
        subplot_titles=("Output tokens per step", "Each request's wait before its prefill"),
    )  # fmt: skip
    style = {"continuous": (NEW_WORK, "solid", ""), "static": (CACHED, "dash", "/")}
    for policy, engine in runs.items():
        colour, dash, pattern = style[policy]
        fig.add_scatter(
            x=[h.step for h in engine.history], y=[h.tokens for h in engine.history], mode="lines",
            line=dict(color=colour, dash=dash, shape="hv", width=2.5), name=f"{policy} ({engine.steps} steps)",
            legendgroup=policy, hovertemplate="step %{x}: %{y} tokens<extra>" + policy + "</extra>", row=1, col=1,
        )  # fmt: skip
        fig.add_bar(
            y=[r.name for r in engine.requests], x=[r.wait for r in engine.requests], orientation="h",
            marker=dict(color=colour, pattern=dict(shape=pattern)), name=policy, legendgroup=policy,
            texttemplate="%{x:.0f}", textposition="outside", cliponaxis=False,
            showlegend=False, hovertemplate="%{y}: waited %{x:.0f} steps<extra>" + policy + "</extra>", row=1, col=2,
        )  # fmt: skip
    fig.update_layout(
        template=TEMPLATE,
        height=360,
        barmode="group",
        legend=dict(orientation="h", y=-0.3, yanchor="top", x=0),
        margin=dict(t=40, b=70),
    )
    fig.update_xaxes(title_text="step", row=1, col=1)
    fig.update_yaxes(title_text="output tokens", rangemode="tozero", row=1, col=1)
    fig.update_xaxes(title_text="steps waited", rangemode="tozero", row=1, col=2)
    fig.update_yaxes(autorange="reversed", type="category", row=1, col=2)
    return described(fig, describe_policy_comparison(runs))


def describe_block_pool(cache: PagedKVCache, requests: list[Request], limit: int = 16) -> str:
    """Text alternative of ``fig_block_pool``: blocks in use, each (the first ``limit``) with its holders
    and filled positions, the number free."""
    index = {r.name: i for i, r in enumerate(requests)}
    names = [r.name for r in requests]
    owners, fill = _owners(cache, index), cache.block_fill()
    used = [b for b in range(cache.n_blocks) if owners[b]]
    items = []
    for b in used[:limit]:
        who = (
            names[owners[b][0]]
            if len(owners[b]) == 1
            else f"shared by {len(owners[b])} ({', '.join(names[i] for i in owners[b])})"
        )
        items.append(f"#{b} {who}, {fill.get(b, 0)} of {cache.block_size} positions")
    more = f"; {len(used) - limit} more in the table" if len(used) > limit else ""
    listed = (": " + "; ".join(items) + more) if items else ""
    return f"Physical pool: {len(used)} of {cache.n_blocks} blocks in use{listed}; {cache.n_blocks - len(used)} free."


def describe_block_tables(cache: PagedKVCache, requests: list[Request]) -> str:
    """Text alternative of ``fig_block_tables``: each request's physical blocks in logical order."""
    items = []
    for r in requests:
        table = cache.tables.get(r.name, [])
        blocks = ", ".join(f"#{b}" for b in table) if table else "no blocks"
        items.append(f"{r.name} ({r.state}): {blocks}")
    return "Block tables, logical block 0 first: " + "; ".join(items) + "."


def describe_policy_comparison(runs: dict[str, PolicyRun]) -> str:
    """Text alternative of ``fig_policy_comparison``: per policy the steps, tokens and waits."""
    items = []
    for policy, run in runs.items():
        waits = [r.wait for r in run.requests]
        tokens = sum(h.tokens for h in run.history)
        low, high = min(waits), max(waits)
        waited = (
            "no request waited before its prefill"
            if high == 0
            else f"each request waited {low:.0f} steps before its prefill"
            if low == high
            else f"each request waited {low:.0f}–{high:.0f} steps before its prefill"
        )
        items.append(f"{policy}: {plural(tokens, 'output token')} in {plural(run.steps, 'step')}, {waited}")
    return "; ".join(items) + "."
