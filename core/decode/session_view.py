"""What a decode session shows: its attention as rows per layer and head, and the next-token table.

Read-only views of a ``core.decode.session_types.DecodeSession`` (Ch. 30 §30.3's attention rows; Ch. 19's
next-token distribution), kept apart from the stepping so each file stays focused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from core.decode.generate import SamplingConfig, token_probs

if TYPE_CHECKING:
    from core.decode.session_types import DecodeSession


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


def pass_rows(att: list[np.ndarray], layer: int, head: int | None) -> np.ndarray:
    """One pass's new rows ``(T_new, S)`` for ``layer`` and ``head`` (``None``: mean over heads)."""
    a = att[layer]  # (n_head, T_new, S)
    return a.mean(axis=0) if head is None else a[head]


def next_token_table(sess: DecodeSession, k: int = 10) -> list[tuple[int, float]]:
    """Top-``k`` (token id, probability) under the session's sampling rule, largest first.

    For greedy decoding the probabilities shown are the plain softmax of the logits."""
    if sess.logits is None:
        return []
    return top_tokens(sess.logits, sess.sampling, k)


def top_tokens(logits: torch.Tensor, sampling: SamplingConfig, k: int) -> list[tuple[int, float]]:
    """Top-``k`` (token id, probability) of ``logits`` as drawn under ``sampling`` (greedy: the
    plain softmax, so the runner-ups show). Tokens the rule cannot draw (past its top-k) are left
    out: with top-k 5, ranks 6–10 were arbitrary tokens at 0.0 %."""
    shown = sampling if sampling.strategy == "sample" else SamplingConfig("sample")
    probs = token_probs(logits, shown)
    top = torch.topk(probs, min(k, probs.numel()))
    return [(i, p) for p, i in zip(top.values.tolist(), top.indices.tolist(), strict=True) if p > 0]
