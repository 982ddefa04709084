"""The roofline measured: the bandwidth (a 64 MiB matvec, and a copy), the peak (an n × n GEMM) and
a model's prefill and decode ``passes``, each a ``Point`` on the ``Roofline``; ``measure_roofline``
times them all side by side (``timing.rounds_ms``). Also the table beside it (``point_rows``) and the
passes' intensities counted before anything is timed (``counted``).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import torch

from core.cost.step_traffic import step_bytes, step_flops
from core.decode.kv_cache import KVCache
from core.evaluate.machine_speed.timing import clock, repeat_ms, rounds_ms, spread
from core.model.model import GPT

BANDWIDTH_SHAPE = (4096, 4096)  # float32: 64 MiB
GEMM_N = 1024


@dataclass(frozen=True)
class Point:
    """One pass on the roofline: ``kind`` "decode" or "prefill", ``batch`` rows, ``new`` positions per
    row, ``context`` positions attended; median ``ms`` and its repeats; FLOPs and bytes counted."""

    kind: str
    batch: int
    new: int
    context: int
    ms: float
    repeats: int
    flops: int
    bytes: int
    spread: float = float("nan")  # interquartile range ÷ median of its times (``spread``)

    @property
    def label(self) -> str:
        if self.kind == "decode":
            return f"decode B={self.batch}, n={self.context}"
        return f"prefill B={self.batch}, T={self.new}"

    @property
    def intensity(self) -> float:
        return self.flops / self.bytes

    @property
    def gflops(self) -> float:
        return self.flops / self.ms / 1e6

    def floor_ms(self, bandwidth_gbs: float, peak_gflops: float) -> float:
        """The roofline's floor: max(bytes ÷ bandwidth, FLOPs ÷ peak), in ms."""
        return max(self.bytes / bandwidth_gbs / 1e6, self.flops / peak_gflops / 1e6)


@dataclass(frozen=True)
class Roofline:
    """A run: bandwidth (matvec) and copy rate in GB/s, peak in GFLOP/s, the passes, and how."""

    bandwidth_gbs: float
    copy_gbs: float
    peak_gflops: float
    points: tuple[Point, ...]
    threads: int
    seconds: float  # wall time the run took
    when: str
    clock: str = "the wall clock"  # what the times count (``clock()``)
    bandwidth_spread: float = float("nan")  # the matvec's times' interquartile range ÷ median

    @property
    def ridge(self) -> float:
        """Intensity (FLOP/byte) where the slope meets the ceiling."""
        return self.peak_gflops / self.bandwidth_gbs

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Roofline:
        return cls(**{**d, "points": tuple(Point(**p) for p in d["points"])})


def passes(block_size: int) -> list[tuple[str, int, int, int]]:
    """The passes measured, (kind, batch, new, context): decode at B = 1, 4, 16 at half the window
    (at most 256 positions) and B = 1 at the full window (at most 512), and prefills of B = 1."""
    n = min(256, block_size // 2)
    long = min(512, block_size)
    out = [("decode", b, 1, n) for b in (1, 4, 16)]
    if long > n:
        out.append(("decode", 1, 1, long))
    out += [("prefill", 1, t, t) for t in sorted({min(32, n), n})]
    return out


def bandwidth_fns() -> tuple[dict[str, Callable[[], object]], int]:
    """The bandwidth's measurements: a float32 matvec over a 64 MiB matrix ("matvec") and a copy of
    it ("copy"); and the matrix's bytes."""
    w = torch.randn(BANDWIDTH_SHAPE)
    x = torch.randn(BANDWIDTH_SHAPE[1])
    dst = torch.empty_like(w)
    return {"matvec": lambda: torch.mv(w, x), "copy": lambda: dst.copy_(w)}, w.nbytes


def measure_bandwidth(seconds: float) -> tuple[float, float]:
    """(matvec GB/s, copy GB/s) over a 64 MiB float32 matrix, medians, timed side by side."""
    fns, nbytes = bandwidth_fns()
    t = rounds_ms(fns, seconds)
    return nbytes / statistics.median(t["matvec"]) / 1e6, 2 * nbytes / statistics.median(t["copy"]) / 1e6


def gemm_fn() -> Callable[[], object]:
    a, b = torch.randn(GEMM_N, GEMM_N), torch.randn(GEMM_N, GEMM_N)
    return lambda: a @ b


def measure_peak(seconds: float) -> float:
    """Median GFLOP/s of an n × n float32 GEMM (2·n³ FLOPs)."""
    return 2 * GEMM_N**3 / statistics.median(repeat_ms(gemm_fn(), seconds)) / 1e6


@torch.inference_mode()
def pass_fn(model: GPT, batch: int, new: int, context: int) -> Callable[[], object]:
    """One pass of ``model`` as a function: a decode step of ``batch`` rows at ``context`` positions
    (the cache rolled back each time) or a prefill of ``new`` positions into an empty cache."""
    cfg = model.cfg
    cache = KVCache(cfg, batch_size=batch, dtype=model.dtype)
    ids = torch.arange(batch * context).remainder(cfg.vocab_size).view(batch, context)
    start = context - new
    if start:
        model(ids[:, :start], cache)

    @torch.inference_mode()
    def run():
        cache.truncate(start)
        model(ids[:, start:], cache)

    return run


def _point(model: GPT, kind: str, batch: int, new: int, context: int, times: list[float]) -> Point:
    cfg = model.cfg
    f = step_flops(cfg, batch, new, context)["total"]
    dtype = "bfloat16" if model.dtype == torch.bfloat16 else "float32"
    b = step_bytes(cfg, batch, new, context, dtype)["total"]
    return Point(kind, batch, new, context, statistics.median(times), len(times), f, b, spread(times))


def measure_pass(model: GPT, kind: str, batch: int, new: int, context: int, seconds: float) -> Point:
    """Median time of one pass of ``model`` (``pass_fn``), alone."""
    return _point(model, kind, batch, new, context, repeat_ms(pass_fn(model, batch, new, context), seconds))


def measure_roofline(model: GPT, seconds: float, progress: Callable[[float, str], None] | None = None) -> Roofline:
    """Bandwidth, peak and the ``passes`` of ``model``, in about ``seconds``, all timed side by side
    (``rounds_ms``: every round runs each once, the order turning), so the floors and the passes
    they divide meet the same load. ``progress(fraction, what)`` is called as it goes."""
    t0 = time.perf_counter()
    todo = passes(model.cfg.block_size)
    say = progress or (lambda f, what: None)
    say(0.0, "preparing the passes")
    fns, nbytes = bandwidth_fns()
    fns["gemm"] = gemm_fn()
    for kind, b, t, s in todo:
        fns[(kind, b, t, s)] = pass_fn(model, b, t, s)
    say(0.05, "warming up")
    times = rounds_ms(fns, seconds, progress=lambda f, what: say(0.05 + 0.95 * f, f"all side by side, {what}"))
    say(1.0, "done")
    mv = times["matvec"]
    return Roofline(
        nbytes / statistics.median(mv) / 1e6,
        2 * nbytes / statistics.median(times["copy"]) / 1e6,
        2 * GEMM_N**3 / statistics.median(times["gemm"]) / 1e6,
        tuple(_point(model, kind, b, t, s, times[(kind, b, t, s)]) for kind, b, t, s in todo),
        torch.get_num_threads(),
        time.perf_counter() - t0,
        time.strftime("%Y-%m-%d %H:%M"),
        clock()[1],
        spread(mv),
    )


def point_rows(r: Roofline) -> list[dict]:
    """The table beside the roofline: each pass's time, bytes, FLOPs, intensity, GFLOP/s, its bound
    (memory or compute, by which floor is larger), time ÷ floor and the spread of its times
    (interquartile range ÷ median)."""
    out = []
    for p in r.points:
        mem, comp = p.bytes / r.bandwidth_gbs / 1e6, p.flops / r.peak_gflops / 1e6
        out.append(
            {
                "pass": p.label,
                "ms": round(p.ms, 3),
                "MB moved": round(p.bytes / 1e6, 2),
                "MFLOP": round(p.flops / 1e6, 1),
                "FLOP/byte": round(p.intensity, 2),
                "GFLOP/s": round(p.gflops, 2),
                "bound": "memory" if mem >= comp else "compute",
                "× floor": round(p.ms / max(mem, comp), 2),
                "spread": round(p.spread, 2),
            }
        )
    return out


def counted(cfg) -> list[tuple[str, float]]:
    """Each of ``passes``' labels and its arithmetic intensity (FLOP/byte), counted, not measured: where
    each pass will land on the x-axis before anything is timed."""
    out = []
    for kind, b, t, s in passes(cfg.block_size):
        p = Point(kind, b, t, s, 0.0, 0, step_flops(cfg, b, t, s)["total"], step_bytes(cfg, b, t, s)["total"])
        out.append((p.label, p.intensity))
    return out
