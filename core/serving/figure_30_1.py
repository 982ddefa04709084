"""Figure 30.1 as Ch. 30 §30.2 draws it, for any request trace: three columns (known prompt, first decode,
later outputs), each a numbered list of steps with the chapter's step-kind labels, on the input and the output
side, and a note under each column. The bytes are M = 2·B·L·T·H_kv·d·b (§30.4, ``core.cost.counts``) at each
stage's cached positions, for the model whose cache it is (Example 30.3's for the chapter's trace).

The chapter's trace (arrival 0, prefill at 30, outputs at 150, 190, 235, 270 ms; eight prompt positions; Example
30.3's two layers, two KV heads, head width 4, two bytes) gives the chapter's own lines: "Arrival 0 → queue until
30 ms", "K/V for 8 positions: 512 bytes", "9 positions: 576 bytes", "Gaps 40,45,35 → mean 40 ms".
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from core.cost.counts import kv_cache_bytes
from core.cost.kv_shape import KVShape
from core.model.config import GPTConfig
from core.serving.latency import RequestTrace, check_trace
from core.text import plural

# The chapter's step kinds, in its words (Figure 30.1).
OUTSIDE = "Outside the model"
OPERATION = "An operation"
NUMBERS = "A list of numbers"
TEXT = "Text pieces"
# Which side of the model a step is on: what goes in, what the model holds and does, what comes out.
INPUT, MODEL, OUTPUT = "input", "model", "output"
COLUMNS = ("Known prompt", "First decode", "Later outputs")
CAPTION = "Figure 30.1 — Output selection precedes consumption of that token."
WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
GAPS_LISTED = 6  # gaps written out in "Gaps …"; more are counted


@dataclass(frozen=True)
class Step:
    """One numbered step of a column: the chapter's step kind, its side (``INPUT``, ``MODEL``,
    ``OUTPUT``) and its text."""

    kind: str
    side: str
    text: str


@dataclass(frozen=True)
class Column:
    """One of the figure's three columns: its title, its steps top to bottom, the note under it."""

    title: str
    steps: tuple[Step, ...]
    note: str


def ms(v: float) -> str:
    """A time as the chapter writes it: "150", "67.5", "3.07", "1,234.5" (up to 2 decimals, a true minus)."""
    text = f"{abs(v):,.2f}".rstrip("0").rstrip(".")
    return ("−" if v < 0 and text != "0" else "") + text


def _minus(a: float, b: float) -> str:
    """The chapter's subtraction, "150−0"; a negative subtrahend in parentheses, "150−(−5)"."""
    return f"{ms(a)}−" + (f"({ms(b)})" if b < 0 else ms(b))


def words(n: int) -> str:
    """A count as the chapter writes it: "four" up to twelve, digits after."""
    return WORDS[n] if 0 <= n < len(WORDS) else f"{n:,}"


def kv_bytes(shape: KVShape, positions: int) -> int:
    """M for one request of ``positions`` cached positions with ``shape``'s L, H_kv, d and b (bytes)."""
    return kv_cache_bytes(shape.n_layer, shape.n_kv_head, shape.head_dim, positions, shape.bytes_per_value)["total"]


def _queued(t: RequestTrace) -> bool:
    """Whether the request waited before prefill, as written (a measured 0.0003 ms reads "0": no queue)."""
    return ms(t.prefill_start_ms) != ms(t.arrival_ms)


def _known_prompt(t: RequestTrace, shape: KVShape | None, cached: bool) -> Column:
    p, a, s = t.prompt_positions, t.arrival_ms, t.prefill_start_ms
    queue = f"Arrival {ms(a)} → queue until {ms(s)} ms" if _queued(t) else f"Arrival {ms(a)} ms → no queue"
    if p:
        run = f"Prefill positions 1–{p:,}" if p > 1 else "Prefill position 1"
        kv = f"K/V for {plural(p, 'position')}" + (f": {kv_bytes(shape, p):,} bytes" if shape else "")
        kv = kv if cached else kv + " made, then dropped"
    else:
        run, kv = "Prefill the prompt", "K/V for the prompt: its length is not given"
    if t.emissions_ms:
        t1 = t.emissions_ms[0]
        out = Step(TEXT, OUTPUT, f"{ms(t1)} ms: emit output 1")
        said = "TTFT includes queueing" if _queued(t) else "TTFT from arrival (no queue)"
        note = f"{said}: {_minus(t1, a)} = {ms(t1 - a)} ms."
    else:
        out = Step(TEXT, OUTPUT, "no output: the request failed")
        note = "No output: an error to count, not a latency."
    steps = (Step(OUTSIDE, INPUT, queue), Step(OPERATION, MODEL, run), Step(NUMBERS, MODEL, kv), out)
    return Column(COLUMNS[0], steps, note)


def _first_decode(t: RequestTrace, shape: KVShape | None, cached: bool) -> Column:
    n, p = len(t.emissions_ms), t.prompt_positions
    if n < 2:
        said = "no pass consumes output 1: the request stopped" if n == 1 else "nothing to consume"
        note = "One output: TTFT exists, TPOT is missing, not zero." if n == 1 else "No output, so no decode."
        return Column(COLUMNS[1], (Step(TEXT, INPUT, said),), note)
    q = plural(p + 1, "position") if p else "the prompt and output 1"
    if cached:
        run = f"Append new K/V; query {q}"
        kv = f"{q}: {kv_bytes(shape, p + 1):,} bytes" if p and shape else f"K/V for {q}"
    else:
        run = f"Recompute all {q}; no cache kept"
        kv = f"{q}' K/V made again, then dropped" if p else f"K/V for {q} made again, then dropped"
    steps = (
        Step(TEXT, INPUT, "Consume output 1 as new input"),
        Step(OPERATION, MODEL, run),
        Step(NUMBERS, MODEL, kv),
        Step(TEXT, OUTPUT, f"{ms(t.emissions_ms[1])} ms: emit output 2"),
    )
    return Column(COLUMNS[1], steps, "An emitted ID does not already contain its layer-by-layer K/V.")


def _gaps(times: tuple[float, ...]) -> str:
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    listed = ",".join(ms(g) for g in gaps[:GAPS_LISTED])
    listed += f",… ({len(gaps):,} gaps)" if len(gaps) > GAPS_LISTED else ""
    mean = (times[-1] - times[0]) / len(gaps)
    return f"Gap{'s' if len(gaps) > 1 else ''} {listed} → mean {ms(mean)} ms"


def _later_outputs(t: RequestTrace, cached: bool) -> Column:
    times, p = t.emissions_ms, t.prompt_positions
    n = len(times)
    if n < 2:
        note = "One output has no TPOT." if n == 1 else "No outputs: no TTFT and no TPOT."
        return Column(COLUMNS[2], (Step(TEXT, OUTPUT, "no later outputs"),), note)
    steps = []
    if n >= 3:
        length = f"; cache length {p + 2:,}" if p and cached else ""
        steps.append(Step(TEXT, OUTPUT, f"{ms(times[2])} ms: output 3{length}"))
    if n >= 5:
        steps.append(Step(TEXT, OUTPUT, f"outputs 4–{n - 1}" if n > 5 else "output 4"))
    if n >= 4:
        steps.append(Step(TEXT, OUTPUT, f"{ms(times[-1])} ms: output {n}"))
    if n == 2:
        steps.append(Step(TEXT, OUTPUT, "no outputs after output 2"))
    steps.append(Step(OPERATION, MODEL, _gaps(times)))
    intervals = "one later interval" if n == 2 else f"{words(n - 1)} later intervals"
    note = f"{words(n).capitalize()} outputs form {intervals}; one output would have no TPOT."
    return Column(COLUMNS[2], tuple(steps), note)


def figure_30_1(trace: RequestTrace, shape: KVShape | None, cached: bool = True) -> tuple[Column, Column, Column]:
    """Figure 30.1's three columns for ``trace``: bytes from ``shape``'s L, H_kv, d, b (None: no bytes stated);
    ``cached`` False for a request served by recomputing the whole prefix (no cache is kept between passes).
    A prompt of 0 positions means "not given" (Exercise 1): no positions or bytes are stated. One output: no
    decode column and no gaps; no output: an error. Raises ``ValueError`` for a trace out of order
    (``core.serving.latency.check_trace``)."""
    check_trace(trace)
    return _known_prompt(trace, shape, cached), _first_decode(trace, shape, cached), _later_outputs(trace, cached)


def stopped_cache(trace: RequestTrace) -> int | None:
    """Positions cached after the last forward pass of ``trace`` (Table 30.1): the prompt and every output but
    the last, which no pass consumed. None when the prompt length is not given or nothing was emitted."""
    if not trace.prompt_positions or not trace.emissions_ms:
        return None
    return trace.prompt_positions + len(trace.emissions_ms) - 1


def notes(trace: RequestTrace, supplied: bool, cached: bool = True) -> list[str]:
    """The chapter's sentences about what this trace's numbers are and are not (Ch. 30 §30.2, §30.3, §30.6),
    with this trace's numbers: TTFT from the start of prefill answers another question; 1000/TPOT is the pace
    after the first token, not a throughput; a failed request is counted, not dropped; where the cache stands
    after stopping (``cached`` False: none is kept). ``supplied``: the trace was typed in (a teaching scenario),
    not measured here."""
    out = []
    times, a, s = trace.emissions_ms, trace.arrival_ms, trace.prefill_start_ms
    if times and _queued(trace):
        out.append(
            f"TTFT is {_minus(times[0], a)} = {ms(times[0] - a)} ms. Measuring only {_minus(times[0], s)} = "
            f"{ms(times[0] - s)} ms would omit the queue and answer a different question."
        )
    if len(times) >= 2 and times[-1] > times[0]:
        tpot = (times[-1] - times[0]) / (len(times) - 1)
        out.append(
            f"The reciprocal of TPOT, 1000/{ms(tpot)} = {ms(1000 / tpot)} output tokens per second, describes this "
            "post-first-token pace, not the entire request's throughput or a multi-request server rate."
        )
    out.append(
        "A failed request that emits nothing belongs in an error count; dropping it silently can make latency "
        "and quality appear better."
    )
    if cached and (kept := stopped_cache(trace)) is not None:
        out.append(
            f"Output {len(times)} is emitted but never consumed: the last pass left K/V for {kept:,} positions. "
            "A particular server may retain or discard different amounts after stopping; its trace must state "
            "which point is measured."
        )
    if supplied:
        ttft = f"{ms(times[0] - a)} ms TTFT" if times else "timing"
        out.append(
            "This trace is supplied, not measured: a teaching scenario, not a hardware benchmark or a measurement of "
            f"this model, so its {ttft} cannot be cited as this model's measured latency."
        )
    return out


def model_shape(cfg: GPTConfig, dtype: torch.dtype, name: str) -> KVShape:
    """The terms of M for a model's own cache: its L, H_kv and d, and b = the bytes of one ``dtype`` value."""
    b = torch.finfo(dtype).bits // 8
    return KVShape(name, cfg.n_layer, cfg.n_head, cfg.n_kv_head, cfg.head_dim, cfg.n_embd, b, cfg.block_size)


def bytes_source(shape: KVShape) -> str:
    """Where the figure's bytes come from, in words: "bytes from M = 2·B·L·T·H_kv·d·b, Ch. 30 Example 30.3: 2 layers,
    2 KV heads, head width 4, b = 2 bytes"."""
    return f"bytes from M = 2·B·L·T·H_kv·d·b, {shape.name}: {shape.terms}, b = {shape.bytes_per_value:g} bytes"
