"""This machine's roofline, measured: memory read bandwidth, peak matmul rate, and a model's
prefill and decode passes placed on it. Results are kept per machine in a JSON file.

- Bandwidth: a float32 matrix-vector product over a 64 MiB matrix (twice the 32 MiB L3 here), so
  every byte comes from memory: bytes = the matrix's, once; a copy of the same size is also timed
  (read + write). The roofline's slope is the matvec's rate: it is how a decode step reads.
- Peak: a square float32 GEMM (n = 1,024: 2.1 GFLOP), 2·n³ FLOPs.
- Passes: ``core.cost.step_traffic`` gives each pass's FLOPs and bytes; the clock gives its time.

Every measurement runs once untimed, then repeats until its share of the time budget is spent
(at least ``MIN_REPEATS`` times) and reports the median (docs/ARCHITECTURE.md "Measured sections
warm up and repeat"). The cache file lives in ``$XDG_CACHE_HOME/inference-explainer/`` (default
``~/.cache/``), never in the source tree, keyed by CPU model, torch version, thread count and the
model's shape; it keeps the last two runs, so the page can say how well they agree.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from core.cost.step_traffic import step_bytes, step_flops
from core.decode.kv_cache import KVCache
from core.model.model import GPT

MIN_REPEATS = 3
BANDWIDTH_SHAPE = (4096, 4096)  # float32: 64 MiB
GEMM_N = 1024


def clock() -> tuple[Callable[[], float], str]:
    """The clock timings read, and its name. With one torch thread every kernel runs on the calling
    thread, so its CPU time (``time.thread_time``) counts the work and leaves out the time the thread
    waited for a core: on this 2-core machine under a load average of 13, a 64 MiB matvec read
    2.5–2.8 GB/s by the wall clock and 12.5–13.2 GB/s by the thread's CPU time, run after run. With
    more threads the work spreads over threads this one cannot see: the wall clock then."""
    if torch.get_num_threads() == 1:
        return time.thread_time, "this thread's CPU time"
    return time.perf_counter, "the wall clock"


def repeat_ms(fn: Callable[[], object], seconds: float, min_repeats: int = MIN_REPEATS, max_repeats: int = 200):
    """``fn``'s times in ms by ``clock()``: one untimed warm-up, then repeats until ``seconds`` of wall
    time have passed (at least ``min_repeats``, at most ``max_repeats``)."""
    fn()
    now, _ = clock()
    out: list[float] = []
    start = time.perf_counter()
    while len(out) < max_repeats and (len(out) < min_repeats or time.perf_counter() - start < seconds):
        t0 = now()
        fn()
        out.append((now() - t0) * 1000.0)
    return out


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


def measure_bandwidth(seconds: float) -> tuple[float, float]:
    """(matvec GB/s, copy GB/s) over a 64 MiB float32 matrix, medians."""
    w = torch.randn(BANDWIDTH_SHAPE)
    x = torch.randn(BANDWIDTH_SHAPE[1])
    mv = statistics.median(repeat_ms(lambda: torch.mv(w, x), seconds / 2))
    dst = torch.empty_like(w)
    cp = statistics.median(repeat_ms(lambda: dst.copy_(w), seconds / 2))
    return w.nbytes / mv / 1e6, 2 * w.nbytes / cp / 1e6


def measure_peak(seconds: float) -> float:
    """Median GFLOP/s of an n × n float32 GEMM (2·n³ FLOPs)."""
    a, b = torch.randn(GEMM_N, GEMM_N), torch.randn(GEMM_N, GEMM_N)
    return 2 * GEMM_N**3 / statistics.median(repeat_ms(lambda: a @ b, seconds)) / 1e6


@torch.inference_mode()
def measure_pass(model: GPT, kind: str, batch: int, new: int, context: int, seconds: float) -> Point:
    """Median time of one pass of ``model``: a decode step of ``batch`` rows at ``context`` positions
    (the cache rolled back each repeat) or a prefill of ``new`` positions into an empty cache."""
    cfg = model.cfg
    cache = KVCache(cfg, batch_size=batch, dtype=model.dtype)
    ids = torch.arange(batch * context).remainder(cfg.vocab_size).view(batch, context)
    start = context - new
    if start:
        model(ids[:, :start], cache)

    def run():
        cache.truncate(start)
        model(ids[:, start:], cache)

    times = repeat_ms(run, seconds)
    f = step_flops(cfg, batch, new, context)["total"]
    dtype = "bfloat16" if model.dtype == torch.bfloat16 else "float32"
    b = step_bytes(cfg, batch, new, context, dtype)["total"]
    return Point(kind, batch, new, context, statistics.median(times), len(times), f, b)


def measure_roofline(model: GPT, seconds: float, progress: Callable[[float, str], None] | None = None) -> Roofline:
    """Bandwidth, peak and the ``passes`` of ``model``, in about ``seconds`` (each step gets its share;
    each runs at least ``MIN_REPEATS`` times, so a tiny budget still finishes, a little later).
    ``progress(fraction, what)`` is called before each step."""
    t0 = time.perf_counter()
    todo = passes(model.cfg.block_size)
    steps = 3 + len(todo)
    say = progress or (lambda f, what: None)
    say(0.0, "memory bandwidth")
    bw, cp = measure_bandwidth(seconds * 0.25)
    say(1 / steps, "peak matmul rate")
    peak = measure_peak(seconds * 0.2)
    points = []
    for i, (kind, b, t, s) in enumerate(todo):
        say((2 + i) / steps, f"{kind} B={b}, {t} new of {s} positions")
        points.append(measure_pass(model, kind, b, t, s, seconds * 0.55 / len(todo)))
    say(1.0, "done")
    return Roofline(
        bw,
        cp,
        peak,
        tuple(points),
        torch.get_num_threads(),
        time.perf_counter() - t0,
        time.strftime("%Y-%m-%d %H:%M"),
        clock()[1],
    )


# ---- the cache file ---------------------------------------------------------------------------


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/inference-explainer`` (default ``~/.cache/inference-explainer``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "inference-explainer"


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else what ``platform`` says."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def machine_key(model_name: str, cfg) -> dict:
    """What a cached result depends on: the CPU, torch, its threads, and the model's name and shape."""
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "model": model_name,
        "config": json.dumps(cfg.to_dict(), sort_keys=True, default=str),
    }


def cache_path(key: dict) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return cache_dir() / f"speed-{digest}.json"


def load_runs(key: dict) -> list[dict]:
    """The runs kept for ``key`` (oldest first, at most two); [] if none or the file is unreadable."""
    try:
        data = json.loads(cache_path(key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return data.get("runs", []) if data.get("key") == key else []


def save_run(key: dict, run: dict) -> list[dict]:
    """Append ``run`` (a JSON-able dict) to ``key``'s file, keeping the last two; returns them. Written
    to a temporary file first, then renamed, so a reader never sees half a file."""
    runs = [*load_runs(key), run][-2:]
    path = cache_path(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"key": key, "runs": runs}, indent=1), encoding="utf-8")
    tmp.replace(path)
    return runs


def agreement(a: list[float], b: list[float]) -> float:
    """The largest relative difference between two runs' medians, |a − b| ÷ min(a, b)."""
    return max(abs(x - y) / min(x, y) for x, y in zip(a, b, strict=True))


def point_rows(r: Roofline) -> list[dict]:
    """The table beside the roofline: each pass's time, bytes, FLOPs, intensity, GFLOP/s, its bound
    (memory or compute, by which floor is larger) and time ÷ floor."""
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
            }
        )
    return out


def run_medians(run: dict) -> dict[str, float]:
    """Every median a kept run holds, by name: bandwidth, peak, each pass's ms, each format's ms."""
    r = run["roofline"]
    out = {"bandwidth GB/s": r["bandwidth_gbs"], "copy GB/s": r["copy_gbs"], "peak GFLOP/s": r["peak_gflops"]}
    out |= {Roofline.from_dict(r).points[i].label: p["ms"] for i, p in enumerate(r["points"])}
    out |= {f["fmt"]: f["ms"] for f in run.get("formats", [])}
    return out


def run_agreement(runs: list[dict]) -> tuple[float, str] | None:
    """For the last two kept runs: the largest relative difference of their shared medians and its name."""
    if len(runs) < 2:
        return None
    a, b = run_medians(runs[-2]), run_medians(runs[-1])
    shared = [k for k in a if k in b]
    if not shared:
        return None
    worst = max(shared, key=lambda k: abs(a[k] - b[k]) / min(a[k], b[k]))
    return agreement([a[worst]], [b[worst]]), worst


def counted(cfg) -> list[tuple[str, float]]:
    """Each of ``passes``' labels and its arithmetic intensity (FLOP/byte), counted, not measured: where
    each pass will land on the x-axis before anything is timed."""
    out = []
    for kind, b, t, s in passes(cfg.block_size):
        p = Point(kind, b, t, s, 0.0, 0, step_flops(cfg, b, t, s)["total"], step_bytes(cfg, b, t, s)["total"])
        out.append((p.label, p.intensity))
    return out
