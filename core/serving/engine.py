"""One engine for many people's requests: continuous batching with a per-step token budget, chunked prefill, a
prefix cache, preemption and recompute, on the real model.

Ch. 30 ends its serving thread with "scheduling can reuse context and overlap work while making one user's wait
worse". Each ``step`` is one engine iteration (Orca's iteration-level scheduling, Yu et al., 2022):

1. every running request that has finished its prefill brings **one decode token** (oldest first); out of KV blocks,
   the newest running request is **preempted**: its blocks are released and it is later recomputed (PagedAttention
   §4.5), its outputs and its sampler kept;
2. with **chunked prefill** (Sarathi-Serve, Agrawal et al., 2024; vLLM's ``max_num_batched_tokens``) prefills take
   what is left of the step's **token budget**, a chunk at a time, so a long prompt never stalls the others' decode
   tokens by more than one budget's work; without it a prefill runs whole in one step (the first of a step even
   when longer than the budget: a prompt as long as the context must run somewhere), and everyone's next token
   waits for it;
3. a newcomer (first come, first served, at most ``max_running`` at once) first reads its **prefix-cache hits**
   (``core.serving.prefix_cache``), then prefills the rest.

The model runs the step's decode rows as one pass ``(B, 1)`` and its prefill rows as another (right-padded to the
longest chunk): padding a decode row to a chunk's length would multiply its work. Every row's next token comes
from the logits at its last new position, chosen by ``core.decode.generate.select_token`` with the request's own
generator, so a request gets the tokens it would get alone. Times are ``time.perf_counter`` seconds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from core.decode.generate import SamplingConfig, make_generator, select_token
from core.model.model import GPT
from core.serving.paged import blocks_for
from core.serving.prefix_cache import PrefixCachingKVCache

BUDGET_RANGE = (8, 2048)  # tokens per step (vLLM's max_num_batched_tokens)
RUNNING_RANGE = (1, 64)  # requests running at once (vLLM's max_num_seqs)
GREEDY = SamplingConfig()


@dataclass(frozen=True)
class EngineSettings:
    """What the teacher changes while the class is served. ``token_budget`` (tokens per step, 8 … 2,048) is shared by
    decode tokens and prefill chunks; ``max_running`` requests (1 … 64) run at once. Raises ``ValueError`` out of
    range or when the budget could not give every running request its decode token."""

    chunked_prefill: bool = True
    # 24: small enough that a long document's chunks keep the others' largest gap within 2× their median on a 2-core
    # CPU, where a chunk's tokens cost nearly their full share of the step (docs/benchmarks.md, "Serve the class").
    token_budget: int = 24
    prefix_caching: bool = True
    max_running: int = 8

    def __post_init__(self) -> None:
        for name in ("chunked_prefill", "prefix_caching"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} is on or off (true or false), got {getattr(self, name)!r}")
        for name, (lo, hi) in (("token_budget", BUDGET_RANGE), ("max_running", RUNNING_RANGE)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise ValueError(f"{name} must be a whole number from {lo} to {hi:,}, got {value!r}")
        if self.token_budget < self.max_running:
            raise ValueError(
                f"a token budget of {self.token_budget} cannot give {self.max_running} running requests a decode "
                "token each: raise the budget or lower the requests running at once"
            )


@dataclass(eq=False)
class ServeRequest:
    """One person's request: prompt ids, how many new tokens, how they are chosen, and its timeline (seconds):
    ``arrival``, ``token_times`` (one per output). ``hit_tokens``: prompt positions read from the prefix cache at
    its first admission. ``state``: waiting | running | finished."""

    rid: str
    prompt: list[int]
    max_new_tokens: int
    sampling: SamplingConfig = GREEDY
    arrival: float = 0.0
    outputs: list[int] = field(default_factory=list)
    token_times: list[float] = field(default_factory=list)
    logits: list[torch.Tensor] = field(default_factory=list)
    state: str = "waiting"
    hit_tokens: int | None = None
    admitted_at: float | None = None  # first admission (its prefill began)
    computed_tokens: int = 0  # positions this request's passes computed (hits excluded), recomputes included
    preemptions: int = 0
    rng: torch.Generator | None = None

    @property
    def ids(self) -> list[int]:
        return self.prompt + self.outputs

    @property
    def ttft(self) -> float | None:
        """Seconds from arrival to the first token."""
        return self.token_times[0] - self.arrival if self.token_times else None

    @property
    def itl(self) -> list[float]:
        """Seconds between consecutive tokens (inter-token latency)."""
        return [b - a for a, b in zip(self.token_times, self.token_times[1:], strict=False)]


@dataclass(frozen=True)
class StepRecord:
    """One step: ``rows`` (rid, "prefill" or "decode", tokens), ``tokens`` of ``budget`` used, blocks in use, free
    and cached afterwards, what happened (``events``), compute ms and the clock (seconds) when it ended."""

    step: int
    rows: list[tuple[str, str, int]]
    tokens: int
    budget: int
    blocks_used: int
    blocks_free: int
    blocks_cached: int
    events: list[str]
    ms: float
    at: float


class ServingEngine:
    """Requests in, tokens out, a step at a time (see the module docstring). ``n_blocks`` × ``block_size`` positions
    of KV cache; ``end_id`` ends a request early; ``keep_logits`` keeps each chosen token's logits ``(vocab_size,)``
    (tests). ``clock`` gives the time (default ``time.perf_counter``)."""

    def __init__(self, model: GPT, n_blocks: int, block_size: int = 16, settings: EngineSettings = EngineSettings(),
                 end_id: int | None = None, keep_logits: bool = False, clock=time.perf_counter):  # fmt: skip
        self.model, self.settings, self.end_id, self.keep_logits, self.clock = (
            model, settings, end_id, keep_logits, clock,
        )  # fmt: skip
        self.cache = PrefixCachingKVCache(model.cfg, n_blocks, block_size, model.dtype, settings.prefix_caching)
        self.requests: dict[str, ServeRequest] = {}
        self.queue: list[str] = []  # waiting, first come first served (a preempted request goes back to the front)
        self.running: list[str] = []  # admission order
        self._preempted_now: set[str] = set()
        self.steps = 0
        self.history: list[StepRecord] = []

    def configure(self, settings: EngineSettings) -> None:
        """New settings from the next step on (prefix caching off: no hits and nothing newly cached)."""
        self.settings = settings
        self.cache.caching = settings.prefix_caching

    def submit(self, rid: str, prompt: list[int], max_new_tokens: int, sampling: SamplingConfig = GREEDY,
               arrival: float | None = None) -> ServeRequest:  # fmt: skip
        """Queue a request. Raises ``ValueError`` for a known id, an empty prompt, fewer than 1 new token, a
        request past the context window or one that needs more blocks than the whole pool."""
        ctx, bs = self.model.cfg.block_size, self.cache.block_size
        if rid in self.requests:
            raise ValueError(f"request {rid!r} was already sent")
        if not prompt or max_new_tokens < 1:
            raise ValueError("a request needs a prompt of at least 1 token and at least 1 new token")
        most = len(prompt) + max_new_tokens - 1  # the last output is never fed back
        if most > ctx:
            raise ValueError(f"{len(prompt)} prompt tokens + {max_new_tokens} new ones exceed the context of {ctx}")
        if blocks_for(most, bs) > self.cache.n_blocks:
            raise ValueError(f"it needs {blocks_for(most, bs)} KV blocks; the pool has {self.cache.n_blocks}")
        req = ServeRequest(rid, list(prompt), max_new_tokens, sampling, self.clock() if arrival is None else arrival)
        req.rng = make_generator(sampling.seed)
        self.requests[rid] = req
        self.queue.append(rid)
        return req

    def forget(self, rid: str) -> ServeRequest:
        """Drop a finished request's record (a long-running engine keeps only what is live). Raises ``KeyError``
        for an unknown id, ``ValueError`` for one still waiting or running."""
        if self.requests[rid].state != "finished":
            raise ValueError(f"request {rid!r} is still {self.requests[rid].state}")
        return self.requests.pop(rid)

    @property
    def idle(self) -> bool:
        return not self.queue and not self.running

    def _todo(self, r: ServeRequest) -> int:
        return len(r.ids) - len(self.cache.tokens[r.rid])

    def _preempt_newest(self, events: list[str]) -> str | None:
        """Release the newest running request's blocks; it waits at the front of the queue, to be recomputed."""
        if not self.running:
            return None
        rid = self.running.pop()
        self._preempted_now.add(rid)
        self.cache.free(rid)
        self.queue.insert(0, rid)
        r = self.requests[rid]
        r.state, r.preemptions = "waiting", r.preemptions + 1
        events.append(f"{rid} preempted (out of KV blocks): recomputed later, its {len(r.outputs)} tokens kept")
        return rid

    def _take(self, rows: list, r: ServeRequest, kind: str, n: int) -> None:
        """Put ``n`` more of ``r``'s positions in the cache for this step's pass (blocks taken now)."""
        done = len(self.cache.tokens[r.rid])
        self.cache.place(r.rid, r.ids[done : done + n])
        rows.append((r, kind, n))

    def _room(self, rid: str, n: int) -> int:
        """How many of ``n`` more positions request ``rid`` can place with the blocks free now."""
        c = self.cache
        return min(n, (len(c.tables[rid]) + c.n_free) * c.block_size - len(c.tokens[rid]))

    def _chunk(self, todo: int, left: int, prefills: int) -> int:
        """A prefill's tokens this step: with chunking what the budget has left; without, all of it or none (the
        step's first prefill runs whole even past the budget)."""
        if self.settings.chunked_prefill:
            return min(todo, left)
        return todo if todo <= left or not prefills else 0

    def _schedule(self, events: list[str]) -> list[tuple[ServeRequest, str, int]]:
        left, rows = self.settings.token_budget, []
        for rid in [x for x in self.running if self.requests[x].outputs and self._todo(self.requests[x]) == 1]:
            if rid not in self.running:
                continue  # preempted to make room for an older one
            while self.cache.blocks_needed(rid, 1) > self.cache.n_free:
                if self._preempt_newest(events) == rid:
                    break
            if rid in self.running:
                self._take(rows, self.requests[rid], "decode", 1)
                left -= 1
        prefills = 0
        for rid in [x for x in self.running if x not in {r.rid for r, _, _ in rows}]:
            r = self.requests[rid]
            n = self._room(rid, self._chunk(self._todo(r), left, prefills))
            if n > 0 and (self.settings.chunked_prefill or n == self._todo(r)):
                self._take(rows, r, "prefill", n)
                left, prefills = left - n, prefills + 1
        while self.queue and len(self.running) < self.settings.max_running and left > 0:
            r = self.requests[self.queue[0]]
            if r.rid in self._preempted_now:
                break  # not back in the step that preempted it
            hits = self.cache.hits(r.ids)
            hit, bs = len(hits) * self.cache.block_size, self.cache.block_size
            # Hit blocks nobody holds count as free until this request holds them.
            room = (self.cache.n_free - sum(self.cache.ref[b] == 0 for b in hits)) * bs
            n = self._chunk(len(r.ids) - hit, left, prefills)
            n = min(n, room) if self.settings.chunked_prefill else (n if n <= room else 0)
            if n <= 0:
                break
            self.queue.pop(0)
            got = self.cache.admit(r.rid, r.ids)
            if r.hit_tokens is None:
                r.hit_tokens, r.admitted_at = got, self.clock()
            r.state = "running"
            self.running.append(r.rid)
            self._take(rows, r, "prefill", n)
            left, prefills = left - n, prefills + 1
        if not rows and len(self.running) > 1 and self._preempt_newest(events):
            return self._schedule(events)  # every running request was stuck mid-prefill for want of blocks
        return rows

    @torch.no_grad()
    def step(self) -> StepRecord:
        """One engine iteration (see the module docstring); with nothing to do it records an empty step."""
        events: list[str] = []
        self._preempted_now: set[str] = set()
        rows = self._schedule(events)
        t0 = time.perf_counter()
        for group in ([(r, n) for r, _, n in rows if n == 1], [(r, n) for r, _, n in rows if n > 1]):
            if group:
                self._forward(group)
        ms = (time.perf_counter() - t0) * 1000.0
        now = self.clock()
        for r, _, n in rows:
            r.computed_tokens += n
            self.cache.mark_computed(r.rid)
            if len(r.token_times) < len(r.outputs):
                r.token_times.append(now)
            if r.outputs and self._todo(r) == 1 and self._finished(r):
                self.cache.free(r.rid)
                self.running.remove(r.rid)
                r.state = "finished"
        self.steps += 1
        c = self.cache
        record = StepRecord(
            self.steps, [(r.rid, kind, n) for r, kind, n in rows], sum(n for _, _, n in rows),
            self.settings.token_budget, c.n_used, c.n_free, c.n_cached, events, ms, now,
        )  # fmt: skip
        self.history.append(record)
        return record

    def _finished(self, r: ServeRequest) -> bool:
        return len(r.outputs) >= r.max_new_tokens or (self.end_id is not None and r.outputs[-1] == self.end_id)

    def _forward(self, group: list[tuple[ServeRequest, int]]) -> None:
        view = self.cache.view([r.rid for r, _ in group])
        tok = torch.zeros(len(group), max(view.n), dtype=torch.long)  # (B, T), right-padded
        for i, (r, _) in enumerate(group):
            tok[i, : view.n[i]] = torch.tensor(self.cache.tokens[r.rid][-view.n[i] :])
        logits, _ = self.model(tok, view)  # (B, T, vocab_size)
        for i, (r, _) in enumerate(group):
            if self.cache.lengths[r.rid] < len(r.ids):
                continue  # a chunk before the prompt's last one: its logits choose nothing
            row = logits[i, view.n[i] - 1]  # (vocab_size,)
            r.outputs.append(select_token(row, r.sampling, r.rng))
            if self.keep_logits:
                r.logits.append(row.clone())

    def run(self, max_steps: int = 1_000_000) -> list[StepRecord]:
        """Step until every request has finished."""
        while not self.idle and self.steps < max_steps:
            self.step()
        return self.history
