"""One learner's decode request, stepped by hand: prefill, then one token per step.

Everything per user lives here (the KV cache, the chosen tokens, the attention rows, the
counters, the engine clock); the model is shared and only read. Ch. 30 §30.2-§30.3.
A step can be computed and held back (``preview_step``) until a learner has predicted it, then
committed (``commit``): the request on screen is always what has been revealed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from core.cost.counts import causal_pairs
from core.decode.cache_rows import fingerprints
from core.decode.generate import SamplingConfig, StepResult, extend, full_forward, make_generator, select_token
from core.decode.kv_cache import KVCache
from core.decode.session_types import DecodeSession, ModelKey, PendingStep
from core.model.model import GPT
from core.text import plural

CHECK_BUDGET_MACS = 2 * 10**9  # a recompute whose products need more multiply-adds is not run at every step
CHECK_BUDGET_MS = 100.0  # … nor one that took longer than this by the clock (a busy server)
# … nor one that waited for a core as long as it ran: its clock time over this many times its CPU time
# (a class server's replicas sharing the cores; 47 % of checks under a class's load on 2 cores, none alone)
CHECK_CONTENDED = 2.0
CHECK_EVERY = 10  # … but every this many steps
SHIPPED_FLOAT32 = ModelKey()  # the default: the shipped model in float32 with float weights


def _run_pass(sess: DecodeSession, forward, generator: torch.Generator) -> tuple[StepResult, int, float]:
    """One timed pass: ``forward()`` then choosing the next token. Returns the result, the token
    and the elapsed ms (the engine clock: compute only)."""
    t0 = time.perf_counter()
    result = forward()
    chosen = select_token(result.logits, sess.sampling, generator)
    return result, chosen, (time.perf_counter() - t0) * 1000.0


def _record(sess: DecodeSession, step: StepResult, chosen: int, ms: float, naive_logits: torch.Tensor) -> None:
    sess.logits = step.logits
    sess.outputs.append(chosen)
    sess.engine_ms.append(ms)
    sess.passes.append(step.att)
    sess.scores_cached += step.scores
    sess.scores_naive += causal_pairs(sess.cache.pos)
    # NaN: this step was not recomputed (``check_due``).
    sess.max_diff.append(float("nan") if naive_logits is None else float((step.logits - naive_logits).abs().max()))
    sess.max_logit.append(float(step.logits.abs().max()))
    sess.cache_bytes.append(sess.cache.nbytes)
    # The rows this pass wrote, fingerprinted now: "Inside the cache" later shows they never change.
    sess.row_prints += fingerprints(sess.cache, len(sess.row_prints), sess.cache.pos)


def _check_prompt(model: GPT, ids) -> list[int]:
    ids = list(ids)
    if not ids:
        raise ValueError("the prompt is empty: give at least one token")
    if len(ids) > model.cfg.block_size:
        raise ValueError(
            f"the prompt is {plural(len(ids), 'token')} but the context window holds {model.cfg.block_size:,}: "
            f"remove at least {plural(len(ids) - model.cfg.block_size, 'token')}"
        )
    return ids


def _new_session(model: GPT, ids, sampling, model_key, prompt_text: str, cache: KVCache | None = None):
    cache = cache if cache is not None else KVCache(model.cfg, dtype=model.dtype)
    gen = make_generator(sampling.seed)
    return DecodeSession(list(ids), sampling, cache, gen, ModelKey.of(model_key), prompt_text, consumed=list(ids))


def start(model: GPT, prompt_ids, sampling: SamplingConfig, model_key=SHIPPED_FLOAT32, prompt_text: str = ""):
    """Prefill ``prompt_ids`` and choose output token 1. Raises ``ValueError`` for an
    empty prompt or one longer than the context window (nothing is dropped silently)."""
    sess = _new_session(model, _check_prompt(model, prompt_ids), sampling, model_key, prompt_text)
    result, chosen, ms = _run_pass(sess, lambda: extend(model, sess.prompt_ids, sess.cache), sess.generator)
    # Prefill *is* a full pass: recomputing the same prefix is the same computation.
    _record(sess, result, chosen, ms, result.logits)
    return sess


def step_block_reason(sess: DecodeSession, end_id: int | None) -> str | None:
    """Why the next step cannot run (end token chosen, context window full), or None."""
    if sess.pending is None:
        return "Run prefill first."
    if end_id is not None and sess.pending == end_id and not sess.past_end:
        return "The model chose the end token: this request is finished."
    if sess.cache.pos >= sess.cache.capacity:
        return (
            f"The context window is full: the KV cache holds all {sess.cache.capacity} positions, "
            "so the chosen token cannot be consumed."
        )
    return None


def preview_step(model: GPT, sess: DecodeSession, check: bool = True) -> PendingStep:
    """Compute the next decode step on a copy of the cache and generator, leaving ``sess`` as it
    is (for predict-then-reveal). With ``check``, also recompute the whole prefix without the
    cache, outside the timed part (``check_due`` says when that is affordable). Raises
    ``ValueError`` before prefill or when the context window is full."""
    if sess.pending is None:
        raise ValueError("run prefill before stepping")
    cache, gen = sess.cache.clone(), torch.Generator().set_state(sess.generator.get_state())
    token = sess.pending
    result, chosen, ms = _run_pass(sess, lambda: extend(model, [token], cache), gen)
    return PendingStep(result, chosen, ms, _recompute(model, sess, token) if check else None, cache, gen)


def _recompute(model: GPT, sess: DecodeSession, token: int) -> torch.Tensor:
    """The last position's logits of the prefix plus ``token``, recomputed without the cache (timed
    into ``sess.check_ms`` by the clock and ``sess.check_cpu_ms`` in this thread's CPU time, which
    counts torch's work as the app runs it on one thread, ui/models.py; outside the step's own clock)."""
    t0, cpu0 = time.perf_counter(), time.thread_time()
    naive = full_forward(model, sess.consumed + [token]).logits
    sess.check_ms = (time.perf_counter() - t0) * 1000.0
    sess.check_cpu_ms = (time.thread_time() - cpu0) * 1000.0
    return naive


def check_spacing(
    model: GPT,
    sess: DecodeSession,
    budget_macs: int = CHECK_BUDGET_MACS,
    budget_ms: float = CHECK_BUDGET_MS,
    queued: int = 0,
) -> str | None:
    """Why the recompute check is not run at every step, or None when it is: "model" when its
    weight products, about ``n_params`` × (positions + 1) multiply-adds, pass ``budget_macs`` (a
    SmolLM2-135M at 67 positions: 9 × 10⁹, ~0.45 s here; the shipped model at its full window:
    2.6 × 10⁸), "busy" when ``queued`` other sessions' steps wait in line behind this one
    (``turns.waiting()`` in the app), or the last check took longer than ``budget_ms`` by the clock,
    or over ``CHECK_CONTENDED`` times its own CPU time (it waited for a core: other replicas of a
    class server were running; a replica's own line does not show them). Under load, skipping it
    keeps Steps quick, and the badge says why."""
    if model.n_params() * (sess.cache.pos + 1) > budget_macs:
        return "model"
    contended = sess.check_ms > CHECK_CONTENDED * sess.check_cpu_ms
    return "busy" if queued > 0 or sess.check_ms > budget_ms or contended else None


def check_due(model: GPT, sess: DecodeSession, every: int = CHECK_EVERY, **budgets) -> bool:
    """Whether the next step should also be recomputed without the cache: every step unless
    ``check_spacing`` names a reason, then every ``every`` steps (``budgets``: its budgets and
    ``queued``)."""
    if check_spacing(model, sess, **budgets) is None:
        return True
    last = max((i for i, d in enumerate(sess.max_diff) if d == d), default=0)  # NaN: not checked
    return len(sess.max_diff) - last >= every


def last_check(sess: DecodeSession) -> tuple[int, float, float] | None:
    """(step, max |cached − recomputed| logit, max |logit|) of the latest checked decode step, or
    None when no step has been checked yet (prefill is itself the full pass)."""
    for i in range(len(sess.max_diff) - 1, 0, -1):
        if sess.max_diff[i] == sess.max_diff[i]:  # not NaN
            return i, sess.max_diff[i], sess.max_logit[i]
    return None


def commit(sess: DecodeSession, pending: PendingStep) -> DecodeSession:
    """Make a previewed step the request's own: the pending token is consumed (its K/V are in the
    cache) and the newly chosen token becomes pending."""
    sess.consumed.append(sess.pending)
    sess.cache, sess.generator = pending.cache, pending.generator
    _record(sess, pending.result, pending.chosen, pending.ms, pending.naive_logits)
    return sess


def step(model: GPT, sess: DecodeSession, check: bool = True) -> DecodeSession:
    """Consume the pending token (its K/V enter the cache) and choose the next one; with ``check``
    also measure max |cached − recomputed| logit against a full-prefix recompute. Raises
    ``ValueError`` when the context window is full or before prefill (nothing changed then).

    Unlike ``preview_step`` it writes into the session's own cache, never a copy: copying a real
    checkpoint's whole cache cost ~20 ms of server CPU per Step in the app (``bench.stage_speed
    --smollm``: 222.5 → 200.0 ms at 67 positions). A failed pass leaves the session as it was: the
    window is checked before anything is written, and ``pos`` moves only after every layer."""
    if sess.pending is None:
        raise ValueError("run prefill before stepping")
    token = sess.pending
    result, chosen, ms = _run_pass(sess, lambda: extend(model, [token], sess.cache), sess.generator)
    naive = _recompute(model, sess, token) if check else None
    sess.consumed.append(token)
    _record(sess, result, chosen, ms, naive)
    return sess


# ---- re-prefill after an edit (Ch. 30 §30.4: cache validity) ---------------------------------------


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


def _reuse_reason(old: DecodeSession, ids: list[int], shared: int) -> str:
    """Why the cache holds what it holds after the edit, in the learner's terms."""
    if shared == len(ids) == len(old.consumed):
        return "the prompt is unchanged: only its last position is processed again, for output token 1"
    if shared == len(ids):
        dropped = len(old.consumed) - shared
        from_prompt = max(0, len(old.prompt_ids) - shared)
        what = (
            plural(dropped - from_prompt, "decoded token")
            if not from_prompt
            else f"{plural(from_prompt, 'old prompt token')} and {plural(dropped - from_prompt, 'decoded token')}"
        )
        return f"the new prompt is the start of what was cached: the {what} after it are dropped"
    if shared < len(old.consumed):
        return f"the first changed token is at position {shared}"
    return "the new prompt extends what was cached"


def restart(
    model: GPT, old: DecodeSession | None, prompt_ids, sampling, model_key=SHIPPED_FLOAT32, prompt_text: str = ""
):
    """Prefill ``prompt_ids`` as a new request, reusing ``old``'s cache where it is still valid.

    Positions before the first token that differs from what ``old`` consumed keep their cached
    K/V; the rest are recomputed in one pass (Ch. 30 §30.4). A different model, precision or
    weight quantization invalidates the whole cache. Also runs a fresh prefill to report the max
    |logit difference| (0 in float64 up to ~1e-15). Returns ``(session, Reuse)``; raises
    ``ValueError`` like ``start``."""
    key = ModelKey.of(model_key)
    if old is None or old.model_key != key:
        why = (
            "no earlier request"
            if old is None
            else "the model, its precision or its weights changed: every cached key and value came from other weights"
        )
        sess = start(model, prompt_ids, sampling, key, prompt_text)
        return sess, Reuse(0, len(sess.prompt_ids), 0.0, why)
    ids = _check_prompt(model, prompt_ids)
    shared = common_prefix(old.consumed, ids)
    keep = min(shared, len(ids) - 1)  # the last position is processed again: it gives output token 1's logits
    sess = _new_session(model, ids, sampling, key, prompt_text, cache=old.cache)
    sess.cache.truncate(keep)
    sess.passes, sess.row_prints = _keep_rows(old.passes, keep), old.row_prints[:keep]
    result, chosen, ms = _run_pass(sess, lambda: extend(model, ids[keep:], sess.cache), sess.generator)
    _record(sess, result, chosen, ms, full_forward(model, ids).logits)
    sess.scores_cached, sess.scores_naive, sess.reused = result.scores, causal_pairs(len(ids)), keep
    return sess, Reuse(keep, len(ids) - keep, sess.max_diff[-1], _reuse_reason(old, ids, shared))
