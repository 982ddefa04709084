"""Full garbage collections in a class server, without and with ``heap.settle``'s freeze.

``python -m bench.gc_pauses [--replicas 4] [--runs 2] [--quick]``: for each setting, a class server of N
replicas (each replica's first lesson warms it: model, every page's imports), then the hammering
scenario of ``bench.ws_session`` (40 sessions × 20 Steps, no pause) ``--runs`` times. Every full
(generation 2) collection in a replica during those runs is logged by ``bench/gc_hook`` (a
``sitecustomize`` on the replicas' PYTHONPATH; it also turns ``gc.freeze`` into a no-op for the
"not frozen" setting). Prints, per setting: the collections during the runs (not the one each
replica runs as it exits), their longest and median pause (wall time, the GIL held: every session
of that replica waits), and the Step p50 / p95. ``--quick`` (seconds; tests/bench/test_quick_model.py):
the same table from 1 replica and one run of 2 sessions × 3 Steps per setting."""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench.stats import p50_p95
from bench.ws_session import drive

HOOK = Path(__file__).resolve().parent / "gc_hook"
SETTINGS = (("not frozen (gc.freeze a no-op)", True), ("frozen by heap.settle (the app)", False))


def pauses_ms(folder: Path, since: float, until: float = float("inf")) -> list[float]:
    """Pauses (ms) of the full collections logged in ``folder`` between the times ``since`` and
    ``until`` (epoch s). The end matters: a replica stopped with SIGTERM runs one more full
    collection as its interpreter exits, which no student waits for."""
    out = []
    for log in folder.glob("*.txt"):
        for line in log.read_text().splitlines():
            t, ms, _ = line.split()
            if since <= float(t) <= until:
                out.append(float(ms))
    return out


async def one_setting(replicas: int, runs: int, nofreeze: bool, sessions: int = 40, steps: int = 20) -> dict:
    from serve.nginx import free_port
    from serve.replicas import class_server

    folder = Path(tempfile.mkdtemp(prefix="gc-pauses-"))
    path = os.pathsep.join(p for p in (str(HOOK), os.environ.get("PYTHONPATH", "")) if p)  # the hook first
    env = {"PYTHONPATH": path, "BENCH_GC_LOG": str(folder), "BENCH_GC_NOFREEZE": "1" if nofreeze else ""}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the replicas inherit it
    try:
        with class_server(replicas, port=free_port()) as srv:
            for r in srv.replicas:  # warm: the model, every page the lesson visits
                await drive(srv.url, 1, 2, first=90, pin=f"class_replica={r.name}")
            since, step_ms = time.time(), []
            for _ in range(runs):
                step_ms += (await drive(srv.url, sessions, steps, pids=[r.proc.pid for r in srv.replicas]))["step_ms"]
            until = time.time()  # before the replicas stop (and collect once more on their way out)
        pauses = pauses_ms(folder, since, until)
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        shutil.rmtree(folder, ignore_errors=True)
    return {"pauses": pauses, "step": p50_p95(step_ms)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicas", type=int, default=4)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="seconds: 1 replica, one run of 2 sessions × 3 Steps")
    args = ap.parse_args()
    sessions, steps = (2, 3) if args.quick else (40, 20)
    if args.quick:
        args.replicas, args.runs = 1, 1
    print(
        f"{args.replicas} replicas, {args.runs} hammering runs each ({sessions} sessions × {steps} Steps); "
        f"load average before: {os.getloadavg()[0]:.1f}\n"
    )
    print("| setting | full collections | longest / median pause | Step p50 / p95 |\n|---|---:|---:|---:|")
    for name, nofreeze in SETTINGS:
        r = asyncio.run(one_setting(args.replicas, args.runs, nofreeze, sessions, steps))
        p = r["pauses"] or [0.0]
        print(
            f"| {name} | {len(r['pauses'])} | {max(p):.0f} / {statistics.median(p):.0f} ms "
            f"| {r['step'][0]:.0f} / {r['step'][1]:.0f} ms |"
        )


if __name__ == "__main__":
    main()
