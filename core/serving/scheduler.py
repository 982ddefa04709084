"""Continuous vs static batching on a paged KV cache, greedy, on the real model.

Requests arrive and leave at step boundaries. **Continuous** batching (iteration-level scheduling:
Orca, Yu et al., 2022; vLLM, Kwon et al., 2023): at every step a newcomer's prefill joins the
running batch (the step's decode rows and prefill rows run as two passes of the one model), and a
finished request frees its blocks at once. **Static** batching: a batch starts only when the
previous one is done, so everyone waits for its longest request. Out of blocks, the engine preempts
the newest running request (first come, first served; PagedAttention §4.5): its blocks are freed
and it is recomputed (one prefill of its prompt and outputs so far) later.

Time is a clock: steps by default (one forward pass = 1), or measured milliseconds (``clock="ms"``,
for the bench: each step adds its measured compute time; an idle engine jumps to the next arrival).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from core.model.model import GPT
from core.serving.paged import OutOfBlocks, PagedKVCache, blocks_for

POLICIES = ("continuous", "static")


@dataclass
class Request:
    """One request: its prompt, budget, arrival time, the greedy outputs so far and its timeline
    (clock units). ``wait`` = admitted − arrival; ``ttft`` = first output − arrival."""

    name: str
    prompt: list[int]
    max_new_tokens: int
    arrival: float = 0
    role: str = ""
    outputs: list[int] = field(default_factory=list)
    logits: list[torch.Tensor] = field(default_factory=list)
    state: str = "waiting"  # waiting | running | finished
    admitted: float | None = None
    first_token: float | None = None
    finished_at: float | None = None
    preemptions: int = 0
    shared: int = 0  # prompt positions read from shared blocks at its admission
    preempted_at: float | None = None

    @property
    def wait(self) -> float | None:
        return None if self.admitted is None else self.admitted - self.arrival

    @property
    def ttft(self) -> float | None:
        return None if self.first_token is None else self.first_token - self.arrival


@dataclass(frozen=True)
class StepReport:
    """One step (``step`` counted from 1): the requests in its forward pass, output tokens emitted, what
    happened, compute ms."""

    step: int
    rows: list[str]
    tokens: int
    events: list[str]
    ms: float

    def said(self) -> list[str]:
        """What the page says about this step: its events, or for a plain decode step (none) what it did
        (the page's first-step hint stayed up at every such step)."""
        if self.events:
            return self.events
        if not self.rows:  # nothing running and nothing admitted: no pass ran
            return ["no request was running, so no pass ran."]
        return [f"{', '.join(self.rows)} each added a token ({self.tokens} in one pass, {self.ms:.1f} ms)."]


@dataclass(frozen=True)
class Memory:
    """KV bytes now (Ch. 30 §30.4), for the live (running) requests:
    ``preallocated`` — one buffer per request for the whole context window (``KVCache.allocated_bytes``);
    ``paged`` — blocks in use × bytes per block; ``payload`` — 2·L·H_kv·d·b·Σ lengths;
    ``fragmentation`` — unused slots of the blocks in use (at most one partly filled block per
    request); ``shared_saving`` — payload stored once in shared blocks. paged = payload −
    shared_saving + fragmentation. ``blocks_unshared`` — Σ table lengths (blocks without sharing)."""

    preallocated: int
    paged: int
    payload: int
    fragmentation: int
    shared_saving: int
    blocks_used: int
    blocks_unshared: int
    positions: int  # Σ lengths of the running requests

    @property
    def shared_block_saving(self) -> float:
        """Fraction of blocks sharing saves: 1 − used / Σ table lengths (0 when nothing is held)."""
        return 1 - self.blocks_used / self.blocks_unshared if self.blocks_unshared else 0.0


def _n(count: int, noun: str = "block") -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


class Engine:
    """A greedy serving loop over ``PagedKVCache`` (see the module docstring). Raises ``ValueError``
    for an unknown policy, ``max_batch`` < 1, or a bad pool (see ``PagedKVCache``)."""

    def __init__(
        self,
        model: GPT,
        n_blocks: int,
        block_size: int = 16,
        policy: str = "continuous",
        max_batch: int = 8,
        end_id: int | None = None,
        share_prefix: bool = True,
        clock: str = "steps",
        keep_logits: bool = False,
    ):
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
        if isinstance(max_batch, bool) or not isinstance(max_batch, int) or max_batch < 1:
            raise ValueError(f"max_batch must be a whole number ≥ 1, got {max_batch!r}")
        self.model, self.policy, self.max_batch, self.end_id = model, policy, max_batch, end_id
        self.cache = PagedKVCache(model.cfg, n_blocks, block_size, model.dtype)
        self.share_prefix, self.clock_kind, self.keep_logits = share_prefix, clock, keep_logits
        self.requests: list[Request] = []
        self.clock, self.steps = 0.0, 0
        self.history: list[StepReport] = []

    # -- requests ------------------------------------------------------------------------------
    def submit(self, prompt: list[int], max_new_tokens: int, arrival: float = 0, role: str = "") -> Request:
        """Queue a request arriving at ``arrival``. Refuses (``ValueError``) an empty prompt, a budget
        < 1, a request longer than the context window or one that needs more blocks than the pool."""
        cfg, bs = self.model.cfg, self.cache.block_size
        name = f"R{len(self.requests) + 1}"
        if not prompt:
            raise ValueError(f"{name} has an empty prompt")
        if max_new_tokens < 1:
            raise ValueError(f"{name} must generate at least 1 token")
        most = len(prompt) + max_new_tokens - 1  # the last output is never consumed
        if most > cfg.block_size:
            raise ValueError(f"{name}: {most} positions exceed the context window of {cfg.block_size}")
        if blocks_for(most, bs) > self.cache.n_blocks:
            raise ValueError(
                f"{name} needs up to {blocks_for(most, bs)} blocks ({most} positions) but the pool has only "
                f"{self.cache.n_blocks}: it could never run"
            )
        req = Request(name, list(prompt), max_new_tokens, arrival, role)
        self.requests.append(req)
        return req

    def of(self, state: str) -> list[Request]:
        return [r for r in self.requests if r.state == state]

    @property
    def done(self) -> bool:
        return all(r.state == "finished" for r in self.requests)

    def _finished(self, r: Request) -> bool:
        return len(r.outputs) >= r.max_new_tokens or (self.end_id is not None and r.outputs[-1] == self.end_id)

    # -- one step ------------------------------------------------------------------------------
    @torch.no_grad()
    def step(self) -> StepReport:
        """One step boundary and one forward pass: running requests consume their pending token
        (preempting the newest if blocks run out), arrived requests are admitted (continuous: any
        step; static: only into an empty engine), every row gets its next greedy token, and a
        finished request frees its blocks at once."""
        cache, events, now = self.cache, [], self.clock
        running = self.of("running")
        need = sum(cache.blocks_needed(r.name, 1) for r in running)
        while need > cache.n_free:
            if len(running) == 1:
                raise OutOfBlocks(need, cache.n_free, f"{running[0].name} alone")
            victim = max(running, key=lambda r: (r.arrival, self.requests.index(r)))
            freed = cache.free(victim.name)
            victim.state, victim.preemptions, victim.preempted_at = "waiting", victim.preemptions + 1, now
            events.append(
                f"Out of KV blocks: this step needs {_n(need)}, {cache.n_free - freed} free. Preempted {victim.name} "
                f"(the newest running request): {_n(freed)} freed; it will be recomputed (a prefill of its "
                f"{len(victim.prompt) + len(victim.outputs)} tokens) when blocks free up."
            )
            running.remove(victim)
            need = sum(cache.blocks_needed(r.name, 1) for r in running)
        for r in running:
            cache.append(r.name, [r.outputs[-1]])
        if self.policy == "continuous" or not running:
            for w in sorted(self.of("waiting"), key=lambda r: (r.arrival, self.requests.index(r))):
                if w.arrival > now or w.preempted_at == now:
                    continue
                if len(running) >= self.max_batch:
                    events.append(f"{w.name} waits: the batch is full ({self.max_batch} requests).")
                    break
                ids = w.prompt + w.outputs  # a recomputed request consumes its pending token too
                blocks = cache.blocks_needed_to_add(ids, self.share_prefix)
                if blocks > cache.n_free:
                    events.append(f"{w.name} waits: its prefill needs {_n(blocks)}, {cache.n_free} free.")
                    break
                w.shared = cache.add(w.name, ids, self.share_prefix)
                w.state, w.admitted = "running", (now if w.admitted is None else w.admitted)
                running.append(w)
                what = "is recomputed" if w.outputs else "joins the batch"
                note = f", {w.shared} read from shared blocks" if w.shared else ""
                new = _n(blocks, "new block")
                events.append(f"{w.name} {what}: prefill of {len(ids) - w.shared} tokens{note} ({new}).")
        ms = self._forward([r for r in running]) if running else 0.0
        self.clock = now + (ms if self.clock_kind == "ms" else 1)
        if not running and self.clock_kind == "ms":
            later = [r.arrival for r in self.of("waiting") if r.arrival > now]
            self.clock = min(later) if later else now
        for r in running:
            if r.first_token is None:
                r.first_token = self.clock
            if self._finished(r):
                freed = cache.free(r.name)
                r.state, r.finished_at = "finished", self.clock
                events.append(f"{r.name} finished after {len(r.outputs)} tokens: {_n(freed)} free again.")
        self.steps += 1
        # Counted from 1, as the page's "Step N" counts: numbered from 0 its lines read "Step 1: …" under "Step 2".
        report = StepReport(self.steps, [r.name for r in running], len(running), events, ms)
        self.history.append(report)
        return report

    def _forward(self, rows: list[Request]) -> float:
        """``GPT.forward`` through the paged view; each row's next token is the argmax of the logits
        at its last new position. Decode rows (1 token) and prefill rows go through as two passes of
        the same step: right-padding a decode row to a prompt's length would multiply its work.
        Returns the compute time in ms."""
        t0 = time.perf_counter()
        n_new = {r.name: len(self.cache.tokens[r.name]) - self.cache.lengths[r.name] for r in rows}
        # Decode rows first: a block one of them fills may already be shared by a newcomer's prefill.
        for group in ([r for r in rows if n_new[r.name] == 1], [r for r in rows if n_new[r.name] > 1]):
            if not group:
                continue
            view = self.cache.view([r.name for r in group])
            tok = torch.zeros(len(group), max(view.n), dtype=torch.long)  # (B, T), right-padded
            for i, r in enumerate(group):
                tok[i, : view.n[i]] = torch.tensor(self.cache.tokens[r.name][-view.n[i] :])
            logits, _ = self.model(tok, view)  # (B, T, vocab_size)
            last = logits[torch.arange(len(group)), torch.tensor(view.n) - 1]  # (B, vocab_size)
            for r, row, nxt in zip(group, last, last.argmax(-1).tolist(), strict=True):
                r.outputs.append(nxt)
                if self.keep_logits:
                    r.logits.append(row.clone())
        return (time.perf_counter() - t0) * 1000.0

    def run(self, max_steps: int = 100_000) -> list[StepReport]:
        """Step until every request has finished. Raises ``RuntimeError`` if the engine is idle with
        requests waiting that nothing will ever let in (an allocator fault, never expected)."""
        while not self.done and self.steps < max_steps:
            report = self.step()
            if not report.rows and all(r.arrival <= self.clock for r in self.of("waiting")):
                raise RuntimeError(f"stuck at step {report.step}: {report.events}")
        return self.history

    def summary(self) -> dict:
        """Steps, output tokens, mean tokens per step, mean wait before prefill and mean TTFT (clock
        units) over the requests that have started."""
        started = [r for r in self.requests if r.first_token is not None]
        tokens = sum(h.tokens for h in self.history)
        mean = lambda xs: sum(xs) / len(xs) if xs else 0.0  # noqa: E731
        return dict(
            steps=self.steps,
            tokens=tokens,
            tokens_per_step=tokens / self.steps if self.steps else 0.0,
            mean_wait=mean([r.wait for r in started]),
            mean_ttft=mean([r.ttft for r in started]),
        )

    # -- bytes ---------------------------------------------------------------------------------
    def memory(self) -> Memory:
        c = self.cache
        per_pos = c.bytes_per_position
        live = [r.name for r in self.of("running")]
        payload = per_pos * sum(len(c.tokens[r]) for r in live)
        stored = per_pos * sum(c.block_fill().values())
        return Memory(
            preallocated=len(live) * per_pos * self.model.cfg.block_size,
            paged=c.allocated_bytes,
            payload=payload,
            fragmentation=c.allocated_bytes - stored,
            shared_saving=payload - stored,
            blocks_used=c.n_used,
            blocks_unshared=sum(len(c.tables[r]) for r in live),
            positions=payload // per_pos,
        )
