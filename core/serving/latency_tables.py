"""The latency page's tables: the editable trace rows and the per-request, summary and
conventions tables built from ``core.serving.latency``'s measures. Times in ms, shown to 2 decimals.
"""

from __future__ import annotations

import math

import numpy as np

from core.serving.latency import RequestTrace, check_trace, conventions, parse_times, summarize_request
from core.text import plural, quoted
from core.typed_numbers import normalize

COLUMNS = ("request", "arrival (ms)", "prefill starts (ms)", "tokens emitted at (ms)", "prompt positions")


def editor_rows(traces: list[RequestTrace]) -> list[dict]:
    """One editable row per trace (columns ``COLUMNS``; emissions as text "150, 190"; prompt positions
    as text too, "" when not given: a 0 there read as a prompt of no positions beside the chart's "no
    prompt length given", and a number column shows a blank cell as a grey "None")."""
    return [
        dict(
            zip(
                COLUMNS,
                (
                    t.name,
                    t.arrival_ms,
                    t.prefill_start_ms,
                    ", ".join(f"{e:g}" for e in t.emissions_ms),
                    str(t.prompt_positions or ""),
                ),
                strict=True,
            )
        )
        for t in traces
    ]


def traces_from_rows(rows: list[dict]) -> list[RequestTrace]:
    """Traces from edited rows (``editor_rows``' columns; a blank cell counts as 0, a blank name as
    "request i"). Raises ``ValueError`` naming the row for unreadable times or out-of-order ones, and
    for no rows at all."""
    if not rows:
        raise ValueError("no requests: add a row (a name and its times)")
    traces = []
    for i, r in enumerate(rows, 1):
        name = str(r.get("request") or f"request {i}")
        try:
            arrival, start = float(r.get("arrival (ms)") or 0), float(r.get("prefill starts (ms)") or 0)
            positions = prompt_positions(r.get("prompt positions"))
            emissions = parse_times(r.get("tokens emitted at (ms)"))
        except (TypeError, ValueError) as err:
            raise ValueError(f"row {i} ({name}): {err}") from None
        traces.append(RequestTrace(name, arrival, start, emissions, positions))
    for t in traces:
        check_trace(t)
    return traces


def prompt_positions(cell) -> int:
    """A prompt-positions cell as a count: blank (None, "") is 0, not given; "8", 8, 8.0 and other
    scripts' digits ("٨") are 8, "1,000" is 1,000 (read through the answer boxes' ``normalize``).
    Raises ``ValueError`` for anything else ("8 tokens", "1.5")."""
    text = normalize(str(cell if cell is not None else ""))
    if not text:
        return 0
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value.is_integer():
        raise ValueError(f"prompt positions {quoted(text, 20)} is not a whole number of positions")
    return int(value)


def shared_times(traces: list[RequestTrace]) -> list[str]:
    """One sentence per request whose tokens share an emission time ("Tokens 2 and 3 of 'r' share
    150 ms", the name quoted as typed): one forward pass emitted them together (speculative
    decoding's accepted run does), so their gap is 0 ms and their markers sit on one another."""
    notes = []
    for t in traces:
        groups: dict[float, list[int]] = {}
        for k, e in enumerate(t.emissions_ms, 1):
            groups.setdefault(e, []).append(k)
        for e, ks in groups.items():
            if len(ks) > 1:
                which = ", ".join(map(str, ks[:-1])) + f" and {ks[-1]}"
                shared = f"Tokens {which} of {quoted(t.name)} share {e:g} ms"
                notes.append(f"{shared}: one pass emitted them, a gap of 0 ms.")
    return notes


def _ms(v: float | None, missing: str = "—") -> str:
    return missing if v is None else f"{v:,.2f}"


def request_rows(traces: list[RequestTrace]) -> list[dict]:
    """Per request: TTFT, gaps, TPOT, tokens/s after the first, and the full-duration average
    (a different quantity, labelled apart); a request with no tokens is shown as an error."""
    rows = []
    for t in traces:
        if not t.emissions_ms:
            rows.append(
                {"request": t.name, "TTFT (ms)": "error: no tokens"}
                | dict.fromkeys(
                    ("gaps (ms)", "TPOT (ms)", "tokens/s after the first", "full duration / tokens (ms)"), "—"
                )
            )
            continue
        r = summarize_request(t.arrival_ms, t.emissions_ms)
        rows.append(
            {
                "request": t.name,
                "TTFT (ms)": _ms(r.ttft_ms),
                "gaps (ms)": ", ".join(_ms(g) for g in r.gaps_ms) or "—",
                "TPOT (ms)": _ms(r.tpot_ms, "missing (one token)"),
                "tokens/s after the first": "—" if r.tokens_per_s is None else f"{r.tokens_per_s:,.1f}",
                "full duration / tokens (ms)": _ms(r.full_average_ms),
            }
        )
    return rows


SUMMARY_MEASURES = (
    ("TTFT", "ttft_ms", "request"),
    ("TPOT (per request: mean of its gaps)", "tpot_ms", "request"),
    ("ITL (every gap, pooled)", "itl_ms", "gap"),
    ("end to end (arrival → last token)", "e2e_ms", "request"),
)
# What the summary's TPOT and ITL rows count, and the percentile rule (core.serving.latency's module note).
ITL_NOTE = (
    "TPOT: one value per request, (tₙ − t₁)/(n − 1), so each request weighs the same. ITL (inter-token "
    "latency), as vLLM's serving benchmark and genai-perf report it: every gap between consecutive tokens of "
    "every request, pooled, so a long request weighs more and a single stall shows in p90/p99 where a request's "
    "mean hides it. A one-token request has a TTFT but no TPOT and no gap. Percentiles: numpy's default "
    "(`np.percentile`, linear interpolation between sorted values, as vLLM computes them)"
)


def itl_note(gaps: list[float], shown: int = 6) -> str:
    """``ITL_NOTE`` with its percentile worked on the trace's own gaps (ms): Exercise 1's 50 and 60 give
    "of this trace's gaps 50, 60 ms, p90 = 59 ms" (never another example's numbers); no example without gaps."""
    if not gaps:
        return ITL_NOTE + "; this trace has no gap between tokens."
    ordered = sorted(gaps)
    listed = ", ".join(f"{g:,.6g}" for g in ordered[:shown]) + (
        f", … ({len(gaps):,} gaps)" if len(gaps) > shown else ""
    )
    p90 = float(np.percentile(np.asarray(gaps, dtype=float), 90))
    return ITL_NOTE + f": of this trace's gaps {listed} ms, p90 = {p90:,.6g} ms."


def summary_rows(summary: dict) -> list[dict]:
    """``summarize_traces``' statistics as table rows: TTFT, TPOT, ITL, end to end, each with how many values it
    counts ("2 requests", "5 gaps")."""
    return [
        {"measure": name, "values counted": plural(summary[key]["count"], unit)}
        | {f"{stat} (ms)": _ms(summary[key][stat]) for stat in ("mean", "p50", "p90", "p99")}
        for name, key, unit in SUMMARY_MEASURES
    ]


def convention_rows(groups: dict[str, list[RequestTrace]]) -> list[dict]:
    """``conventions`` as table rows, each with what it measures: one value column per group of
    traces, named by its key ("value (ms)" for a single group named ""). Traces of different runs
    (the same requests with the KV cache and by recompute) are never pooled into one value."""
    convs = {f"value (ms){name}": conventions(traces) for name, traces in groups.items()}
    meaning = {
        "tpot_request_weighted": (
            "TPOT, request-weighted",
            "mean over requests of (tₙ − t₁)/(n − 1); excludes the first token",
        ),
        "itl_token_weighted": (
            "inter-token latency, token-weighted",
            "every between-token gap pooled: long requests weigh more",
        ),
        "per_token_incl_first_wait": (
            "per-token time including the first wait",
            "(tₙ − a)/n per request: exercise 5's mislabelled “TPOT”",
        ),
    }
    return [
        {"convention": name, **{col: _ms(conv[key]) for col, conv in convs.items()}, "what it is": what}
        for key, (name, what) in meaning.items()
    ]
