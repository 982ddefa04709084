"""Measured speed-ups on this machine: a batch against the same requests one by one (Ch. 19 "Batching"),
and speculative decoding against the target alone (Ch. 19 "Speculative decoding"). Each way is timed in
interleaved repeats, and the repeat with the median speed-up is reported with its own two timings.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from core.decode.generate import SamplingConfig, generate_cached
from core.model.model import GPT
from core.serving.batch import Batch
from core.serving.speculative import Speculative


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
    spec = Speculative(target, draft, k, temperature, seed)
    t0 = time.perf_counter()
    spec.start(prompt)
    while spec.produced < n_tokens and len(spec.ids) + k <= target.cfg.block_size:
        spec.round()
    return (time.perf_counter() - t0) * 1000, spec


def _plain_ms(target: GPT, prompt: list[int], n_tokens: int, sampling) -> float:
    """Wall ms of plain cached decoding of ``n_tokens`` with the target alone."""
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
