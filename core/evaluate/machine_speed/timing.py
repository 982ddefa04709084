"""How everything here is timed: ``clock`` (this thread's CPU time with one torch thread, else the
wall clock), ``repeat_ms`` (one function, warmed up, repeated for a budget), ``rounds_ms`` (several
side by side, the order turning each round, at least ``MIN_REPEATS`` rounds) and ``spread`` (the
interquartile range over the median).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch

MIN_REPEATS = 3


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
