"""Is the cached step the same computation as a full recompute? A limit that fits the precision.

Ch. 30 §30.2: in a deterministic causal model, appending a token does not change an earlier
position's keys and values, so decoding with the KV cache must give the full recompute's logits.
Exactly equal in real arithmetic; in floating point the two paths add the same products in
different orders (a one-row matmul against a T-row one), so they agree only up to rounding.

float32: the limit is ``PER_LAYER · n_layer · eps32 · max|logit|``. Rounding error grows with the
size of the numbers (hence max|logit|) and accumulates through the blocks (hence n_layer). On the
shipped model, 720 greedy steps over six prompts gave at most 9.1 · eps32 · max|logit| in all
(median 1.9, p99 6.3), i.e. about 2.3 per layer; ``PER_LAYER = 8`` leaves a margin of about 3.5×.
A real bug (one cached position dropped) differs by orders of magnitude more (tests check it).
float64: 1e-9 (the two paths agree to ~1e-14).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

PER_LAYER = 8
FLOAT64_LIMIT = 1e-9


@dataclass(frozen=True)
class Equivalence:
    """``diff`` = max |cached − recomputed| logit, the ``limit`` it is held to, whether it is
    within it, and the badge text saying which rule applied."""

    diff: float
    limit: float
    equal: bool
    text: str


def limit_for(dtype: torch.dtype, max_abs_logit: float, n_layer: int) -> tuple[float, str]:
    """The tolerance for ``dtype`` and the rule's name (see the module docstring)."""
    if dtype == torch.float64:
        return FLOAT64_LIMIT, "float64"
    if dtype != torch.float32:
        raise ValueError(f"no equivalence rule for {dtype}: use float32 or float64")
    eps = torch.finfo(torch.float32).eps
    return PER_LAYER * n_layer * eps * max(1.0, max_abs_logit), "float32 rounding"


def equivalence(diff: float, max_abs_logit: float, dtype: torch.dtype, n_layer: int) -> Equivalence:
    """Compare one step's max |cached − recomputed| logit with the limit for its precision.
    Raises ``ValueError`` for a precision without a rule."""
    limit, rule = limit_for(dtype, max_abs_logit, n_layer)
    equal = diff <= limit
    verdict = (
        f"equal within {rule}: Δ = {diff:.1e} ≤ {limit:.0e}" if equal else f"differs: Δ = {diff:.1e} > {limit:.0e}"
    )
    return Equivalence(diff, limit, equal, verdict)
