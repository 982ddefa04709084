"""Loaded by every replica that ``bench.gc_pauses`` starts (it puts this folder first on their
PYTHONPATH): writes each full (generation 2) garbage collection's pause to
``$BENCH_GC_LOG/<pid>.txt``; with ``BENCH_GC_NOFREEZE`` set, ``gc.freeze`` does nothing, so the
same run measures the app as it was before ``heap.settle`` froze anything. Never loaded by the app
itself; tests/bench/test_gc_pauses.py loads it in a child process of its own."""

import gc
import os
import time

if os.environ.get("BENCH_GC_NOFREEZE"):
    gc.freeze = lambda: None

if os.environ.get("BENCH_GC_LOG"):
    _start = [0.0]
    _path = os.path.join(os.environ["BENCH_GC_LOG"], f"{os.getpid()}.txt")

    def _pause(phase: str, info: dict) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            _start[0] = time.perf_counter()
            return
        with open(_path, "a", encoding="utf-8") as f:  # a few lines per lesson: opened each time
            f.write(f"{time.time():.3f} {(time.perf_counter() - _start[0]) * 1000:.1f} {info['collected']}\n")

    gc.callbacks.append(_pause)
