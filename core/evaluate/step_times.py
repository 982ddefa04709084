"""Measured decode-step times on this machine: with the KV cache vs full-prefix recompute.

Ch. 19 "The bill per token": one cached step scores n keys (linear); recomputing the prefix
scores n(n+1)/2 pairs (quadratic in attention) and reruns every position through every layer.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from core.decode.generate import decode_one_token, full_forward, prefill
from core.decode.kv_cache import KVCache
from core.model.model import GPT
from core.serving.latency import RequestTrace


@dataclass(frozen=True)
class StepTimes:
    """Median times in ms of one decode step at each context length (positions after the step)."""

    lengths: tuple[int, ...]
    cached_ms: tuple[float, ...]
    naive_ms: tuple[float, ...]
    repeats: int
    threads: int

    def exponents(self) -> tuple[float, float]:
        """Fitted growth k (time ∝ n^k) over the longer half of the lengths: (cached, recompute)."""
        half = len(self.lengths) // 2
        return (
            fit_exponent(self.lengths[half:], self.cached_ms[half:]),
            fit_exponent(self.lengths[half:], self.naive_ms[half:]),
        )

    @property
    def ratio_at_longest(self) -> float:
        """Recompute time ÷ cached time at the longest length."""
        return self.naive_ms[-1] / self.cached_ms[-1]


def _ms(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000.0


def measure_step_times(
    model: GPT, lengths, repeats: int = 5, progress: Callable[[float], None] | None = None
) -> StepTimes:
    """For each context length n: median ms of one cached decode step that makes the cache
    hold n positions, and of one full recompute of n positions. Raises ``ValueError`` for a
    length outside 2..block_size or ``repeats`` < 1."""
    lengths = sorted(set(int(n) for n in lengths))
    if repeats < 1 or not lengths or lengths[0] < 2 or lengths[-1] > model.cfg.block_size:
        raise ValueError(f"lengths must lie in 2..{model.cfg.block_size} and repeats ≥ 1")
    ids = [(7 * i + 3) % model.cfg.vocab_size for i in range(lengths[-1])]
    cache = KVCache(model.cfg, dtype=model.dtype)
    cached, naive = [], []
    for k, n in enumerate(lengths):
        cache.reset()
        prefill(model, ids[: n - 1], cache)

        def one_step(n=n):
            cache.truncate(n - 1)  # undo the previous repeat so every repeat lands at n
            decode_one_token(model, ids[n - 1], cache)

        one_step()  # warm-up
        # Interleave the two paths so a burst of other work on the machine hits both alike.
        pairs = [(_ms(one_step), _ms(lambda n=n: full_forward(model, ids[:n]))) for _ in range(repeats)]
        cached.append(statistics.median(p[0] for p in pairs))
        naive.append(statistics.median(p[1] for p in pairs))
        if progress:
            progress((k + 1) / len(lengths))
    return StepTimes(tuple(lengths), tuple(cached), tuple(naive), repeats, torch.get_num_threads())


def fit_exponent(x, y) -> float:
    """Slope of log y against log x (least squares): y ∝ x^slope. Needs ≥ 2 positive points."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2 or np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("need at least two positive points to fit an exponent")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


@torch.no_grad()
def measured_kv_bytes(model: GPT, positions: int, batch_size: int = 1) -> int:
    """Bytes of a real KVCache after prefilling ``positions`` positions for ``batch_size``
    requests (the tensors' own sizes, to check the formula against)."""
    cache = KVCache(model.cfg, batch_size=batch_size, dtype=model.dtype)
    model(torch.ones(batch_size, positions, dtype=torch.long), cache)
    return cache.nbytes


@torch.no_grad()
def measure_request_traces(model: GPT, prompts: list[list[int]], n_new: int, cached: bool) -> list:
    """Serve ``prompts`` one after another (all arrive at 0 ms, first come first served) with
    greedy decoding, with the KV cache or by full-prefix recompute, and return one
    ``RequestTrace`` each with real timestamps in ms on this machine. The path is warmed up
    (one prefill and one step, untimed) before the clock starts."""
    if n_new < 1 or not prompts:
        raise ValueError("need at least one prompt and one token to generate")
    # Warm up this path before the clock starts: the first passes after a server start pay for
    # one-time setup, which made request 1 *with* the cache look slower (71 ms) than without (4.9 ms).
    ids = list(prompts[0])
    if cached:
        cache = KVCache(model.cfg, dtype=model.dtype)
        decode_one_token(model, int(torch.argmax(prefill(model, ids, cache).logits)), cache)
    else:
        full_forward(model, ids + [ids[-1]])
    t0 = time.perf_counter()
    now = lambda: (time.perf_counter() - t0) * 1000.0  # noqa: E731
    traces = []
    for i, ids in enumerate(prompts):
        start, emitted = now(), []
        cache = KVCache(model.cfg, dtype=model.dtype) if cached else None
        seq = list(ids)
        logits = prefill(model, seq, cache).logits if cached else full_forward(model, seq).logits
        for k in range(n_new):
            token = int(torch.argmax(logits))
            emitted.append(now())
            if k == n_new - 1 or len(seq) >= model.cfg.block_size:
                break
            seq.append(token)
            logits = decode_one_token(model, token, cache).logits if cached else full_forward(model, seq).logits
        traces.append(
            RequestTrace(
                f"request {i + 1} ({'cache' if cached else 'recompute'})", 0.0, start, tuple(emitted), len(ids)
            )
        )
    return traces
