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

from core.decode import decode_one_token, full_forward, prefill
from core.kv_cache import KVCache
from core.model import GPT


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
    from core.latency import RequestTrace

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


def median_repeat(ratios: list[float]) -> int:
    """Index of the repeat whose ratio is the median (the lower middle one for an even count).
    The pages show that repeat's own two timings beside its ratio, so dividing the shown numbers
    gives the shown speed-up; medians of each timing taken apart need not divide to the median
    ratio (a page showed 1,410 ÷ 227 tokens/s beside "5.1×"). Raises ``ValueError`` when empty."""
    if not ratios:
        raise ValueError("no repeats to take the median of")
    return ratios.index(statistics.median_low(ratios))


@dataclass(frozen=True)
class BatchSpeed:
    """One batch size B, from the repeat with the median speed-up (``median_repeat``): ms per
    decode step of the batch, output tokens per second batched and one by one, and the speed-up
    (one by one ÷ batched wall time, so exactly batched ÷ one-by-one tokens per second); with the
    lowest and highest speed-up of all repeats."""

    batch_size: int
    step_ms: float
    batched_tokens_per_s: float
    solo_tokens_per_s: float
    speedup: float
    speedup_low: float
    speedup_high: float


def _serve_batched(model: GPT, prompts, n_new: int, layout: str) -> tuple[float, float]:
    """Wall ms of one batch (prefill + steps) and ms per decode step."""
    from core.batch import Batch

    t0 = time.perf_counter()
    batch = Batch(model, prompts, [n_new] * len(prompts), layout)
    batch.prefill()
    t1 = time.perf_counter()
    while batch.step():
        pass
    t2 = time.perf_counter()
    return (t2 - t0) * 1000, (t2 - t1) * 1000 / max(1, n_new - 1)


def _serve_one_by_one(model: GPT, prompts, n_new: int, layout: str) -> float:
    """Wall ms to serve the same requests one after another, each as a batch of one."""
    from core.batch import Batch

    t0 = time.perf_counter()
    for p in prompts:
        Batch(model, [p], [n_new], layout).run()
    return (time.perf_counter() - t0) * 1000


@torch.no_grad()
def measure_batching(
    model: GPT,
    prompts: list[list[int]],
    sizes=(1, 2, 4, 8, 16),
    n_new: int = 16,
    layout: str = "padded",
    repeats: int = 3,
    progress: Callable[[float], None] | None = None,
) -> list[BatchSpeed]:
    """For each batch size B: serve B requests (prompts cycled) as one batch, and the same B
    requests one after another. The two ways alternate which goes first in each of ``repeats``
    rounds (so a burst of other work hits both alike) and the repeat with the median speed-up is
    reported; at B = 1 both are the same computation, so the speed-up is ~1× by construction."""
    _serve_batched(model, prompts[:1], 2, layout)  # warm-up
    rows = []
    for k, b in enumerate(sizes):
        chosen = [prompts[i % len(prompts)] for i in range(b)]
        batched, steps, solo = [], [], []
        for r in range(repeats):
            if r % 2:
                solo.append(_serve_one_by_one(model, chosen, n_new, layout))
            batched_ms, step_ms = _serve_batched(model, chosen, n_new, layout)
            batched.append(batched_ms)
            steps.append(step_ms)
            if not r % 2:
                solo.append(_serve_one_by_one(model, chosen, n_new, layout))
        ratios = [s / t for s, t in zip(solo, batched, strict=True)]
        m = median_repeat(ratios)
        tokens = b * n_new
        rows.append(
            BatchSpeed(
                b,
                steps[m],
                tokens / batched[m] * 1000,
                tokens / solo[m] * 1000,
                ratios[m],
                min(ratios),
                max(ratios),
            )
        )
        if progress:
            progress((k + 1) / len(sizes))
    return rows


@dataclass(frozen=True)
class SpecSpeed:
    """One k: acceptance rate (accepted / proposed), target passes per produced token, and from
    the repeat with the median speed-up (``median_repeat``) the wall ms of the speculative run and
    of plain cached decoding of the same number of tokens and their ratio, the speed-up (plain ÷
    speculative, > 1 is faster); with the lowest and highest speed-up of all repeats."""

    k: int
    acceptance: float
    target_passes_per_token: float
    spec_ms: float
    plain_ms: float
    speedup: float
    speedup_low: float
    speedup_high: float
    tokens: int
    repeats: int


def _speculate(target: GPT, draft: GPT, prompt: list[int], k: int, n_tokens: int, temperature: float, seed: int):
    """One timed speculative request: (wall ms, the finished ``Speculative``)."""
    from core.speculative import Speculative

    spec = Speculative(target, draft, k, temperature, seed)
    t0 = time.perf_counter()
    spec.start(prompt)
    while spec.produced < n_tokens and len(spec.ids) + k <= target.cfg.block_size:
        spec.round()
    return (time.perf_counter() - t0) * 1000, spec


def _plain_ms(target: GPT, prompt: list[int], n_tokens: int, sampling) -> float:
    """Wall ms of plain cached decoding of ``n_tokens`` with the target alone."""
    from core.decode import generate_cached

    t0 = time.perf_counter()
    generate_cached(target, prompt, n_tokens, sampling)
    return (time.perf_counter() - t0) * 1000


@torch.no_grad()
def measure_speculative(
    target: GPT,
    draft: GPT,
    prompt: list[int],
    ks=(1, 2, 3, 4, 6, 8),
    n_tokens: int = 60,
    temperature: float = 0.0,
    seed: int = 0,
    repeats: int = 3,
) -> list[SpecSpeed]:
    """For each k: produce ``n_tokens`` speculatively, and the same number of tokens by plain
    cached decoding with the target, ``repeats`` times each. The two alternate which goes first
    (a burst of other work on the machine hits both alike); each repeat gives one ratio, and the
    median repeat and the range are reported (a single plain run made every ratio hostage to it)."""
    from core.decode import SamplingConfig, generate_cached

    sampling = SamplingConfig("greedy") if temperature == 0 else SamplingConfig("sample", temperature, 0, seed)
    generate_cached(target, prompt, 2, sampling)  # warm-up
    _speculate(target, draft, prompt, 1, 2, temperature, seed)
    rows = []
    for k in ks:
        spec_ms, plain_ms, produced = [], [], 0
        for r in range(repeats):
            if r % 2:  # plain first; the speculative run is deterministic, so `produced` is known
                plain_ms.append(_plain_ms(target, prompt, produced, sampling))
            ms, spec = _speculate(target, draft, prompt, k, n_tokens, temperature, seed)
            spec_ms.append(ms)
            produced = spec.produced
            if not r % 2:
                plain_ms.append(_plain_ms(target, prompt, produced, sampling))
        ratios = [p / s for p, s in zip(plain_ms, spec_ms, strict=True)]
        m = median_repeat(ratios)
        proposed = sum(len(r.proposed) for r in spec.rounds)
        accepted = sum(sum(r.accepted) for r in spec.rounds)
        rows.append(
            SpecSpeed(
                k,
                accepted / proposed if proposed else 0.0,
                spec.target_passes / spec.produced,
                spec_ms[m],
                plain_ms[m],
                ratios[m],
                min(ratios),
                max(ratios),
                spec.produced,
                repeats,
            )
        )
    return rows
