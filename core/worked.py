"""Ch. 19's worked example: Chapter 10's cast extended with "on", through the model's own
``attend`` (the same code every layer of the transformer runs)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from core.model import attend, causal_mask

TOKENS = ("the", "cat", "sat", "on")
# Ch. 19's supplied vectors. Only q_on is given for the queries; the earlier rows' queries are
# placeholders (Ch. 19 does not state them) so the whole 4×4 grid can be drawn, and editable.
DEFAULTS = {
    "q": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 1.0]],
    "k": [[1.0, -1.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]],
    "v": [[0.0, 2.0], [3.0, 1.0], [1.0, 0.0], [0.0, 1.0]],
}


@dataclass(frozen=True)
class Worked:
    """Scores and shares ``(4, 4)`` (NaN where masked), exact outputs ``(4, d)``, and for the
    last row ("on"): shares rounded to two decimals and the value mix from those rounded shares."""

    scores: np.ndarray
    shares: np.ndarray
    outputs: np.ndarray
    last_rounded_shares: np.ndarray
    last_mix_from_rounded: np.ndarray
    scale: float


def worked_example(q, k, v, scaled: bool = False) -> Worked:
    """Run the cast through ``attend`` in float64. ``scaled`` applies the usual 1/√d (Ch. 19
    omits it). Raises ``ValueError`` for non-finite entries or mismatched shapes."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    if not (q.shape == k.shape and k.shape[0] == v.shape[0] and q.ndim == 2 and v.ndim == 2):
        raise ValueError("q and k need the same shape (positions × d); v one row per position")
    if not all(np.all(np.isfinite(a)) for a in (q, k, v)):
        raise ValueError("every vector entry must be a finite number")
    scale = 1 / math.sqrt(q.shape[1]) if scaled else 1.0
    t = lambda a: torch.from_numpy(a)[None, None]  # noqa: E731 — (1, 1, T, d)
    y, att, scores = attend(t(q), t(k), t(v), causal_mask(len(q), len(q)).unsqueeze(1), scale)
    att, scores = att[0, 0].numpy(), scores[0, 0].numpy()
    mask = np.triu(np.ones_like(att, dtype=bool), 1)
    rounded = np.round(att[-1], 2)
    return Worked(
        np.where(mask, np.nan, scores), np.where(mask, np.nan, att), y[0, 0].numpy(), rounded, rounded @ v, scale
    )
