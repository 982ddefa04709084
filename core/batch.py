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

from core.kv_cache import KVCache
from core.model import GPT, apply_rope, attend, rope_tables

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
        self.cos, self.sin = rope_tables(cfg, model.dtype)
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
        model, cfg = self.model, self.model.cfg
        B, T = len(active), max(len(x) for x in ids)
        hd, n_rep = cfg.head_dim, cfg.n_head // cfg.n_kv_head
        tok = torch.zeros(B, T, dtype=torch.long)
        for i, x in enumerate(ids):
            tok[i, : len(x)] = torch.tensor(x)  # right padding; padded query rows are ignored
        pos = torch.tensor([[s + t for t in range(T)] for s in starts]).clamp(max=cfg.block_size - 1)  # (B, T)
        cos, sin = self.cos[pos].unsqueeze(1), self.sin[pos].unsqueeze(1)  # (B, 1, T, hd)
        x = model.embed_tokens(tok)  # (B, T, C)
        atts = [[None] * cfg.n_layer for _ in active]
        for layer, block in enumerate(model.layers):
            a = block.self_attn
            h = block.input_layernorm(x)
            q = apply_rope(a.q_proj(h).view(B, T, cfg.n_head, hd).transpose(1, 2), cos, sin)  # (B, n_head, T, hd)
            k = apply_rope(a.k_proj(h).view(B, T, cfg.n_kv_head, hd).transpose(1, 2), cos, sin)  # (B, n_kv, T, hd)
            v = a.v_proj(h).view(B, T, cfg.n_kv_head, hd).transpose(1, 2)  # (B, n_kv, T, hd)
            y = torch.zeros(B, cfg.n_head, T, hd, dtype=x.dtype)
            if self.layout == "padded":
                rows = torch.tensor(active)
                for i, (r, s, n) in enumerate(zip(active, starts, (len(t) for t in ids), strict=True)):
                    self.k[layer][r, :, s : s + n] = k[i, :, :n]
                    self.v[layer][r, :, s : s + n] = v[i, :, :n]
                K, V = self.k[layer][rows], self.v[layer][rows]  # (B, n_kv, S_max, hd)
                scores = q @ K.repeat_interleave(n_rep, 1).transpose(-2, -1) * hd**-0.5  # (B, n_head, T, S_max)
                # Padding mask: request i may read slots up to its own query position only.
                key_slot = torch.arange(self.s_max).view(1, 1, 1, -1)
                q_slot = torch.tensor(starts).view(-1, 1, 1, 1) + torch.arange(T).view(1, 1, -1, 1)
                att = torch.softmax(scores.masked_fill(key_slot > q_slot, float("-inf")), dim=-1)
                y = att @ V.repeat_interleave(n_rep, 1)  # (B, n_head, T, hd)
                for i, (s, n) in enumerate(zip(starts, (len(t) for t in ids), strict=True)):
                    atts[i][layer] = att[i, :, :n, : s + n].numpy()
            else:
                for i, r in enumerate(active):
                    n, cache = len(ids[i]), self.caches[r]
                    kk, vv = cache.update(layer, k[i : i + 1, :, :n], v[i : i + 1, :, :n])  # (1, n_kv, S, hd)
                    yi, att, _ = attend(
                        q[i : i + 1, :, :n],
                        kk.repeat_interleave(n_rep, 1),
                        vv.repeat_interleave(n_rep, 1),
                        cache.pos,
                        hd**-0.5,
                    )
                    y[i, :, :n] = yi[0]
                    atts[i][layer] = att[0].numpy()
            x = x + a.o_proj(y.transpose(1, 2).reshape(B, T, cfg.n_head * hd))
            x = x + block.mlp(block.post_attention_layernorm(x))
        logits = model.lm_head(model.norm(x))  # (B, T, vocab)
        for i, r in enumerate(active):
            req, n = self.requests[r], len(ids[i])
            if self.layout == "ragged":
                self.caches[r].advance(n)
            req.logits.append(logits[i, n - 1])
            req.att.append(np.stack(atts[i]))
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
