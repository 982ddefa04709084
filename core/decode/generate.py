"""Generation in two rhythms: prefill the known prompt, then decode one token at a time.

Ch. 19 "Two speeds, one model" and Ch. 30 §30.2. ``prefill`` processes every prompt
position in one parallel pass and returns the logits for output token 1;
``decode_one_token`` consumes one chosen token, appends its K/V and returns the logits for
the next. A chosen token enters the cache only when the next forward pass consumes it
(Table 30.1). ``generate_naive`` reruns the whole growing prefix at every step — Ch. 30's
"simplest correct implementation" — and stays as the honest baseline.

Score counts are query-key dot products kept by the causal mask, per layer and per head.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from core.cost.counts import causal_pairs
from core.decode.kv_cache import KVCache
from core.model.model import GPT


@dataclass(frozen=True)
class SamplingConfig:
    """How the next token is chosen from logits.

    ``strategy`` is ``"greedy"`` (argmax; ties go to the lowest token id, i.e. the first in
    candidate order as in Ch. 30 §30.6) or ``"sample"`` (softmax of logits / ``temperature``
    restricted to the ``top_k`` largest, ``top_k = 0`` meaning all). Raises ``ValueError``
    on an unknown strategy, a temperature ≤ 0 or a negative ``top_k``.
    """

    strategy: str = "greedy"
    temperature: float = 1.0
    top_k: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.strategy not in ("greedy", "sample"):
            raise ValueError(f"strategy must be 'greedy' or 'sample', got {self.strategy!r}")
        if not (self.temperature > 0 and np.isfinite(self.temperature)):
            raise ValueError(f"temperature must be a positive number, got {self.temperature!r}")
        if self.top_k < 0:
            raise ValueError(f"top_k must be 0 (all tokens) or positive, got {self.top_k}")


@dataclass
class StepResult:
    """One forward pass: ``logits`` ``(vocab_size,)`` for the next token, ``att`` one array
    ``(n_head, T_new, S)`` per layer for the positions just processed, and ``scores`` the
    query-key scores the mask keeps in this pass, per layer and head."""

    logits: torch.Tensor
    att: list[np.ndarray]
    scores: int


def _as_ids(ids, vocab_size: int) -> torch.Tensor:
    ids = list(ids)
    if not ids:
        raise ValueError("the prompt is empty: give at least one token")
    bad = [i for i in ids if not 0 <= int(i) < vocab_size]
    if bad:
        raise ValueError(f"token ids out of range 0..{vocab_size - 1}: {bad[:5]}")
    return torch.tensor([ids], dtype=torch.long)  # (1, T)


# inference_mode rather than no_grad: the outputs skip autograd's version counters and view
# tracking, ~1.3–2 ms less per decode step of SmolLM2-135M's shape (one thread; a step is
# ~1,300 small ops). The caches are allocated outside it, so writing them stays legal.
@torch.inference_mode()
def prefill(model: GPT, ids, cache: KVCache) -> StepResult:
    """Process all prompt ``ids`` (length n) in one parallel pass into an empty ``cache``.

    Afterwards ``cache.pos == n``. Returns the logits for output token 1 and the whole lower
    triangle of attention, ``(n_head, n, n)`` per layer. Raises ``ValueError`` for an empty
    prompt, a non-empty cache or more than ``block_size`` positions.
    """
    if cache.pos:
        raise ValueError(f"prefill needs an empty cache, it holds {cache.pos} positions")
    x = _as_ids(ids, model.cfg.vocab_size)
    n = x.shape[1]
    logits, atts = model(x, cache)
    return StepResult(logits[0, -1], [a[0].numpy() for a in atts], causal_pairs(n))


@torch.inference_mode()
def extend(model: GPT, ids, cache: KVCache) -> StepResult:
    """Process ``ids`` at positions ``cache.pos ..`` in one pass on top of what is cached (cache
    reuse after an edit, Ch. 30 §30.4). Returns the logits after the last new position and
    attention ``(n_head, T_new, cache.pos)`` per layer; scores are the causal pairs computed."""
    x = _as_ids(ids, model.cfg.vocab_size)
    start = cache.pos
    logits, atts = model(x, cache)
    return StepResult(logits[0, -1], [a[0].numpy() for a in atts], causal_pairs(cache.pos) - causal_pairs(start))


@torch.inference_mode()
def decode_one_token(model: GPT, token_id: int, cache: KVCache) -> StepResult:
    """Consume one chosen token at position ``cache.pos``; its K/V enter the cache now.

    Returns the logits for the next token and exactly one new attention row per layer and
    head, ``(n_head, 1, cache.pos)`` after the append. Raises ``ValueError`` when the
    context window is full.
    """
    x = _as_ids([token_id], model.cfg.vocab_size)
    logits, atts = model(x, cache)
    return StepResult(logits[0, -1], [a[0].numpy() for a in atts], cache.pos)


@torch.inference_mode()
def full_forward(model: GPT, ids) -> StepResult:
    """Recompute every position of ``ids`` from scratch, no cache (one naive step)."""
    x = _as_ids(ids, model.cfg.vocab_size)
    logits, atts = model(x)
    return StepResult(logits[0, -1], [a[0].numpy() for a in atts], causal_pairs(x.shape[1]))


def token_probs(logits: torch.Tensor, sampling: SamplingConfig) -> torch.Tensor:
    """Probabilities ``(vocab_size,)`` the sampler draws from (one-hot for greedy)."""
    logits = logits.detach().double()
    if sampling.strategy == "greedy":
        probs = torch.zeros_like(logits)
        probs[int(torch.argmax(logits))] = 1.0
        return probs
    scaled = logits / sampling.temperature
    if 0 < sampling.top_k < scaled.numel():
        kth = torch.topk(scaled, sampling.top_k).values[-1]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    return torch.softmax(scaled, dim=-1)


def select_token(logits: torch.Tensor, sampling: SamplingConfig, generator: torch.Generator) -> int:
    """Choose the next token id; sampling draws from ``generator`` so a seed repeats."""
    if sampling.strategy == "greedy":
        return int(torch.argmax(logits))  # first maximum: ties go to the earlier candidate
    return int(torch.multinomial(token_probs(logits, sampling), 1, generator=generator))


def make_generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed))


@dataclass
class Generation:
    """Tokens chosen, the logits ``(vocab_size,)`` each choice came from, and total scores."""

    tokens: list[int] = field(default_factory=list)
    logits: list[torch.Tensor] = field(default_factory=list)
    scores: int = 0


def generate_cached(model: GPT, ids, max_new_tokens: int, sampling: SamplingConfig) -> Generation:
    """Prefill then ``decode_one_token`` per step, stopping at the context window."""
    cache = KVCache(model.cfg, dtype=model.dtype)
    gen, rng = Generation(), make_generator(sampling.seed)
    step = prefill(model, ids, cache)
    while True:
        gen.scores += step.scores
        gen.logits.append(step.logits)
        gen.tokens.append(select_token(step.logits, sampling, rng))
        if len(gen.tokens) >= max_new_tokens or cache.pos >= model.cfg.block_size:
            return gen
        step = decode_one_token(model, gen.tokens[-1], cache)


def generate_naive(model: GPT, ids, max_new_tokens: int, sampling: SamplingConfig) -> Generation:
    """The full-prefix recompute baseline: every step reruns all positions, no cache."""
    prefix, gen, rng = list(ids), Generation(), make_generator(sampling.seed)
    while True:
        step = full_forward(model, prefix)
        gen.scores += step.scores
        gen.logits.append(step.logits)
        gen.tokens.append(select_token(step.logits, sampling, rng))
        if len(gen.tokens) >= max_new_tokens or len(prefix) >= model.cfg.block_size:
            return gen
        prefix.append(gen.tokens[-1])
