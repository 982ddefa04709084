"""This machine's roofline, measured: memory read bandwidth, peak matmul rate, and a model's
prefill and decode passes placed on it. Results are kept per machine in a JSON file.

- Bandwidth: a float32 matrix-vector product over a 64 MiB matrix (twice the 32 MiB L3 here), so
  every byte comes from memory: bytes = the matrix's, once; a copy of the same size is also timed
  (read + write). The roofline's slope is the matvec's rate: it is how a decode step reads.
- Peak: a square float32 GEMM (n = 1,024: 2.1 GFLOP), 2·n³ FLOPs.
- Passes: ``core.cost.step_traffic`` gives each pass's FLOPs and bytes; the clock gives its time.

Every measurement runs once untimed, then all of a run's measurements repeat side by side in rounds,
the order turning each round (``rounds_ms``), until the time budget is spent (at least
``MIN_REPEATS`` rounds); each reports its median and its spread (interquartile range ÷ median)
(docs/ARCHITECTURE.md "Measured sections warm up and repeat"). Side by side, the bandwidth that
gives a pass its floor is measured under the same load as the pass. The cache file lives in
``$XDG_CACHE_HOME/inference-explainer/`` (default ``~/.cache/``), never in the source tree, keyed
by CPU model, torch version, thread count and the model's shape; it keeps the last two runs, so
the page can say how well they agree.
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


def rounds_ms(
    fns: dict[str, Callable[[], object]],
    seconds: float,
    min_rounds: int = MIN_REPEATS,
    max_rounds: int = 200,
    progress: Callable[[float, str], None] | None = None,
) -> dict[str, list[float]]:
    """Each of ``fns``' times in ms by ``clock()``, measured side by side: each runs once untimed
    (its warm-up), then rounds repeat until ``seconds`` of wall time have passed (at least
    ``min_rounds``, at most ``max_rounds``). In a round every function runs once, the order turning
    each round (A B C, B C A, C A B …), so a burst of other work on the machine hits all alike
    rather than whichever ran during it. Each run follows others, never itself: a model smaller
    than the 32 MiB L3 cache is read from memory each time, as its byte floor assumes, not from the
    cache its own previous run filled (the 64 MiB matvec between them evicts it)."""
    now, _ = clock()
    names = list(fns)
    for name in names:
        fns[name]()
    out: dict[str, list[float]] = {name: [] for name in names}
    start, k = time.perf_counter(), 0
    while k < max_rounds and (k < min_rounds or time.perf_counter() - start < seconds):
        for name in names[k % len(names) :] + names[: k % len(names)]:
            t0 = now()
            fns[name]()
            out[name].append((now() - t0) * 1000.0)
        k += 1
        if progress is not None:
            progress(min(1.0, (time.perf_counter() - start) / max(seconds, 1e-9)), f"round {k}")
    return out


def spread(times: list[float]) -> float:
    """How widely ``times`` scatter: the interquartile range over the median (0.1 = the middle half
    of the times lies within 10% of the median's size)."""
    q1, _, q3 = statistics.quantiles(times, n=4) if len(times) > 1 else (times[0],) * 3
    return (q3 - q1) / statistics.median(times)


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


def run_medians(run: dict) -> dict[str, float]:
    """Every median a kept run holds, by name: bandwidth, peak, each pass's ms, each format's ms."""
    r = run["roofline"]
    out = {"bandwidth GB/s": r["bandwidth_gbs"], "copy GB/s": r["copy_gbs"], "peak GFLOP/s": r["peak_gflops"]}
    out |= {Roofline.from_dict(r).points[i].label: p["ms"] for i, p in enumerate(r["points"])}
    out |= {f["fmt"]: f["ms"] for f in run.get("formats", [])}
    return out


def run_ratios(run: dict) -> dict[str, float]:
    """Every time of a kept run over its floor from the same run's bandwidth and peak: each pass's
    "× floor" and each format's "× byte floor". Other work on the machine slows a step and the
    matvec that gives its floor alike, so these move less from run to run than the times do."""
    roof = Roofline.from_dict(run["roofline"])
    out = {p.label: p.ms / p.floor_ms(roof.bandwidth_gbs, roof.peak_gflops) for p in roof.points}
    for f in run.get("formats", []):
        bw = f.get("bandwidth_gbs", float("nan"))
        out[f["fmt"]] = f["ms"] / (f["bytes"] / (bw if bw == bw else roof.bandwidth_gbs) / 1e6)
    return out


def run_agreement(runs: list[dict], ratios: bool = False) -> tuple[float, str] | None:
    """For the last two kept runs: the largest relative difference of their shared medians (with
    ``ratios``, of their times over their floors, ``run_ratios``) and its name."""
    if len(runs) < 2:
        return None
    of = run_ratios if ratios else run_medians
    a, b = of(runs[-2]), of(runs[-1])
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
