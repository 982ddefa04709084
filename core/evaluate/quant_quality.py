"""The shipped model, quantized, evaluated: weight-only round-trips and KV-cache quantization on a
fixed held-out set (Ch. 30 §30.6: "four bits" is not a quality result; measure it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from core.decode.kv_cache import KVCache
from core.model.corpus import generate_corpus
from core.model.model import GPT
from core.model.train import encode_stream
from core.quant.model_weights import quantize_weights, weight_storage_bytes


def eval_windows(tok, n_windows: int = 8, block: int = 128, seed: int = 0) -> torch.Tensor:
    """A fixed evaluation set: ``n_windows`` consecutive windows of ``block`` + 1 tokens from
    the held-out documents of the training corpus (the first 1,000 documents, never trained on).
    Returns ``(n_windows, block + 1)`` int64."""
    stream = encode_stream(tok, generate_corpus(24000, seed=seed)[:1000])
    need = n_windows * (block + 1)
    return stream[:need].view(n_windows, block + 1)


def text_windows(tok, n_windows: int = 2, block: int = 64, seed: int = 0) -> torch.Tensor:
    """A short built-in evaluation text for any tokenizer (a loaded checkpoint's): the shipped
    corpus's held-out documents (the travel assistant, the cat on the mat) joined by blank lines,
    encoded as one text, cut into ``n_windows`` consecutive windows of ``block`` + 1 tokens.
    Returns ``(n_windows, block + 1)`` int64. Raises ``ValueError`` if the text is too short."""
    ids = tok.encode("\n\n".join(generate_corpus(200, seed=seed))).ids  # the first 200 are held out
    need = n_windows * (block + 1)
    if len(ids) < need:
        raise ValueError(f"the evaluation text has {len(ids)} tokens, fewer than {need}")
    return torch.tensor(ids[:need], dtype=torch.long).view(n_windows, block + 1)


@dataclass(frozen=True)
class EvalPlan:
    """How much evaluation a page runs: ``n_windows`` windows of ``block`` tokens at each of
    ``bits``; ``held_out`` the shipped model's held-out training windows (``eval_windows``), else
    the short built-in text any tokenizer can read (``text_windows``)."""

    n_windows: int
    block: int
    bits: tuple[int, ...]
    held_out: bool

    def windows(self, tok) -> torch.Tensor:
        make = eval_windows if self.held_out else text_windows
        return make(tok, self.n_windows, self.block)

    def describe(self, name: str, n_params: int | None = None) -> str:
        """The page's caption; with ``n_params`` (a loaded checkpoint) also why the set is short."""
        n = self.n_windows * self.block
        what = (
            "held-out windows that the model never trained on" if self.held_out else "windows of a short built-in text"
        )
        text = f"Evaluation set for {name}: {self.n_windows} {what}, {self.block} tokens each ({n:,} predictions)."
        if n_params is not None:
            text += (
                f" Kept short for a model of {n_params:,} parameters, at {', '.join(map(str, self.bits))} bits: "
                f"{1 + 2 * len(self.bits)} forward passes and {len(self.bits)} rounded copies of its weights, "
                "computed once for the whole class when someone asks."
            )
        return text


# The shipped model: the whole held-out set at every width. A loaded checkpoint is 100-1,000× larger,
# so it gets 128 predictions at three widths (1 + 2 · 3 passes, 3 rounded copies of its weights).
SHIPPED_PLAN = EvalPlan(8, 128, (8, 6, 5, 4, 3, 2), True)
CHECKPOINT_PLAN = EvalPlan(2, 64, (8, 4, 2), False)


@dataclass(frozen=True)
class EvalResult:
    """Mean next-token loss (nats/token), perplexity, logits ``(N, T, vocab)`` and greedy picks ``(N, T)``."""

    loss: float
    perplexity: float
    logits: torch.Tensor
    greedy: torch.Tensor


@torch.no_grad()
def evaluate(model: GPT, windows: torch.Tensor, kv_n_bit: int | None = None) -> EvalResult:
    """Run each window through a prefill with a (possibly quantized) KV cache."""
    x, y = windows[:, :-1], windows[:, 1:]
    cache = KVCache(model.cfg, batch_size=x.shape[0], dtype=model.dtype, kv_n_bit=kv_n_bit)
    logits, _ = model(x, cache)
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]).double(), y.reshape(-1)).item()
    return EvalResult(loss, math.exp(loss), logits, logits.argmax(-1))


@dataclass(frozen=True)
class QuantReport:
    """One row of the comparison table: what changed against the float model. ``n_bit``: the
    bit width of the quantized array (None for the float model)."""

    label: str
    n_bit: int | None
    weight_bytes: int
    kv_bytes_per_token: float
    max_logit_error: float
    greedy_changed: float
    loss: float
    perplexity: float


def compare(
    reference: EvalResult,
    result: EvalResult,
    label: str,
    n_bit: int | None,
    weight_bytes: int,
    kv_bytes_per_token: float,
) -> QuantReport:
    """Max |Δlogit|, share of positions whose greedy token changed, and the losses."""
    err = float((result.logits - reference.logits).abs().max())
    changed = float((result.greedy != reference.greedy).double().mean())
    return QuantReport(label, n_bit, weight_bytes, kv_bytes_per_token, err, changed, result.loss, result.perplexity)


def kv_bytes_per_token(model: GPT, kv_n_bit: int | None, scale_bytes: int = 2) -> float:
    """KV payload per token: 2·L·H_kv·d values at ``kv_n_bit`` (None: float32) plus one fp16
    scale per stored vector (2·L·H_kv of them) when quantized."""
    cfg = model.cfg
    vectors = 2 * cfg.n_layer * cfg.n_kv_head
    if kv_n_bit is None:
        return float(vectors * cfg.head_dim * 4)
    return float(vectors * (cfg.head_dim * kv_n_bit / 8 + scale_bytes))


def sweep(
    model: GPT, windows: torch.Tensor, bits=(8, 6, 5, 4, 3, 2), group_size: int | None = 32, rounding: str = "half_even"
) -> dict[str, list[QuantReport]]:
    """Weight-only and KV-only quantization across bit widths, against the float model."""
    ref = evaluate(model, windows)
    base = compare(ref, ref, "float32", None, weight_storage_bytes(model, None), kv_bytes_per_token(model, None))
    weights, kv = [base], [base]
    for b in bits:
        qm = quantize_weights(model, b, group_size, rounding)
        weights.append(
            compare(
                ref,
                evaluate(qm, windows),
                f"{b}-bit weights",
                b,
                weight_storage_bytes(model, b, group_size),
                kv_bytes_per_token(model, None),
            )
        )
        kv.append(
            compare(
                ref,
                evaluate(model, windows, kv_n_bit=b),
                f"{b}-bit KV cache",
                b,
                weight_storage_bytes(model, None),
                kv_bytes_per_token(model, b),
            )
        )
    return {"weights": weights, "kv_cache": kv}


def first_divergence(a: list[int], b: list[int]) -> int | None:
    """Index of the first position where two token lists differ (None if one is a prefix of the other)."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return None


def until_end(tokens: list[int], end: int) -> list[int]:
    """Tokens up to and including the first ``end`` token: the request is over there."""
    return tokens[: tokens.index(end) + 1] if end in tokens else list(tokens)


@dataclass(frozen=True)
class Divergence:
    """Two greedy continuations cut at their end token, and the index of the first output token
    where they differ (None: identical as far as both go)."""

    reference: list[int]
    other: list[int]
    at: int | None


def divergence(reference: list[int], other: list[int], end: int) -> Divergence:
    """Compare two continuations of the same prompt, each up to its first ``end`` token."""
    a, b = until_end(reference, end), until_end(other, end)
    return Divergence(a, b, first_divergence(a, b))


__all__ = ["np"]
