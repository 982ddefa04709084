"""Speculative decoding: a cheap draft proposes k tokens, the target checks them in one pass.

Ch. 19: "With the proper acceptance rule, it preserves the target sampling distribution."
The rule (Leviathan et al., 2023; Chen et al., 2023): accept a proposed token x with
probability min(1, p(x)/q(x)), p the target's and q the draft's distribution at that position;
at the first rejection draw a replacement from norm(max(0, p − q)) and stop; if all k are
accepted draw one bonus token from the target's next distribution. The target's cache is then
rolled back past the rejected positions. Greedy decoding is the case of one-hot p and q, so the
produced text equals plain greedy decoding token for token.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from core.decode.generate import extend, prefill
from core.decode.kv_cache import KVCache
from core.model.model import GPT


def distribution(logits: torch.Tensor, temperature: float) -> np.ndarray:
    """Sampling distribution ``(vocab,)`` in float64: softmax(logits / T), or one-hot on the
    argmax (first maximum) when ``temperature`` is 0 (greedy)."""
    x = logits.detach().double().numpy()
    if temperature == 0:
        p = np.zeros_like(x)
        p[int(np.argmax(x))] = 1.0
        return p
    if not temperature > 0:
        raise ValueError(f"temperature must be 0 (greedy) or positive, got {temperature!r}")
    z = x / temperature
    e = np.exp(z - z.max())
    return e / e.sum()


def draw(p: np.ndarray, rng: np.random.Generator) -> int:
    """One token from ``p`` (argmax when one-hot, so greedy needs no randomness)."""
    if p.max() == 1.0:
        return int(np.argmax(p))
    return int(rng.choice(len(p), p=p))


def accept_or_resample(p: np.ndarray, q: np.ndarray, x: int, rng: np.random.Generator) -> tuple[bool, int | None]:
    """The acceptance rule for one proposed token ``x`` ~ q: returns (accepted, replacement).
    Accept with probability min(1, p(x)/q(x)); else draw from norm(max(0, p − q))."""
    if rng.random() < min(1.0, p[x] / q[x]):
        return True, None
    residual = np.maximum(p - q, 0.0)
    return False, draw(residual / residual.sum(), rng)


@dataclass
class Round:
    """One round: the proposals, accept marks (up to the first rejection), the replacement or
    bonus token, the target cache length before, at the peak (all k checked) and after rollback."""

    proposed: list[int]
    accepted: list[bool]
    final_token: int
    final_is_bonus: bool
    cache_before: int
    cache_peak: int
    cache_after: int

    @property
    def produced(self) -> int:
        """Tokens this round adds: the accepted proposals plus the replacement or bonus."""
        return sum(self.accepted) + 1


@dataclass
class Speculative:
    """One speculative request: ``ids`` are the prompt and produced tokens; the last one is
    pending (chosen, not yet consumed by either model)."""

    target: GPT
    draft: GPT
    k: int
    temperature: float
    seed: int = 0
    ids: list[int] = field(default_factory=list)
    n_prompt: int = 0
    rounds: list[Round] = field(default_factory=list)
    target_passes: int = 0
    draft_passes: int = 0

    def __post_init__(self) -> None:
        if self.target.cfg.vocab_size != self.draft.cfg.vocab_size:
            raise ValueError("draft and target must share one tokenizer (same vocabulary)")
        if not 1 <= self.k <= 16:
            raise ValueError("k must be between 1 and 16 proposed tokens")
        self.rng = np.random.default_rng(self.seed)
        self.t_cache = KVCache(self.target.cfg, dtype=self.target.dtype)
        self.d_cache = KVCache(self.draft.cfg, dtype=self.draft.dtype)

    @torch.no_grad()
    def start(self, prompt: list[int]) -> None:
        """Prefill the target with the prompt and choose output token 1 from it."""
        step = prefill(self.target, prompt, self.t_cache)
        self.target_passes += 1
        self.ids, self.n_prompt = list(prompt), len(prompt)
        self.ids.append(draw(distribution(step.logits, self.temperature), self.rng))

    def _catch_up(self, model: GPT, cache: KVCache) -> torch.Tensor:
        """Consume every token not yet in ``cache`` (the pending one included); return the logits."""
        step = extend(model, self.ids[cache.pos :], cache) if cache.pos else prefill(model, self.ids, cache)
        return step.logits

    @torch.no_grad()
    def round(self) -> Round:
        """Propose k tokens with the draft, check them with one target pass, accept or resample,
        roll the target cache back past rejected positions. Raises ``ValueError`` when the
        context window cannot hold k more positions."""
        k = self.k
        if len(self.ids) + k > self.target.cfg.block_size:
            raise ValueError(f"the context window ({self.target.cfg.block_size}) cannot hold {k} more positions")
        before = self.t_cache.pos
        # Draft: catch up, then propose autoregressively (k draft passes in all).
        logits = self._catch_up(self.draft, self.d_cache)
        proposed, qs = [], []
        for i in range(k):
            q = distribution(logits, self.temperature)
            proposed.append(draw(q, self.rng))
            qs.append(q)
            if i < k - 1:
                logits = extend(self.draft, [proposed[-1]], self.d_cache).logits
        self.draft_passes += k
        # Target: one pass over the pending token and the k proposals.
        step_ids = self.ids[self.t_cache.pos :] + proposed
        x = torch.tensor([step_ids])
        out, _ = self.target(x, self.t_cache)
        self.target_passes += 1
        peak = self.t_cache.pos
        ps = [distribution(out[0, len(step_ids) - k - 1 + i], self.temperature) for i in range(k + 1)]
        accepted, final, bonus = [], None, False
        for i in range(k):
            ok, replacement = accept_or_resample(ps[i], qs[i], proposed[i], self.rng)
            accepted.append(ok)
            if not ok:
                final = replacement
                break
        if final is None:
            final, bonus = draw(ps[k], self.rng), True
        n_acc = sum(accepted)
        self.ids += proposed[:n_acc] + [final]
        # Roll back: keep K/V for every consumed token (all ids but the new pending one).
        self.t_cache.truncate(len(self.ids) - 1)
        self.d_cache.truncate(min(self.d_cache.pos, len(self.ids) - 1))
        r = Round(proposed, accepted, final, bonus, before, peak, self.t_cache.pos)
        self.rounds.append(r)
        return r

    @property
    def produced(self) -> int:
        """Output tokens so far (the pending one included)."""
        return len(self.ids) - self.n_prompt


def check_prompt(prompt_ids: list[int], k: int, block_size: int) -> None:
    """Raise ``ValueError`` naming the problem if a request cannot start: an empty prompt, or one
    that leaves no room in the context window for the pending token and k proposals."""
    if not prompt_ids:
        raise ValueError("the prompt on the decode page is empty (or only spaces): type some text there first")
    if len(prompt_ids) + k >= block_size:
        raise ValueError(
            f"the prompt is {len(prompt_ids):,} tokens: with k = {k} proposals per round it leaves no room in the "
            f"context window of {block_size} positions; shorten the prompt on the decode page or lower k"
        )


@dataclass(frozen=True)
class TokenShare:
    """One token's probability under the target (p), the draft (q), and in the speculative samples."""

    token: int
    p: float
    q: float
    sampled: float


@dataclass(frozen=True)
class AcceptanceCheck:
    """Many first tokens of a round drawn with the acceptance rule, against the target's own
    distribution: total variation ½·Σ|·| of the samples and of the draft from the target, the
    variation sampling alone gives on average (``expected_noise``), and the most likely tokens."""

    temperature: float
    n: int
    tv_samples: float
    tv_draft: float
    tv_noise: float
    top: list[TokenShare]


def total_variation(a: np.ndarray, b: np.ndarray) -> float:
    """½·Σ|a − b| over the vocabulary: 0 for equal distributions, 1 for disjoint ones."""
    return 0.5 * float(np.abs(a - b).sum())


def expected_noise(p: np.ndarray, n: int) -> float:
    """E[½·Σ|p̂ − p|] for ``n`` independent draws from ``p``: the total variation sampling alone
    gives. Exact, from the binomial mean absolute deviation (de Moivre):
    E|X − np| = 2·m·C(n, m)·p^m·(1 − p)^(n − m + 1) with m = ⌊np⌋ + 1."""
    total = 0.0
    for pi in p[(p > 0) & (p < 1)]:
        m = math.floor(n * pi) + 1
        log_mad = (
            math.log(2 * m)
            + math.lgamma(n + 1)
            - math.lgamma(m + 1)
            - math.lgamma(n - m + 1)
            + m * math.log(pi)
            + (n - m + 1) * math.log1p(-pi)
        )
        total += math.exp(log_mad) / n
    return 0.5 * total


@torch.no_grad()
def acceptance_check(
    target: GPT, draft: GPT, prompt: list[int], temperature: float, n: int, seed: int = 0, n_top: int = 8
) -> AcceptanceCheck:
    """At the prompt's next position: draw ``n`` proposals from the draft, apply the acceptance
    rule to each (accept, or resample from norm(max(0, p − q))), and compare the tokens that come
    out with the target's distribution p (Ch. 19: the rule preserves it) and with the draft's q.
    Temperature 0 is shown at temperature 1 (greedy makes both one-hot). The last
    ``block_size − 1`` prompt tokens are used. Raises ``ValueError`` for an empty prompt."""
    if not prompt:
        raise ValueError("the prompt on the decode page is empty (or only spaces): type some text there first")
    ids = torch.tensor([prompt[-target.cfg.block_size + 1 :]])
    t = temperature or 1.0
    p = distribution(target(ids)[0][0, -1], t)
    q = distribution(draft(ids)[0][0, -1], t)
    rng = np.random.default_rng(seed)
    draws = np.empty(n, dtype=np.int64)
    for i in range(n):
        x = int(rng.choice(len(q), p=q))
        ok, replacement = accept_or_resample(p, q, x, rng)
        draws[i] = x if ok else replacement
    sampled = np.bincount(draws, minlength=len(p)) / n
    top = np.argsort(-np.maximum(p, q), kind="stable")[:n_top]
    shares = [TokenShare(int(i), float(p[i]), float(q[i]), float(sampled[i])) for i in top]
    return AcceptanceCheck(t, n, total_variation(sampled, p), total_variation(q, p), expected_noise(p, n), shares)
