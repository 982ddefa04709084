"""The decode stage's figures as data for the browser (drawn by plotly.js in frontend/).

A Step sends one new attention row, not the whole matrix: ``heatmap_full`` is sent once
(Prefill, a layer/head change, a reload), then ``heatmap_row`` per step, so the bytes per Step
grow linearly with the cache (Ch. 19: one cached decode step is linear work; the page should be
too). Shares travel as integers: share × 10,000, rounded (the hover shows three decimals).
Labels are raw text; the browser escapes them for plotly (frontend/plotly_loader.js ``esc``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.cost.counts import kv_cache_bytes
from core.text import show_spaces
from core.viz.theme import CACHED, NEW_WORK

SCALE = 10_000  # shares are sent as round(share × SCALE)


@dataclass(frozen=True)
class StageStyle:
    """Pixel sizes of the stage: heatmap height, the smallest readable row height, the heatmap's
    font size, the next-token bars' height and the right-hand panel's font size (bars, counters,
    badge, KV line). (The browser fits the key labels to the plot's width.)"""

    height: int = 440
    row_px: int = 15
    font: int = 13
    bars_height: int = 300
    panel_font: int = 13

    @classmethod
    def presenter(cls) -> StageStyle:
        # The heatmap's labels are bounded by its 19 px rows; the panel beside it has room, and its
        # labels (the counters' names, the badge, the KV line) at 17 px were 15–16 px on a projector
        # whose text is 21 px.
        return cls(height=650, row_px=19, font=17, bars_height=300, panel_font=20)


def _ints(values) -> list[int]:
    return [int(v) for v in np.rint(np.asarray(values, dtype=np.float64) * SCALE)]


def focus_of(row: np.ndarray) -> int:
    """The key position the newest row attends to most (first one on a tie)."""
    return int(np.nanargmax(row))


def spoken(label: str) -> str:
    """A position label "21: Mira" as "21 ‘Mira’" for a sentence."""
    pos, _, text = label.partition(": ")
    return f"{pos} ‘{text}’"


def describe(where: str, row: np.ndarray, labels: list[str]) -> str:
    """A sentence a screen reader (and everyone) can read: where, what the newest row attends
    to most and how many positions are cached. ``row`` ``(T,)`` is the newest row's shares."""
    T, focus = len(row), focus_of(row)
    return (
        f"{where}: the newest row ({spoken(labels[T - 1])}) puts {row[focus]:.2f} of its attention on position "
        f"{spoken(labels[focus])}; {T} position{'s' if T != 1 else ''} cached."
    )


def _common(fig_id: str, title: str, row: np.ndarray, labels: list[str], style: StageStyle, desc: str) -> dict:
    focus = focus_of(row)
    return {
        "fig": fig_id,
        "title": title,
        "focus": focus,
        "focus_text": f"most attention: {labels[focus]} ({row[focus]:.2f})",
        "desc": desc,
    }


def heatmap_full(
    att: np.ndarray, labels: list[str], new_rows: int, title: str, fig_id: str, style: StageStyle, desc: str
) -> dict:
    """The whole lower triangle: ``att`` ``(T, T)`` (NaN above the diagonal), one raw label per
    position, the last ``new_rows`` rows drawn as this pass's new work."""
    T = att.shape[0]
    return {
        "kind": "full",
        "rows": [_ints(att[i, : i + 1]) for i in range(T)],
        "scale": SCALE,
        "labels": list(labels),
        "new": int(new_rows),
        "height": style.height,
        "row_px": style.row_px,
        "font": style.font,
        "colors": {"new": NEW_WORK, "cached": CACHED},
        **_common(fig_id, title, att[T - 1, :T], labels, style, desc),
    }


def heatmap_row(row: np.ndarray, labels: list[str], title: str, fig_id: str, style: StageStyle, desc: str) -> dict:
    """One Step: the newest row ``(T,)`` (its shares for keys 0 … T−1) and its label; the browser
    already holds the first T − 1 rows (``base``)."""
    T = len(row)
    return {
        "kind": "row",
        "base": T - 1,
        "row": _ints(row),
        "label": labels[T - 1],
        **_common(fig_id, title, row, labels, style, desc),
    }


def next_token_bars(rows: list[tuple[int, str, float]], chosen: int | None, title: str, style: StageStyle) -> dict:
    """The top next tokens ``(id, text, probability)``, largest first, the chosen one marked (colour
    and hatching), spaces visible. The x axis is the probability (0–100 %)."""
    tokens = [show_spaces(t) for _, t, _ in rows]
    top = f"{tokens[0]} ({rows[0][2]:.1%})" if rows else "none"
    return {
        "tokens": tokens,
        "probs": [round(float(p), 4) for _, _, p in rows],
        "chosen": [tid == chosen for tid, _, _ in rows],
        "title": title,
        "height": style.bars_height,
        "font": style.font,
        "colors": {"new": NEW_WORK, "cached": CACHED},
        "desc": f"{title}. Most likely: {top}. "
        + "; ".join(f"{t} {p:.1%}" for t, (_, _, p) in zip(tokens, rows, strict=True)),
    }


def _counters(cached: int, naive: int, layers_x_heads: int) -> list[dict]:
    return [
        {
            "label": "Query-key scores with the KV cache",
            "value": f"{cached:,}",
            "help": f"Per layer and head; × {layers_x_heads} (layers × heads) = {cached * layers_x_heads:,} "
            "in the model.",
        },
        {
            "label": "… by full-prefix recompute",
            "value": f"{naive:,}",
            "delta": f"{naive / cached:.2f}× the cached work",
            "help": "Every step reruns the whole prefix: T(T+1)/2 causal scores per layer and head.",
        },
    ]


def badge_text(badge, checked_step: int | None, step: int, every: int, why: str | None = "model") -> tuple[str, str]:
    """(state, text) of the equivalence badge: ``badge`` (a ``core.decode.equivalence.Equivalence`` for
    the latest checked step ``checked_step``, or None when no step is checked yet) at ``step``; a
    model whose recompute is costly (``why`` "model") or a busy server ("busy") checks every
    ``every`` steps, and the badge says when and why."""
    if step == 0:
        return (
            "info",
            "Prefill is itself the full pass: cached and recomputed logits are compared from the first Step on",
        )
    reason = f"every {every} steps on this model" if why != "busy" else f"every {every} steps while the server is busy"
    if badge is None:
        return "info", f"Not recomputed yet: the check runs {reason} (it is slow)"
    when = "" if checked_step == step else f" (checked at step {checked_step}; {reason})"
    return (
        "ok" if badge.equal else "bad"
    ), f"{'✓' if badge.equal else '✗'} Cached vs recomputed logits: {badge.text}{when}"


def reuse_badge(badge, reused: int, recomputed: int) -> tuple[str, str]:
    """(state, text) of the badge after a Prefill that kept ``reused`` cached positions and
    recomputed ``recomputed``: ``badge`` compares its logits with a fresh prefill of the whole
    prompt (``core.decode.equivalence.Equivalence``; Ch. 30 §30.4, cache validity)."""
    mark = "✓" if badge.equal else "✗"
    return ("ok" if badge.equal else "bad"), (
        f"{mark} {reused:,} cached positions reused, {recomputed:,} recomputed; vs a fresh prefill: {badge.text}"
    )


def panel(bars: dict, scores: tuple[int, int], layers_x_heads: int, badge: tuple[str, str], kv: dict, style) -> dict:
    """The stage's right-hand panel as one payload: the next-token ``bars`` (``next_token_bars``),
    the work counter (query-key scores with the cache and by recompute, per layer and head), the
    equivalence ``badge`` (``badge_text``'s state and text) and the KV line ``kv`` (``kv_line``)."""
    state, text = badge
    return {
        "bars": bars,
        "counters": _counters(*scores, layers_x_heads),
        "badge": {"state": state, "text": text},
        "kv": kv,
        "font": style.panel_font,
    }


def kv_line(
    n_layer: int, n_kv_head: int, head_dim: int, positions: int, bytes_per_value: int, measured: int, capacity: int
):
    """M = 2·B·L·T·H_kv·d·b written out with its value (bytes), beside the bytes measured from the
    cache tensors, and the positions against the context window (Ch. 30 §30.4, Table 30.1)."""
    m = kv_cache_bytes(n_layer, n_kv_head, head_dim, positions, bytes_per_value)["total"]
    return {
        "formula": (
            f"KV cache M = 2·B·L·T·H_kv·d·b = 2 · 1 · {n_layer} · {positions} · {n_kv_head} · {head_dim} · "
            f"{bytes_per_value} = {m:,} B · measured from the cache tensors: {measured:,} B"
        ),
        "positions": positions,
        "capacity": capacity,
        "shelf": f"{positions} of {capacity} positions (the context window); the chosen token waits outside "
        "until the next pass consumes it",
    }


def row_table(row: np.ndarray, labels: list[str]) -> dict[str, list]:
    """The heatmap's newest row as a table (the numbers of its text alternative, ``describe``): each
    key position, its token and the share of the newest row's attention it gets (4 decimals)."""
    positions = [label.partition(": ") for label in labels[: len(row)]]
    return {
        "key position": [int(p) for p, _, _ in positions],
        "token": [show_spaces(t) for _, _, t in positions],
        "share of the newest row's attention": [round(float(v), 4) for v in row],
    }


def bars_table(rows: list[tuple[int, str, float]], chosen: int | None) -> dict[str, list]:
    """The next-token bars as a table: rank, token (spaces visible), probability, whether chosen."""
    return {
        "rank": list(range(1, len(rows) + 1)),
        "token": [show_spaces(t) for _, t, _ in rows],
        "probability": [round(float(p), 4) for _, _, p in rows],
        "chosen": ["yes" if tid == chosen else "" for tid, _, _ in rows],
    }
