"""Latency exercises: Ch. 30 §30.8 exercises 1 and 5 and Example 30.2's trace (§30.3), computed
with ``core.serving.latency``.
"""

from __future__ import annotations

import random

from core.practice.bank import MS_TOL, WORDS, random_trace
from core.practice.exercise_types import Exercise, Mistake, Tolerance
from core.practice.exercises import MISSING_WORDS, part
from core.serving import latency

CH30_1 = "ch30-1"  # Exercise 30.1's id: the Practice page opens on it


def ex1(seed: int) -> Exercise:
    """Ch. 30 exercise 1: TTFT, both gaps, TPOT and duration from arrival and three emissions."""
    rng = random.Random(seed)
    a, _, t = (10.0, 10.0, (110.0, 160.0, 220.0)) if seed == 0 else random_trace(rng, 3, False)
    r = latency.summarize_request(a, t)
    n, (t1, t2, t3) = len(t), t
    first_wait = "“TPOT” including the first wait"
    parts = (
        part(
            "ttft",
            "TTFT",
            "time",
            r.ttft_ms,
            "ms",
            MS_TOL,
            [
                Mistake(
                    t1, "TTFT from clock zero", f"TTFT starts at the request's arrival ({a:g} ms), not at clock zero."
                ),
            ],
        ),
        part(
            "gaps",
            "Both gaps",
            "time_list",
            r.gaps_ms,
            "ms",
            MS_TOL,
            [
                Mistake(
                    (t2 - t1, t3 - t1),
                    "gaps from the first token",
                    "A gap runs from the previous token, not from the first one.",
                ),
                Mistake((r.ttft_ms, t2 - t1), "TTFT as a gap", "The wait for the first token is TTFT, not a gap."),
            ],
        ),
        part(
            "tpot",
            "TPOT",
            "time",
            r.tpot_ms,
            "ms",
            MS_TOL,
            [
                Mistake(
                    r.full_average_ms,
                    "first wait in TPOT",
                    f"{first_wait}: ({t3:g} − {a:g}) / {n} is the "
                    "full-duration average. TPOT starts at the first token.",
                ),
                Mistake(
                    (t3 - t1) / n,
                    "n instead of n − 1",
                    f"{WORDS[n].capitalize()} tokens make {n - 1} gaps: divide by {n - 1}, not {n}.",
                ),
                Mistake(
                    (t3 - a) / (n - 1),
                    "first wait in TPOT",
                    f"{first_wait}: TPOT starts at the first token ({t1:g} ms), not at arrival.",
                ),
            ],
        ),
        part(
            "duration",
            "Complete-request duration",
            "time",
            r.duration_ms,
            "ms",
            MS_TOL,
            [
                Mistake(
                    t3 - t1,
                    "duration from the first token",
                    "The request began at its arrival, not at its first token.",
                ),
                Mistake(t3, "duration from clock zero", f"Measure from the arrival ({a:g} ms), not from clock zero."),
            ],
        ),
    )
    return Exercise(
        CH30_1,
        seed,
        "Exercise 1: TTFT, gaps, TPOT",
        "Ch. 30 §30.8 exercise 1 (definitions: §30.3)",
        f"A request arrives at **{a:g} ms** and emits tokens at **{t1:g}, {t2:g} and {t3:g} ms**. "
        "Calculate TTFT, both gaps, TPOT and the complete-request duration.",
        parts,
        (
            "TTFT = t₁ − a: the wait counts from the request's arrival.",
            "n tokens have n − 1 gaps; TPOT = (tₙ − t₁)/(n − 1), the mean gap after the first token.",
            "The duration runs from arrival to the last token.",
        ),
        f"TTFT = {t1:g} − {a:g} = **{r.ttft_ms:g} ms**; gaps {t2:g} − {t1:g} = **{r.gaps_ms[0]:g}** and "
        f"{t3:g} − {t2:g} = **{r.gaps_ms[1]:g} ms**; TPOT = ({t3:g} − {t1:g}) / ({n} − 1) = **{r.tpot_ms:g} ms**; "
        f"full duration {t3:g} − {a:g} = **{r.duration_ms:g} ms**. The initial wait is excluded only from TPOT.",
        {"arrival_ms": a, "emissions_ms": t},
    )


def trace(seed: int) -> Exercise:
    """Ch. 30 Example 30.2: arrival, start of prefill and four emissions (the lesson's latency stop)."""
    rng = random.Random(seed)
    tr = latency.CH30_TRACE
    a, p, t = (tr.arrival_ms, tr.prefill_start_ms, tr.emissions_ms) if seed == 0 else random_trace(rng, 4, True)
    r = latency.summarize_request(a, t)
    n = len(t)
    parts = (
        part(
            "ttft",
            "TTFT",
            "time",
            r.ttft_ms,
            "ms",
            MS_TOL,
            [
                Mistake(
                    t[0] - p,
                    "TTFT from prefill start",
                    f"That is measured from the start of prefill ({p:g} ms) "
                    f"instead of the arrival ({a:g} ms): it leaves out the {p - a:g} ms queue.",
                ),
                Mistake(t[0], "TTFT from clock zero", f"TTFT starts at the arrival ({a:g} ms), not at clock zero."),
            ],
        ),
        part(
            "gaps",
            "The three gaps",
            "time_list",
            r.gaps_ms,
            "ms",
            MS_TOL,
            [
                Mistake(
                    tuple(x - t[0] for x in t[1:]),
                    "gaps from the first token",
                    "A gap runs from the previous token, not from the first one.",
                ),
            ],
        ),
        part(
            "tpot",
            "TPOT",
            "time",
            r.tpot_ms,
            "ms",
            MS_TOL,
            [
                Mistake(
                    r.full_average_ms,
                    "first wait in TPOT",
                    f"“TPOT” including the first wait: ({t[-1]:g} − {a:g})"
                    f" / {n} = {r.full_average_ms:g} ms is the full-duration average, not the pace after token 1.",
                ),
                Mistake(
                    (t[-1] - t[0]) / n,
                    "n instead of n − 1",
                    f"{WORDS[n].capitalize()} tokens make {n - 1} gaps: divide by {n - 1}.",
                ),
            ],
        ),
        part(
            "rate",
            "Output rate after the first token",
            "number",
            r.tokens_per_s,
            "tokens/s",
            Tolerance(rel=0.005),
            [
                Mistake(
                    1000 / r.full_average_ms,
                    "first wait in TPOT",
                    "That rate includes the first wait: use 1000 / TPOT.",
                ),
                Mistake(
                    r.tpot_ms,
                    "ms as tokens/s",
                    f"{r.tpot_ms:g} is milliseconds per token; tokens per second is 1000 / TPOT.",
                ),
                Mistake(
                    1 / r.tpot_ms,
                    "per ms, not per s",
                    "That is tokens per millisecond: a second has 1,000 of them.",
                ),
            ],
        ),
        part(
            "full",
            "Full duration ÷ tokens",
            "time",
            r.full_average_ms,
            "ms",
            MS_TOL,
            [
                Mistake(r.tpot_ms, "TPOT for full average", "That is TPOT; this average includes the first wait."),
                Mistake(r.duration_ms / (n - 1), "n − 1 instead of n", f"Divide the full duration by all {n} tokens."),
            ],
        ),
    )
    return Exercise(
        "ch30-trace",
        seed,
        "Example 30.2: the latency trace",
        "Ch. 30 §30.3 Example 30.2",
        f"On one clock: the request arrives at **{a:g} ms**, prefill begins at **{p:g} ms**, and tokens are "
        f"emitted at **{', '.join(f'{x:g}' for x in t)} ms**. Find TTFT, the gaps, TPOT, the output rate after "
        "the first token and the full duration divided by the number of tokens.",
        parts,
        (
            "TTFT counts from arrival, so queueing is included.",
            f"{n} tokens make {n - 1} gaps; TPOT = (tₙ − t₁)/(n − 1). The rate is 1000 / TPOT.",
            "The full-duration average (tₙ − a)/n is a different quantity: it includes the first wait.",
        ),
        f"TTFT = {t[0]:g} − {a:g} = **{r.ttft_ms:g} ms** (a {p - a:g} ms queue + {t[0] - p:g} ms to the first "
        f"token; measuring only {t[0] - p:g} ms would omit the queue). Gaps: "
        f"**{', '.join(f'{g:g}' for g in r.gaps_ms)} ms**. TPOT = ({t[-1]:g} − {t[0]:g}) / {n - 1} = "
        f"**{r.tpot_ms:g} ms**; 1000 / {r.tpot_ms:g} = **{r.tokens_per_s:.4g} tokens/s** after the first token. "
        f"Full duration / tokens = ({t[-1]:g} − {a:g}) / {n} = **{r.full_average_ms:g} ms**, a different average "
        "that includes the initial wait.",
        {"arrival_ms": a, "prefill_start_ms": p, "emissions_ms": t},
    )


def ex5(seed: int) -> Exercise:
    """Ch. 30 exercise 5: the mislabelled “TPOT”, corrected, and the one-token case."""
    rng = random.Random(seed)
    tr = latency.CH30_TRACE
    a, t = (tr.arrival_ms, tr.emissions_ms) if seed == 0 else random_trace(rng, 4, False)[::2]
    r = latency.summarize_request(a, t)
    n = len(t)
    parts = (
        part(
            "report",
            "The report's “TPOT”",
            "time",
            r.full_average_ms,
            "ms",
            MS_TOL,
            [
                Mistake(
                    r.tpot_ms,
                    "TPOT for full average",
                    "That is the corrected TPOT; the report divided the total time by the output count.",
                ),
            ],
        ),
        part(
            "tpot",
            "The corrected TPOT",
            "time",
            r.tpot_ms,
            "ms",
            MS_TOL,
            [
                Mistake(
                    r.full_average_ms,
                    "first wait in TPOT",
                    f"“TPOT” including the first wait: {r.full_average_ms:g}"
                    f" ms is what the report computed, not TPOT ({r.tpot_ms:g} ms).",
                ),
                Mistake((t[-1] - t[0]) / n, "n instead of n − 1", f"{n} tokens make {n - 1} gaps."),
                Mistake((t[-1] - a) / (n - 1), "first wait in TPOT", "TPOT starts at the first token, not at arrival."),
            ],
        ),
        part(
            "one",
            "TPOT of a one-token request",
            "choice",
            MISSING_WORDS,
            "",
            Tolerance(),
            [
                Mistake(0.0, "missing as zero", "TPOT is missing, not zero: one token has no gap after it."),
                Mistake(
                    ("zero", "0 ms", "0"),
                    "missing as zero",
                    "TPOT is missing, not zero: one token has no gap after it.",
                ),
                Mistake(
                    ("ttft", "full duration", "duration"),
                    "first wait in TPOT",
                    "TTFT and the duration exist for "
                    "one token, but TPOT averages the gaps after the first token, and there are none.",
                ),
            ],
            options=("0 ms", "the TTFT", "the full duration", "missing"),
        ),
        part(
            "fix",
            "How should the report be corrected?",
            "explain",
            f"Subtract the first emission time from the last and divide by one fewer than the number emitted: "
            f"({t[-1]:g} − {t[0]:g}) / ({n} − 1) = {r.tpot_ms:g} ms, not ({t[-1]:g} − {a:g}) / {n} = "
            f"{r.full_average_ms:g} ms. For one token, report TPOT as missing (not zero). Keep the full-duration "
            "average too, but under its own label.",
        ),
    )
    return Exercise(
        "ch30-5",
        seed,
        "Exercise 5: the mislabelled “TPOT”",
        "Ch. 30 §30.8 exercise 5 (§30.3)",
        f"A request arrives at **{a:g} ms** and emits {n} tokens at **{', '.join(f'{x:g}' for x in t)} ms**. A "
        "report divides the total request time by the output count and labels the result “TPOT after the first "
        "token.” What number did it report, what is the correct TPOT, and what is TPOT for a request that emits "
        "one token? Explain how to correct the report.",
        parts,
        (
            "The report's number includes the wait for the first token.",
            "TPOT = (tₙ − t₁)/(n − 1): it needs at least two tokens.",
        ),
        f"The report: ({t[-1]:g} − {a:g}) / {n} = **{r.full_average_ms:g} ms** (includes the first wait). "
        f"TPOT: ({t[-1]:g} − {t[0]:g}) / ({n} − 1) = **{r.tpot_ms:g} ms**. One token: TPOT is **missing**, not "
        "zero. Preserve full-duration averages separately with their own labels.",
        {"arrival_ms": a, "emissions_ms": t},
    )
