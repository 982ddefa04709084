"""Latency from named timestamps: TTFT, inter-token gaps, TPOT (Ch. 30 §30.3).

All times are milliseconds on one clock. With arrival ``a`` and emission times
``t_1 .. t_n``: TTFT = t_1 − a (queueing included); gaps t_i − t_{i−1};
TPOT = (t_n − t_1)/(n − 1), missing (``None``) when n = 1; the full-duration average
(t_n − a)/n is a different quantity and is labelled separately.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class RequestLatency:
    """One request's latency figures, in ms (``tokens_per_s`` in output tokens per second)."""

    ttft_ms: float
    gaps_ms: tuple[float, ...]
    tpot_ms: float | None
    tokens_per_s: float | None
    duration_ms: float
    full_average_ms: float
    n_tokens: int


def summarize_request(arrival_ms: float, emissions_ms) -> RequestLatency:
    """Latency of one request from its arrival and emission timestamps (ms).

    Raises ``ValueError`` if nothing was emitted (an error, not a latency), a time is not
    finite, an emission precedes the arrival, or emissions are out of order.
    """
    times = [float(t) for t in emissions_ms]
    if not times:
        raise ValueError("the request emitted no tokens: count it as an error, not a latency")
    if not all(math.isfinite(t) for t in [float(arrival_ms), *times]):
        raise ValueError("every time must be a finite number of milliseconds")
    if times[0] < arrival_ms:
        raise ValueError(f"the first emission ({times[0]:g} ms) is before the arrival ({arrival_ms:g} ms)")
    gaps = tuple(b - a for a, b in zip(times, times[1:], strict=False))
    if any(g < 0 for g in gaps):
        raise ValueError("emission times must not decrease")
    n = len(times)
    tpot = (times[-1] - times[0]) / (n - 1) if n > 1 else None
    return RequestLatency(
        ttft_ms=times[0] - arrival_ms,
        gaps_ms=gaps,
        tpot_ms=tpot,
        tokens_per_s=(1000.0 / tpot) if tpot else None,
        duration_ms=times[-1] - arrival_ms,
        full_average_ms=(times[-1] - arrival_ms) / n,
        n_tokens=n,
    )
