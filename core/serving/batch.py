"""Batching: several requests decoded together, one forward pass per step for the whole batch.

Ch. 19: "Batching improves hardware use, but every request needs its own context state."
Ch. 30 §30.4: for unequal lengths the sum of processed lengths replaces B·T.

Two ways to hold unequal lengths:
- ``"padded"``: one cache tensor ``(B, n_kv_head, S_max, head_dim)`` per layer; each request
  fills its own row from slot 0 and a padding mask hides the unused slots (bytes wasted:
  B·S_max − Σ lengths positions).
- ``"ragged"``: one ``KVCache`` per request; its bytes are exactly Σ lengths.
Either way every request gets exactly the logits it gets when decoded alone: each uses its own
positions for RoPE and sees only its own keys. The projections and MLPs run once for the whole
batch; only attention is split by request in the ragged layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from core.decode.kv_cache import KVCache
from core.model.model import GPT

LAYOUTS = ("padded", "ragged")


@dataclass
class Request:
    """One request in the batch: its prompt, the tokens chosen so far (greedy), its token
    budget, per-pass attention rows ``(n_layer, n_head, T_new, S)``, and its logits per pass."""

    prompt: list[int]
    max_new_tokens: int
    tokens: list[int] = field(default_factory=list)
    att: list[np.ndarray] = field(default_factory=list)
    logits: list[torch.Tensor] = field(default_factory=list)
    end_id: int | None = None

    @property
    def finished(self) -> bool:
        return len(self.tokens) >= self.max_new_tokens or (bool(self.tokens) and self.tokens[-1] == self.end_id)

    @property
    def length(self) -> int:
        """Positions this request has cached: its prompt plus the outputs consumed."""
        return len(self.prompt) + max(0, len(self.tokens) - 1)


class Batch:
    """A batch of requests with a padded or ragged KV cache (see the module docstring)."""

    def __init__(
        self,
        model: GPT,
        prompts: list[list[int]],
        max_new_tokens: list[int],
        layout: str = "ragged",
        end_id: int | None = None,
    ):
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}")
        if not prompts or len(prompts) != len(max_new_tokens):
            raise ValueError("give one token budget per prompt, and at least one prompt")
        cfg = model.cfg
        for i, (p, m) in enumerate(zip(prompts, max_new_tokens, strict=True)):
            if not p:
                raise ValueError(f"request {i + 1} has an empty prompt")
            if m < 1:
                raise ValueError(f"request {i + 1} must generate at least one token")
            if len(p) + m - 1 > cfg.block_size:
                raise ValueError(
                    f"request {i + 1}: {len(p)} prompt + {m - 1} consumed tokens exceed the "
                    f"context window of {cfg.block_size}"
                )
        self.model, self.layout = model, layout
        self.requests = [Request(list(p), m, end_id=end_id) for p, m in zip(prompts, max_new_tokens, strict=True)]
        self.s_max = max(len(r.prompt) + r.max_new_tokens - 1 for r in self.requests)
        shape = (len(prompts), cfg.n_kv_head, self.s_max, cfg.head_dim)
        if layout == "padded":
            self.k = [torch.zeros(shape, dtype=model.dtype) for _ in range(cfg.n_layer)]
            self.v = [torch.zeros(shape, dtype=model.dtype) for _ in range(cfg.n_layer)]
        else:
            self.caches = [KVCache(cfg, dtype=model.dtype) for _ in prompts]
        self.passes = 0

    # -- bytes --------------------------------------------------------------------------------
    def payload_bytes(self) -> int:
        """Bytes of the K/V actually holding positions: 2·L·H_kv·d·b·Σ lengths."""
        cfg = self.model.cfg
        per_pos = 2 * cfg.n_layer * cfg.n_kv_head * cfg.head_dim * self.model.dtype.itemsize
        return per_pos * sum(r.length for r in self.requests)

    def held_bytes(self) -> int:
        """Bytes the layout holds for the batch: padded = the whole (B, S_max) block; ragged =
        each request's filled cache slices (measured from the tensors)."""
        if self.layout == "padded":
            return sum(t.numel() * t.element_size() for t in self.k + self.v)
        return sum(c.nbytes for c in self.caches)

    # -- one forward pass for the active requests ---------------------------------------------
    @torch.no_grad()
    def _forward(self, active: list[int], ids: list[list[int]], starts: list[int]) -> None:
        """One pass of ``GPT.forward`` for the ``active`` requests: request i brings ``ids[i]``
        new tokens at positions ``starts[i] ..`` (right-padded to the longest; the padded query
        rows are computed and ignored)."""
        T = max(len(x) for x in ids)
        tok = torch.zeros(len(active), T, dtype=torch.long)
        for i, x in enumerate(ids):
            tok[i, : len(x)] = torch.tensor(x)
        view = _BatchView(self, active, starts, [len(x) for x in ids])
        logits, atts = self.model(tok, view)  # (B, T, vocab), n_layer × (B, n_head, T, S)
        for i, r in enumerate(active):
            req, n, s = self.requests[r], len(ids[i]), starts[i]
            req.logits.append(logits[i, n - 1])
            req.att.append(np.stack([a[i, :, :n, : s + n].numpy() for a in atts]))  # (n_layer, n_head, n, s+n)
            req.tokens.append(int(torch.argmax(logits[i, n - 1])))
        self.passes += 1

    def prefill(self) -> None:
        """One pass over every prompt (right-padded to the longest)."""
        if self.passes:
            raise ValueError("this batch has already been prefilled")
        self._forward(list(range(len(self.requests))), [r.prompt for r in self.requests], [0] * len(self.requests))

    def step(self) -> list[int]:
        """One decode pass for every unfinished request; returns the indices that took part.
        Finished requests have left the batch."""
        active = [i for i, r in enumerate(self.requests) if not r.finished]
        if active:
            self._forward(
                active, [[self.requests[i].tokens[-1]] for i in active], [self.requests[i].length for i in active]
            )
        return active

    def run(self) -> None:
        """Prefill, then step until every request is finished."""
        if not self.passes:
            self.prefill()
        while self.step():
            pass


class _BatchView:
    """The cache one batched forward pass sees (the protocol of ``KVCache``, see ``GPT.forward``):
    one row per active request, with its own positions, its own keys only, and a mask that lets
    query t of request i read slots 0 … starts[i] + t of that request alone."""

    def __init__(self, batch: Batch, active: list[int], starts: list[int], lengths: list[int]):
        self.batch, self.active, self.lengths = batch, active, lengths
        self.starts = torch.tensor(starts)  # (B,)

    def check_room(self, t_new: int) -> None:
        pass  # every request's budget was checked against the window when the batch was made

    def positions(self, t_new: int) -> torch.Tensor:
        """``(B, t_new)``: each request's own absolute positions (padded queries clamped in range)."""
        pos = self.starts.unsqueeze(1) + torch.arange(t_new)  # (B, t_new)
        return pos.clamp(max=self.batch.model.cfg.block_size - 1)

    def mask(self, t_new: int) -> torch.Tensor:
        """``(B, t_new, S)``: key slot j ≤ starts[i] + t. Slots past a request's own length (padding,
        or another request's longer row) are never readable."""
        S = self.batch.s_max if self.batch.layout == "padded" else int((self.starts + torch.tensor(self.lengths)).max())
        q_slot = self.starts.view(-1, 1, 1) + torch.arange(t_new).view(1, -1, 1)  # (B, t_new, 1)
        return torch.arange(S).view(1, 1, -1) <= q_slot

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor):
        """Store request i's ``lengths[i]`` new K/V ``(1, n_kv_head, n, hd)`` in its own row (padded)
        or its own ``KVCache`` (ragged); return every active row's keys and values
        ``(B, n_kv_head, S, hd)``, zeros past a request's length (masked)."""
        b = self.batch
        if b.layout == "padded":
            for i, (r, s, n) in enumerate(zip(self.active, self.starts.tolist(), self.lengths, strict=True)):
                b.k[layer][r, :, s : s + n] = k[i, :, :n]
                b.v[layer][r, :, s : s + n] = v[i, :, :n]
            rows = torch.tensor(self.active)
            return b.k[layer][rows], b.v[layer][rows]
        kv = [
            b.caches[r].update(layer, k[i : i + 1, :, :n], v[i : i + 1, :, :n])
            for i, (r, n) in enumerate(zip(self.active, self.lengths, strict=True))
        ]
        S = max(kk.shape[2] for kk, _ in kv)
        pad = lambda t: torch.nn.functional.pad(t, (0, 0, 0, S - t.shape[2]))  # noqa: E731 — zeros after the row's length
        return torch.cat([pad(kk) for kk, _ in kv]), torch.cat([pad(vv) for _, vv in kv])

    def advance(self, t_new: int) -> None:
        if self.batch.layout == "ragged":
            for r, n in zip(self.active, self.lengths, strict=True):
                self.batch.caches[r].advance(n)
