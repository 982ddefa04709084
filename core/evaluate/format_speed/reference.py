"""Fewer bits on two machines (Ch. 30 §30.6: "fewer stored bits do not automatically mean every operation runs
faster"): the reference GPU measurement the app ships (``assets/reference/gpu_fewer_bits.json``: an H200, with
where, when and how it was measured) beside this machine's formats (``measure.FormatRow``), each as speed
against bfloat16, and the lesson each machine's numbers teach, in sentences made from those numbers.

The reference is data measured elsewhere: every sentence and label that shows it says so, with its provenance.
``python -m bench.roofline --device cuda`` measures the same table again on a GPU.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from core.evaluate.format_speed.measure import FormatRow
from core.model.shipped import ASSETS

REFERENCE = ASSETS / "reference" / "gpu_fewer_bits.json"


@dataclass(frozen=True)
class GpuRow:
    """One row of the reference table: a model shape at batch ``batch`` in ``fmt``; weight MiB, the step's
    median ms, its byte floor (weight bytes ÷ copy bandwidth) in ms, step ÷ floor, speed against bfloat16."""

    model: str
    batch: int
    fmt: str
    weights_mib: float
    step_ms: float
    floor_ms: float
    over_floor: float
    vs_bf16: float


@dataclass(frozen=True)
class GpuReference:
    """The reference measurement: its provenance (``device``, ``software``, ``when``, ``method``, ``source``,
    ``copy_bandwidth_tbs``, ``measure_again``: the command that measures it again), the model shapes and rows."""

    title: str
    device: str
    software: str
    when: str
    method: str
    source: str
    copy_bandwidth_tbs: float
    measure_again: str
    models: dict[str, str]
    rows: tuple[GpuRow, ...]

    def speed(self, r: GpuRow) -> float:
        """``r``'s speed against bfloat16 at the same model and batch, from the two steps' times (the table's
        "speed vs bf16", unrounded)."""
        return self.row(r.model, r.batch, "bfloat16").step_ms / r.step_ms

    def row(self, model: str, batch: int, fmt: str) -> GpuRow:
        """The row of ``model`` at ``batch`` in ``fmt``; ``KeyError`` when the reference has none."""
        for r in self.rows:
            if (r.model, r.batch, r.fmt) == (model, batch, fmt):
                return r
        raise KeyError((model, batch, fmt))

    @property
    def provenance(self) -> str:
        """Where, when and how, in one sentence (shown with every use of the numbers)."""
        return (
            f"Measured elsewhere, not on this server: {self.device}, {self.software}, on {self.when}; "
            f"copy bandwidth {self.copy_bandwidth_tbs} TB/s. Again on a GPU: `{self.measure_again}`."
        )


def load_reference(path: Path = REFERENCE) -> GpuReference:
    """The shipped reference measurement. Raises ``OSError`` or ``ValueError`` (JSON, a missing field) for a
    file that is not one."""
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = tuple(
        GpuRow(
            r["model"],
            int(r["batch"]),
            r["format"],
            float(r["weights_mib"]),
            float(r["step_ms"]),
            float(r["floor_ms"]),
            float(r["over_floor"]),
            float(r["vs_bf16"]),
        )
        for r in data["rows"]
    )
    keys = ("title", "device", "software", "when", "method", "source", "copy_bandwidth_tbs", "measure_again")
    return GpuReference(*(data[k] for k in keys), dict(data["models"]), rows)


def times(ratio: float) -> str:
    """A speed ratio as a class reads it: "1.7× faster", "7× slower", "224× slower", "the same speed" (within 5%)."""
    if abs(ratio - 1) < 0.05:
        return "the same speed"
    x = ratio if ratio > 1 else 1 / ratio
    return (
        f"{x:.2g}× {'faster' if ratio > 1 else 'slower'}"
        if x < 10
        else f"{x:.0f}× {'faster' if ratio > 1 else 'slower'}"
    )


def gpu_lessons(ref: GpuReference) -> list[str]:
    """What the reference teaches, from its own numbers: the large model at batch 1 (memory-bound: fewer bytes
    through a fast kernel are faster), at batch 64 (compute-bound: the same int4 kernel slower), int8 through a
    generic kernel, and the small model (launch-bound: far above its byte floor at any width)."""
    big, small = list(ref.models)
    b1, b64 = (ref.row(big, b, "int4 weight-only, g64") for b in (1, 64))
    bf1 = ref.row(big, 1, "bfloat16")
    int8 = ref.row(big, 1, "int8 weight-only")
    tiny = ref.row(small, 1, "bfloat16")
    best_small = max((r for r in ref.rows if r.model == small and r.batch == 1), key=ref.speed)
    return [
        f"{big}, batch 1: memory-bound (bfloat16 at {bf1.over_floor:g}× its byte floor), so int4 with about a "
        f"quarter of the bytes is {times(ref.speed(b1))} than bfloat16.",
        f"Batch 64: the same int4 kernel is {times(ref.speed(b64))} than bfloat16: 64 tokens make the products "
        "compute-bound, and dequantizing inside the kernel costs more than the bytes it saves.",
        f"int8 weight-only through a generic kernel: {times(ref.speed(int8))} than bfloat16 at batch 1, with "
        "fp8's bytes: a kernel that does not keep the memory busy.",
        f"{small}: launch-bound, {tiny.over_floor:g}× its byte floor in bfloat16; fewer bits change it by at most "
        f"{ref.speed(best_small):.2f}×.",
    ]


def here_ratios(rows: list[FormatRow]) -> tuple[str, str, list[tuple[str, float]]]:
    """This machine's formats as speed against float32 (the model as loaded, and the formats table's reference;
    the first row when float32 was not timed). Each format's weight products alone (``products_ms``, timed in
    the same rounds: like the reference, which times only the weight products) when every row has them, else its
    whole decode step. Returns (baseline, what was timed, [(format, baseline ms ÷ its ms)]).

    Why not bfloat16, the reference's baseline: on a CPU without bfloat16 matrix units it is the slow format
    (on this project's server its products took twice float32's time), and against it every format looks fast;
    against float32 the chapter's point shows: half the bytes, yet slower."""
    by = {r.fmt: r for r in rows}
    base = "float32" if "float32" in by else rows[0].fmt
    products = _products(rows)
    ms = {r.fmt: r.products_ms if products else r.ms for r in rows}
    what = "the block projections of one decode step, timed alone" if products else "one whole decode step"
    return base, what, [(r.fmt, ms[base] / ms[r.fmt]) for r in rows]


def here_lesson(rows: list[FormatRow]) -> str:
    """What this machine's formats teach, from their numbers: the fastest and the slowest against the baseline,
    and how many formats read fewer bytes than the baseline yet ran slower."""
    base, _, ratios = here_ratios(rows)
    by = {r.fmt: r for r in rows}
    fast, slow = max(ratios, key=lambda p: p[1]), min(ratios, key=lambda p: p[1])
    fewer_slower = [f for f, x in ratios if by[f].bytes < by[base].bytes and x < 0.95]
    out = f"{_timed(rows)}: fastest here {fast[0]}, {times(fast[1])} than {base}; slowest: {slow[0]}, {times(slow[1])}."
    if fewer_slower:
        out += f" Fewer bytes than {base} yet slower: {', '.join(fewer_slower)}."
    return out


def gpu_headline(ref: GpuReference) -> str:
    """The reference's lesson in one line: the same int4 kernel at batch 1 and at batch 64 on the large model."""
    big = next(iter(ref.models))
    b1, b64 = (ref.speed(ref.row(big, b, "int4 weight-only, g64")) for b in (1, 64))
    return f"int4 vs bfloat16: {times(b1)} at batch 1, {times(b64)} at batch 64"


def here_headline(rows: list[FormatRow]) -> str:
    """This machine's lesson in one line: its fastest and slowest format against the baseline."""
    base, _, ratios = here_ratios(rows)
    fast, slow = max(ratios, key=lambda p: p[1]), min(ratios, key=lambda p: p[1])
    what = "weight products" if _products(rows) else "whole step"
    return f"{what} vs {base}: {fast[0].split(' (')[0]} {times(fast[1])}, {slow[0].split(' (')[0]} {times(slow[1])}"


def _products(rows: list[FormatRow]) -> bool:
    """Whether every row has its weight products timed (``here_ratios`` then compares those)."""
    return all(math.isfinite(r.products_ms) and r.products_ms > 0 for r in rows)


def _timed(rows: list[FormatRow]) -> str:
    """What this machine's comparison times, as the start of its sentence."""
    return "Weight products alone, as the reference times them" if _products(rows) else "Whole decode step"
