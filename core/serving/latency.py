"""Latency from named timestamps: TTFT, inter-token gaps, TPOT and ITL (Ch. 30 §30.3).

All times are milliseconds on one clock. With arrival ``a`` and emission times
``t_1 .. t_n``: TTFT = t_1 − a (queueing included); gaps t_i − t_{i−1};
TPOT = (t_n − t_1)/(n − 1), missing (``None``) when n = 1; the full-duration average
(t_n − a)/n is a different quantity and is labelled separately.

Over several requests two per-token figures are reported side by side, as vLLM's serving benchmark
(``benchmarks/benchmark_serving.py``: ``tpots`` and ``itls``) and genai-perf's "Inter Token Latency" (one
value per response, i.e. per gap when each response carries one token) report them:
- TPOT: one value per request, the mean of its gaps; its statistics weigh every request the same;
- ITL (inter-token latency): every gap of every request pooled into one list; a long request weighs more,
  and one stall shows in the upper percentiles where a request's mean hides it. A one-token request
  contributes no gap. (NVIDIA's AIPerf, genai-perf's successor, calls the per-request mean "ITL" and the
  pooled gaps "inter-chunk latency": always say which.)
Percentiles are numpy's default (``np.percentile``, method "linear"), as vLLM's benchmark computes them.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass

import numpy as np

from core.text import quoted
from core.typed_numbers import read_number, split_items


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


# ---- traces of several requests -----------------------------------------------------------------


@dataclass(frozen=True)
class RequestTrace:
    """One request on one clock (ms): arrival, start of prefill, emission times, and the prompt
    length in positions (for the cache length after each forward pass; 0 = not given, as in
    Exercise 1, and then no cache lengths are shown). No emissions = an error."""

    name: str
    arrival_ms: float
    prefill_start_ms: float
    emissions_ms: tuple[float, ...]
    prompt_positions: int = 0


def parse_times(text: str) -> tuple[float, ...]:
    """Times in ms from text like "150, 190, 235, 270" or "150; 190"; empty text gives (). Read by
    ``core.typed_numbers`` (one rule for every box: "1,500" is one time, 1500 ms, since items are separated
    by ";", ", " or spaces; "1,5" is refused with both readings). Raises ``ValueError`` naming an entry that
    is not a finite number."""
    out = []
    for i, part in enumerate(split_items(text), 1):
        try:
            v = float(read_number(part, in_list=True)[0])
        except ValueError as err:
            if "reads as" in str(err):
                raise ValueError(f"time {i}: {err}") from None
            raise ValueError(f"time {i} ({quoted(part, 20)}) is not a number of milliseconds") from None
        if not math.isfinite(v):
            raise ValueError(f"time {i} ({quoted(part, 20)}) is not a finite number of milliseconds")
        out.append(v)
    return tuple(out)


# The clock's reach: 10¹² ms is about 32 years. Times near float's largest (1.7e308) read, but their
# sums and gaps overflow to inf in the summaries and the chart cannot place them.
MAX_MS = 1e12
# Prompt positions past a billion belong to no model's context window; their labels would only overflow the chart.
MAX_PROMPT_POSITIONS = 10**9


def check_trace(t: RequestTrace) -> None:
    """Raise ``ValueError`` if the trace's times are out of order: prefill before arrival,
    an emission before prefill starts, or emissions that decrease; if any time lies beyond
    ±``MAX_MS``; or if the prompt's positions are negative or past ``MAX_PROMPT_POSITIONS``."""
    if not (math.isfinite(t.arrival_ms) and math.isfinite(t.prefill_start_ms)):
        raise ValueError(f"{t.name}: arrival and prefill start must be finite numbers")
    if far := [v for v in (t.arrival_ms, t.prefill_start_ms, *t.emissions_ms) if abs(v) > MAX_MS]:
        raise ValueError(f"{t.name}: {far[0]:g} ms is past this page's clock (up to 10¹² ms, about 32 years)")
    if t.prompt_positions < 0:
        raise ValueError(f"{t.name}: a prompt cannot have {t.prompt_positions} positions")
    if t.prompt_positions > MAX_PROMPT_POSITIONS:
        raise ValueError(f"{t.name}: {t.prompt_positions:.3g} prompt positions is past this page's reach (up to 10⁹)")
    if t.prefill_start_ms < t.arrival_ms:
        raise ValueError(
            f"{t.name}: prefill starts ({t.prefill_start_ms:g} ms) before the request arrives ({t.arrival_ms:g} ms)"
        )
    if t.emissions_ms and t.emissions_ms[0] < t.prefill_start_ms:
        raise ValueError(
            f"{t.name}: the first token ({t.emissions_ms[0]:g} ms) comes before prefill starts "
            f"({t.prefill_start_ms:g} ms)"
        )
    if any(b < a for a, b in zip(t.emissions_ms, t.emissions_ms[1:], strict=False)):
        raise ValueError(f"{t.name}: emission times must not decrease")


def cache_lengths(t: RequestTrace) -> list[int]:
    """Cached positions after the forward pass that produced each output token (Table 30.1):
    prefill of n → n for token 1; token k comes from the pass that consumed token k−1 → n+k−1."""
    return [t.prompt_positions + k for k in range(len(t.emissions_ms))]


def pooled_gaps(traces: list[RequestTrace]) -> list[float]:
    """ITL's values (ms): every gap t_i − t_{i−1} between consecutive emissions of every request, pooled in
    request order (vLLM's ``itls += output.itl``). A one-token request and a failed one contribute none.
    Ch. 30's trace gives 40, 45, 35; with Exercise 1's 50, 60 beside it, five gaps."""
    return [b - a for t in traces for a, b in zip(t.emissions_ms, t.emissions_ms[1:], strict=False)]


def _stats(values: list[float]) -> dict:
    """count, mean, p50, p90, p99. Percentiles as ``np.percentile``'s default (method "linear", Hyndman &
    Fan's type 7): the p-th of n sorted values sits at rank (n − 1)·p/100 (from 0), interpolated linearly
    between its neighbours; of 35, 40, 45: p50 = 40, p90 = 44, p99 = 44.9."""
    if not values:
        return {"count": 0, "mean": None, "p50": None, "p90": None, "p99": None}
    a = np.asarray(values, dtype=float)
    return {
        "count": len(a),
        "mean": float(a.mean()),
        "p50": float(np.percentile(a, 50)),
        "p90": float(np.percentile(a, 90)),
        "p99": float(np.percentile(a, 99)),
    }


def summarize_traces(traces: list[RequestTrace]) -> dict:
    """Serving statistics over requests. Requests that emitted nothing are counted in
    ``"requests/errors"`` and kept out of every latency statistic; one-token requests have a
    TTFT but no TPOT and no gap. Returns ``"requests/total"``, ``"requests/errors"``, ``"tokens/output"``
    and stats dicts ``"ttft_ms"``, ``"tpot_ms"`` (one value per request), ``"itl_ms"`` (one per gap, pooled:
    ``pooled_gaps``) and ``"e2e_ms"`` (arrival → last token)."""
    for t in traces:
        check_trace(t)
    ok = [summarize_request(t.arrival_ms, t.emissions_ms) for t in traces if t.emissions_ms]
    return {
        "requests/total": len(traces),
        "requests/errors": len(traces) - len(ok),
        "tokens/output": sum(r.n_tokens for r in ok),
        "ttft_ms": _stats([r.ttft_ms for r in ok]),
        "tpot_ms": _stats([r.tpot_ms for r in ok if r.tpot_ms is not None]),
        "itl_ms": _stats(pooled_gaps(traces)),
        "e2e_ms": _stats([r.duration_ms for r in ok]),
    }


def conventions(traces: list[RequestTrace]) -> dict:
    """The same trace under the per-token conventions serving benchmarks use (ms):

    - ``"tpot_request_weighted"``: mean over requests of (t_n − t_1)/(n − 1) (n ≥ 2 only);
    - ``"itl_token_weighted"``: every between-token gap pooled, Σ(t_n − t_1) / Σ(n − 1);
    - ``"per_token_incl_first_wait"``: mean over requests of (t_n − a)/n, which includes the
      first-token wait (Ch. 30's 67.5 ms, exercise 5's mislabelled "TPOT").
    Errors (no tokens) are excluded from all three; a value is None when nothing qualifies."""
    ok = [t for t in traces if t.emissions_ms]
    multi = [t for t in ok if len(t.emissions_ms) >= 2]
    tpots = [(t.emissions_ms[-1] - t.emissions_ms[0]) / (len(t.emissions_ms) - 1) for t in multi]
    gaps = sum(len(t.emissions_ms) - 1 for t in multi)
    full = [(t.emissions_ms[-1] - t.arrival_ms) / len(t.emissions_ms) for t in ok]
    return {
        "tpot_request_weighted": sum(tpots) / len(tpots) if tpots else None,
        "itl_token_weighted": (sum(t.emissions_ms[-1] - t.emissions_ms[0] for t in multi) / gaps) if gaps else None,
        "per_token_incl_first_wait": sum(full) / len(full) if full else None,
    }


def traces_to_csv(traces: list[RequestTrace]) -> str:
    """One row per emitted token (or one error row): request, arrival, prefill start, token
    index, emission time, gap, cached positions after the pass. Times in ms."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["request", "arrival_ms", "prefill_start_ms", "token", "emitted_ms", "gap_ms", "cached_positions"])
    for t in traces:
        if not t.emissions_ms:
            w.writerow([t.name, t.arrival_ms, t.prefill_start_ms, "", "", "", "error: no tokens"])
        prev = None
        for k, (e, c) in enumerate(zip(t.emissions_ms, cache_lengths(t), strict=True), 1):
            w.writerow(
                [
                    t.name,
                    f"{t.arrival_ms:.3f}",
                    f"{t.prefill_start_ms:.3f}",
                    k,
                    f"{e:.3f}",
                    "" if prev is None else f"{e - prev:.3f}",
                    c,
                ]
            )
            prev = e
    return buf.getvalue()


CH30_TRACE = RequestTrace("Ch. 30 example", 0.0, 30.0, (150.0, 190.0, 235.0, 270.0), 8)
EXERCISE_1 = RequestTrace("Exercise 1", 10.0, 10.0, (110.0, 160.0, 220.0), 0)


# The latency page's editable traces (its tables are built in ``core.serving.latency_tables``).
EDITABLE = {
    "Ch. 30 example": [CH30_TRACE],
    "Exercise 1": [EXERCISE_1],
    "Edit several requests": [
        CH30_TRACE,
        EXERCISE_1,
        RequestTrace("one token", 0, 20, (90,), 5),
        RequestTrace("failed", 0, 40, (), 6),
    ],
}
