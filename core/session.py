"""One learner's decode request, stepped by hand: prefill, then one token per step.

Everything per user lives here (the KV cache, the chosen tokens, the attention rows, the
counters, the engine clock); the model is shared and only read. Ch. 30 §30.2-§30.3.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from core.cost import causal_pairs
from core.decode import (
    SamplingConfig,
    StepResult,
    decode_one_token,
    extend,
    full_forward,
    make_generator,
    prefill,
    select_token,
    token_probs,
)
from core.kv_cache import KVCache
from core.model import GPT


@dataclass
class DecodeSession:
    """State of one request. ``consumed`` ids have K/V in ``cache``; ``pending`` is the token
    chosen from the latest logits and not yet consumed (Table 30.1).

    ``passes`` holds each forward pass's attention, one ``(n_head, T_new, S)`` array per
    layer. ``engine_ms`` holds the measured compute time of prefill and of each step
    (forward pass + selection, ms), excluding the time spent waiting for a click.
    ``max_diff`` is the max |cached − recomputed| logit of each pass.
    """

    prompt_ids: list[int]
    sampling: SamplingConfig
    cache: KVCache
    generator: torch.Generator
    consumed: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)
    passes: list[list[np.ndarray]] = field(default_factory=list)
    logits: torch.Tensor | None = None
    engine_ms: list[float] = field(default_factory=list)
    max_diff: list[float] = field(default_factory=list)
    scores_cached: int = 0
    scores_naive: int = 0
    model_key: tuple = ("float32", None)  # (dtype, weight bits or None): which shared model to step with

    @property
    def pending(self) -> int | None:
        """The chosen token that the next forward pass will consume, if any."""
        return self.outputs[-1] if self.outputs else None

    @property
    def n_positions(self) -> int:
        """Positions whose K/V are cached: rows of the attention matrix."""
        return self.cache.pos

    @property
    def n_steps(self) -> int:
        """Decode steps taken after prefill: every output token but the first (which prefill
        chose). Not ``len(passes) - 1``: a re-prefill keeps several earlier passes' rows."""
        return max(0, len(self.outputs) - 1)

    def emission_times_ms(self) -> list[float]:
        """Engine-clock emission time of each output token, arrival = start of prefill = 0."""
        return list(np.cumsum(self.engine_ms))


def _timed(fn):
    """Run ``fn()`` and return its result and the elapsed time in ms."""
    t0 = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - t0) * 1000.0


def _record(sess: DecodeSession, step: StepResult, chosen: int, ms: float, naive_logits: torch.Tensor) -> None:
    sess.logits = step.logits
    sess.outputs.append(chosen)
    sess.engine_ms.append(ms)
    sess.passes.append(step.att)
    sess.scores_cached += step.scores
    sess.scores_naive += causal_pairs(sess.cache.pos)
    sess.max_diff.append(float((step.logits - naive_logits).abs().max()))


def start(model: GPT, prompt_ids, sampling: SamplingConfig, model_key: tuple = ("float32", None)) -> DecodeSession:
    """Prefill ``prompt_ids`` and choose output token 1. Raises ``ValueError`` for an
    empty prompt or one longer than the context window (nothing is dropped silently)."""
    if len(prompt_ids) > model.cfg.block_size:
        raise ValueError(
            f"the prompt is {len(prompt_ids)} tokens but the context window holds {model.cfg.block_size}: "
            f"remove at least {len(prompt_ids) - model.cfg.block_size} tokens"
        )
    sess = DecodeSession(
        list(prompt_ids),
        sampling,
        KVCache(model.cfg, dtype=model.dtype),
        make_generator(sampling.seed),
        model_key=tuple(model_key),
    )

    def work():
        result = prefill(model, sess.prompt_ids, sess.cache)
        return result, select_token(result.logits, sampling, sess.generator)

    (result, chosen), ms = _timed(work)
    sess.consumed = list(sess.prompt_ids)
    # Prefill *is* a full pass: recomputing the same prefix is the same computation.
    _record(sess, result, chosen, ms, result.logits)
    return sess


def step_block_reason(sess: DecodeSession, end_id: int | None) -> str | None:
    """Why the next step cannot run (end token chosen, context window full), or None."""
    if sess.pending is None:
        return "Run prefill first."
    if end_id is not None and sess.pending == end_id:
        return "The model chose the end token: this request is finished."
    if sess.cache.pos >= sess.cache.capacity:
        return (
            f"The context window is full: the KV cache holds all {sess.cache.capacity} positions, "
            "so the chosen token cannot be consumed."
        )
    return None


def step(model: GPT, sess: DecodeSession) -> DecodeSession:
    """Consume the pending token (its K/V enter the cache) and choose the next one.

    Then, outside the timed part, recompute the whole prefix without the cache to measure
    max |cached − recomputed| logit. Raises ``ValueError`` when the context window is full
    or before prefill.
    """
    token = sess.pending
    if token is None:
        raise ValueError("run prefill before stepping")

    def work():
        result = decode_one_token(model, token, sess.cache)
        return result, select_token(result.logits, sess.sampling, sess.generator)

    (result, chosen), ms = _timed(work)
    sess.consumed.append(token)
    naive = full_forward(model, sess.consumed)
    _record(sess, result, chosen, ms, naive.logits)
    return sess


@dataclass(frozen=True)
class Reuse:
    """What a re-prefill after an edit kept: ``reused`` leading positions read from the old
    cache, ``recomputed`` positions processed now, the max |logit − fresh prefill|, and why the
    cache was (in)valid."""

    reused: int
    recomputed: int
    max_diff_vs_fresh: float
    reason: str


def common_prefix(a, b) -> int:
    """Number of leading tokens two id lists share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _keep_rows(passes: list[list[np.ndarray]], n_rows: int) -> list[list[np.ndarray]]:
    """The attention passes cut to their first ``n_rows`` query rows (columns cut alike)."""
    out, row = [], 0
    for layers in passes:
        t_new = layers[0].shape[1]
        if row >= n_rows:
            break
        take = min(t_new, n_rows - row)
        out.append([a[:, :take, : row + take] for a in layers])
        row += take
    return out


def restart(
    model: GPT, old: DecodeSession | None, prompt_ids, sampling: SamplingConfig, model_key: tuple = ("float32", None)
) -> tuple[DecodeSession, Reuse]:
    """Prefill ``prompt_ids`` as a new request, reusing ``old``'s cache where it is still valid.

    Positions before the first token that differs from what ``old`` consumed keep their cached
    K/V; the rest are recomputed in one pass (Ch. 30 §30.4). A different model, precision or
    weight quantization invalidates the whole cache. Also runs a fresh prefill to report the max
    |logit difference| (0 in float64 up to ~1e-15). Raises ``ValueError`` like ``start``."""
    if old is None or old.model_key != tuple(model_key):
        why = (
            "no earlier request"
            if old is None
            else ("the model's precision or weights changed: every cached key and value came from other weights")
        )
        sess = start(model, prompt_ids, sampling, model_key)
        return sess, Reuse(0, len(sess.prompt_ids), 0.0, why)
    ids = list(prompt_ids)
    if not ids:
        raise ValueError("the prompt is empty: give at least one token")
    if len(ids) > model.cfg.block_size:
        start(model, ids, sampling, model_key)  # raises with the count to remove
    shared = common_prefix(old.consumed, ids)
    # At least the last position must be processed again to get logits for output token 1.
    keep = min(shared, len(ids) - 1)
    sess = DecodeSession(ids, sampling, old.cache, make_generator(sampling.seed), model_key=tuple(model_key))
    sess.cache.truncate(keep)
    sess.passes = _keep_rows(old.passes, keep)

    def work():
        result = extend(model, ids[keep:], sess.cache)
        return result, select_token(result.logits, sampling, sess.generator)

    (result, chosen), ms = _timed(work)
    sess.consumed = list(ids)  # a copy: stepping appends to consumed, never to the prompt
    fresh = full_forward(model, ids)
    _record(sess, result, chosen, ms, fresh.logits)
    sess.scores_cached, sess.scores_naive = result.scores, causal_pairs(len(ids))
    if shared == len(ids) == len(old.consumed):
        reason = "the prompt is unchanged: only its last position is processed again, for output token 1"
    elif shared == len(ids):
        reason = "the prompt is what was cached before the decoded tokens: those positions are dropped"
    elif shared < len(old.consumed):
        reason = f"the first changed token is at position {shared}"
    else:
        reason = "the new prompt extends what was cached"
    return sess, Reuse(keep, len(ids) - keep, sess.max_diff[-1], reason)


def dtype_name(sess: DecodeSession) -> str:
    """'float32' or 'float64': the precision this request was prefilled in."""
    return str(sess.cache.dtype).removeprefix("torch.")


def stack_rows(passes, layer: int, head: int | None) -> np.ndarray:
    """Square ``(T, T)`` attention from forward passes, each indexable by layer to give
    ``(n_head, T_new, S)``; ``head=None`` averages the heads. Masked (future) cells are NaN."""
    T = sum(p[layer].shape[1] for p in passes)
    out = np.full((T, T), np.nan)
    row = 0
    for p in passes:
        att = p[layer]  # (n_head, T_new, S)
        a = att.mean(axis=0) if head is None else att[head]  # (T_new, S)
        for i in range(a.shape[0]):
            out[row + i, : row + i + 1] = a[i, : row + i + 1]
        row += a.shape[0]
    return out


def attention_matrix(sess: DecodeSession, layer: int, head: int | None) -> np.ndarray:
    """Square ``(T, T)`` attention for ``layer`` and ``head`` (``None``: mean over heads),
    T = cached positions. Masked (future) cells are NaN so a figure leaves them blank."""
    return stack_rows(sess.passes, layer, head)


def next_token_table(sess: DecodeSession, k: int = 10) -> list[tuple[int, float]]:
    """Top-``k`` (token id, probability) under the session's sampling rule, largest first.

    For greedy decoding the probabilities shown are the plain softmax of the logits."""
    if sess.logits is None:
        return []
    shown = sess.sampling if sess.sampling.strategy == "sample" else SamplingConfig("sample")
    probs = token_probs(sess.logits, shown)
    top = torch.topk(probs, min(k, probs.numel()))
    return [(int(i), float(p)) for p, i in zip(top.values, top.indices, strict=True)]
