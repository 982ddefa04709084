"""The kept runs: the cache file (``$XDG_CACHE_HOME/inference-explainer/``, keyed by ``machine_key``:
CPU, torch, threads, the model), at most two runs each (``load_runs``, ``save_run``), and how well
the last two agree, by their medians or by their times over their floors (``run_agreement``).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from pathlib import Path

import torch

from core.evaluate.machine_speed.roofline import Roofline


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
