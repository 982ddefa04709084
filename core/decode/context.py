"""When prompt plus continuation reaches the context window (Ch. 19 "The context window").

Three policies: stop; truncate the prompt before prefill so prompt + continuation fits; or a
sliding window that evicts the oldest positions. Under RoPE a cached key keeps the rotation of
its original absolute position, and a query-key score depends only on their distance, so the
window's remaining keys need no recomputation after an eviction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from core.decode.generate import decode_one_token, prefill
from core.decode.kv_cache import KVCache
from core.model.model import GPT

POLICIES = ("stop", "truncate the prompt", "sliding window")


@dataclass
class WindowRun:
    """Tokens chosen (greedy); for every forward pass the absolute positions of its queries and
    the first key, its attention ``(n_layer, n_head, T_new, S)``; cache positions and bytes after
    each pass; the prompt actually used; and a note on what the policy did."""

    prompt_used: list[int]
    tokens: list[int] = field(default_factory=list)
    passes: list[tuple[int, int, np.ndarray]] = field(default_factory=list)
    cache_positions: list[int] = field(default_factory=list)
    cache_bytes: list[int] = field(default_factory=list)
    note: str = ""

    def end_at(self, end_id: int) -> int | None:
        """Index of the first ``end_id`` among the output tokens (None: the model never wrote it)."""
        return self.tokens.index(end_id) if end_id in self.tokens else None

    @property
    def consumed(self) -> list[int]:
        """Every token the model read, one per row of ``band_matrix``: the prompt used and each
        output token but the last (chosen, never fed back)."""
        return self.prompt_used + self.tokens[:-1]


@torch.no_grad()
def run_policy(model: GPT, prompt_ids, n_new: int, window: int, policy: str, end_id: int | None = None) -> WindowRun:
    """Generate up to ``n_new`` greedy tokens with at most ``window`` cached positions; with
    ``end_id`` (the end-of-text token) stop after it as the decode page does (past it the model
    starts a new, unrelated document). Without, keep going so the cache reaches the wall.

    Raises ``ValueError`` for an unknown policy, an empty prompt, a window outside
    2 … block_size, or (for "stop" and "sliding window") a prompt longer than the window."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}")
    if not 2 <= window <= model.cfg.block_size:
        raise ValueError(f"the window must hold 2 … {model.cfg.block_size} positions")
    ids = list(prompt_ids)
    if not ids:
        raise ValueError("the prompt is empty")
    note = ""
    if policy == "truncate the prompt":
        # Keep room for the continuation, but never less than half the window of prompt.
        keep = max(window // 2, window - n_new + 1)
        if len(ids) > keep:
            fits = (
                "so prompt + continuation fit"
                if keep == window - n_new + 1
                else (f"keeping the last {keep}; the continuation can only fill the rest of the window")
            )
            note = f"dropped the first {len(ids) - keep} prompt tokens {fits}"
            ids = ids[-keep:]
    elif len(ids) > window:
        raise ValueError(f"the prompt is {len(ids)} tokens but the window holds {window}")
    run = WindowRun(ids)
    cache = KVCache(model.cfg, dtype=model.dtype)
    step = prefill(model, ids, cache)
    run.passes.append((0, 0, np.stack(step.att)))
    while True:
        run.cache_positions.append(cache.pos)
        run.cache_bytes.append(cache.nbytes)
        run.tokens.append(int(torch.argmax(step.logits)))
        if run.tokens[-1] == end_id:
            ended = "the model wrote its end-of-text token: the request ends there"
            run.note = f"{note}; then {ended}" if note else ended
            return run
        if len(run.tokens) >= n_new:
            break
        if cache.pos >= window:
            if policy != "sliding window":
                wall = f"stopped at the wall: the window of {window} positions is full"
                run.note = f"{note}; then {wall}" if note else wall
                return run
            cache.evict(1)  # the oldest position leaves; the rest keep their rotations
        first_query = cache.offset + cache.pos
        step = decode_one_token(model, run.tokens[-1], cache)
        run.passes.append((first_query, cache.offset, np.stack(step.att)))
    evicted = cache.offset
    run.note = note or (
        f"evicted the {evicted} oldest positions, one per step once the window was full"
        if policy == "sliding window" and evicted
        else ""
    )
    return run


def band_matrix(run: WindowRun, layer: int, head: int | None) -> np.ndarray:
    """Attention ``(rows, columns)`` over absolute positions: each query row holds its shares for
    the keys it could see (NaN elsewhere: masked or already evicted)."""
    rows = []
    for first_q, first_k, att in run.passes:
        a = att[layer].mean(axis=0) if head is None else att[layer, head]  # (T_new, S)
        for i in range(a.shape[0]):
            rows.append((first_q + i, first_k, a[i]))
    n_cols = max(q for q, _, _ in rows) + 1
    out = np.full((len(rows), n_cols), np.nan)
    for r, (q, k0, a) in enumerate(rows):
        vis = a[: q - k0 + 1]
        out[r, k0 : k0 + len(vis)] = vis
    return out
