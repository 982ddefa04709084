"""The formats' numbers put into words and a table: ``explain`` (the fastest format, its kernel,
where its step's time goes, and which formats read fewer bytes than float32 yet took longer) and
``format_rows`` (the formats table), both from ``measure.FormatRow``s.
"""

from __future__ import annotations

from core.evaluate.format_speed.kernels import DEQUANTIZING, KERNELS
from core.evaluate.format_speed.measure import FormatRow


def _why(r: FormatRow, bandwidth_gbs: float) -> str:
    """Where a format's step goes, from its numbers: its weight products' rate against the memory's,
    and the time outside them."""
    rate = r.products_bytes / r.products_ms / 1e6  # GB/s of stored weights through the products
    bandwidth_gbs = r.bandwidth(bandwidth_gbs)
    if r.fmt in DEQUANTIZING:
        how = f"the products {r.products_ms:.2f} ms: each writes a float32 copy of its weights before multiplying"
    elif rate < bandwidth_gbs / 1.5:
        how = (
            f"the products {r.products_ms:.2f} ms, {rate:.1f} GB/s of weights against the memory's "
            f"{bandwidth_gbs:.1f}: {KERNELS[r.fmt]} does not keep the memory busy here"
        )
    else:
        how = f"the products {r.products_ms:.2f} ms, {rate:.1f} GB/s of weights: near the memory's {bandwidth_gbs:.1f}"
    return how + f"; the rest of the step {max(r.ms - r.products_ms, 0):.2f} ms"


def explain(rows: list[FormatRow], bandwidth_gbs: float, threads: int, noise: float = 0.15) -> str:
    """A sentence from the numbers, for the whole decode step (the figure "Fewer bits on two machines" times the
    weight products alone, and says so): the fastest format here and its kernel, how it compares with
    float32, where its time goes (the weight products, timed alone in the same rounds, and the rest of
    the step: attention, norms, output head, the many small operations), and which formats read fewer
    bytes than float32 yet took longer by more than ``noise`` (the runs' agreement target), and why."""
    by = {r.fmt: r for r in rows}
    fastest = min(rows, key=lambda r: r.ms)
    f32 = by.get("float32")
    out = (
        f"Fastest here for the whole decode step: {fastest.fmt} at {fastest.ms:.2f} ms per step "
        f"({KERNELS[fastest.fmt]}), "
        f"{fastest.floor_ratio(bandwidth_gbs):.1f}× its byte floor"
    )
    if f32 is not None and fastest is not f32:
        gain = f32.ms / fastest.ms
        out += (
            f"; {gain:.2f}× the speed of float32 ({f32.ms:.2f} ms) while reading {fastest.bytes / f32.bytes:.2f}× "
            + (
                "its bytes"
                if gain > 1 + noise
                else f"its bytes, which is within the {noise:.0%} run-to-run noise: a tie"
            )
        )
    out += f" ({_why(fastest, bandwidth_gbs)})."
    if f32 is not None:
        slower = sorted((r for r in rows if r.bytes < f32.bytes and r.ms > f32.ms * (1 + noise)), key=lambda r: -r.ms)
        if slower:
            said = "; ".join(f"{r.fmt} {r.ms:.2f} ms ({_why(r, bandwidth_gbs)})" for r in slower)
            out += f" Fewer bytes, yet slower than float32 ({f32.ms:.2f} ms): {said}."
    return out + f" One token at a time, {threads} torch thread{'s' if threads != 1 else ''}."


def format_rows(rows: list[FormatRow], bandwidth_gbs: float) -> list[dict]:
    """The formats table: bytes read per step, median ms, tokens/s, time ÷ byte floor, the spread of
    the step's times (interquartile range ÷ median), max |Δlogit|."""
    return [
        {
            "format": r.fmt,
            "MB per step": round(r.bytes / 1e6, 3),
            "ms per step": round(r.ms, 3),
            "weight products ms": round(r.products_ms, 3),
            "tokens/s": round(r.tokens_per_s, 1),
            "× byte floor": round(r.floor_ratio(bandwidth_gbs), 2),
            "spread": round(r.spread, 2),
            "max |Δlogit|": float(f"{r.max_dlogit:.3g}"),
        }
        for r in rows
    ]
