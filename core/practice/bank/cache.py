"""The cache and the bill: Ch. 30 §30.8 exercises 2 and 3 (Table 30.1, §30.4) and Ch. 19's cache
bill and score grid, computed with ``core.cost.counts`` and ``core.serving.latency``.
"""

from __future__ import annotations

import random

from core.cost import counts as cost
from core.practice.bank import ABOUT_TOL, BYTES_TOL, WORDS, unit_mixups
from core.practice.exercise_text import bytes_text
from core.practice.exercise_types import Exercise, Mistake, Tolerance
from core.practice.exercises import part
from core.serving import latency


def ex2(seed: int) -> Exercise:
    """Ch. 30 exercise 2: cached positions after prefill and after the next pass (Table 30.1)."""
    P = 10 if seed == 0 else random.Random(seed).randrange(5, 61)
    after_prefill, after_next = latency.cache_lengths(latency.RequestTrace("", 0, 0, (1.0, 2.0), P))
    per_pos = cost.kv_cache_bytes(2, 2, 4, 1, 2)["total"]
    kv = cost.kv_cache_bytes(2, 2, 4, after_next, 2)["total"]
    count = Tolerance()
    parts = (
        part(
            "prefill",
            "Cached positions after prefill",
            "number",
            after_prefill,
            "",
            count,
            [
                Mistake(
                    P + 1,
                    "counted the selected token",
                    "The first output is selected, not yet consumed: its keys "
                    "and values appear only when the next forward pass consumes it.",
                ),
                Mistake(P - 1, "off by one", "Every prompt position is cached, the last one included."),
            ],
        ),
        part(
            "next",
            "After the next pass consumes it",
            "number",
            after_next,
            "",
            count,
            [
                Mistake(
                    P + 2,
                    "counted the selected token",
                    "That pass consumes one token (output 1) and only selects output 2; output 2 is not cached yet.",
                ),
                Mistake(
                    P,
                    "consuming adds nothing",
                    "Consuming a token is a forward pass: it appends that token's keys and values in every layer.",
                ),
            ],
        ),
        part(
            "bytes",
            "KV bytes then, Example 30.3's small cache",
            "bytes",
            kv,
            "B",
            BYTES_TOL,
            [
                Mistake(P * per_pos, "cache before consuming", f"That is the cache after prefill ({P} positions)."),
                Mistake(kv / 2, "no factor 2", "Keys and values: the factor 2."),
            ],
        ),
    )
    return Exercise(
        "ch30-2",
        seed,
        "Exercise 2: when a token enters the cache",
        "Ch. 30 §30.8 exercise 2 (Table 30.1)",
        f"A prompt has **{P} positions**. How many cached positions exist immediately after prefill selects the "
        "first output? How many after the next forward pass consumes that output? And how many bytes does "
        "Example 30.3's small cache (2 layers, 2 KV heads, head width 4, 2 bytes per value) hold then?",
        parts,
        (
            "Selecting a token is not a forward pass through the layers for that token.",
            f"One more processed position adds 2 · 2 · 2 · 4 · 2 = {per_pos} bytes in Example 30.3.",
        ),
        f"**{after_prefill}** after prefill, **{after_next}** after consuming the new token: selection itself is not "
        f"a forward pass for that token. Bytes: 2 · 1 · 2 · {after_next} · 2 · 4 · 2 = **{kv:,} bytes**.",
        {"prompt_positions": P},
    )


def ex3(seed: int) -> Exercise:
    """Ch. 30 exercise 3: fewer KV heads and more requests on Example 30.3's larger cache."""
    rng = random.Random(seed)
    if seed == 0:
        L, H0, r, d, T, B, b = 24, 8, 2, 128, 4096, 4, 2
    else:
        L, H0, r = rng.choice([12, 16, 24, 32, 40]), rng.choice([8, 16, 32]), rng.choice([2, 4])
        d, T, B, b = (
            rng.choice([64, 128]),
            rng.choice([1024, 2048, 4096, 8192]),
            rng.randrange(2, 9),
            rng.choice([1, 2]),
        )
    h = H0 // r
    kv = lambda heads, batch: cost.kv_cache_bytes(L, heads, d, T, b, batch)["total"]  # noqa: E731
    right, base = kv(h, B), kv(H0, 1)
    cut, cut_past = ("halved", "You halved the KV heads") if r == 2 else (f"cut to {h}", f"You cut the KV heads to {h}")
    mistakes = [
        Mistake(
            kv(H0, B),
            "KV heads not reduced",
            f"You have {WORDS[B]} requests, but the KV heads were not {cut}: H_kv = {h} now, not {H0}.",
        ),
        Mistake(kv(h, 1), "one request", f"{cut_past}, but one request instead of {WORDS[B]}: B = {B}."),
        Mistake(base, "original cache", "That is the original cache: one request with the original KV heads."),
        Mistake(right / 2, "no factor 2", "Keys and values: the factor 2 (K plus V) is missing."),
        # The question gives no query-head count (it named one in this mistake and a hint): the factor a
        # student can add is the old KV-head count, or 8 for bits; with 8 old heads the two are one number.
        Mistake(right * 8, "bits, not bytes", "That is bits: b is bytes per value, so M is in bytes (divide by 8)."),
        Mistake(
            right * H0,
            "old KV heads as a factor",
            f"H_kv appears once, as the new count ({h}): the old {H0} is not a factor as well.",
        ),
        *unit_mixups(right),
    ]
    parts = (
        part("bytes", "Ideal total cache", "bytes", right, "B", BYTES_TOL, mistakes),
        part("mib", "The same in MiB", "bytes", right, "MiB", BYTES_TOL, mistakes),
    )
    src = "Example 30.3's larger cache" if seed == 0 else "A cache like Example 30.3's larger one"
    per_value = "1 byte" if b == 1 else f"{b} bytes"
    return Exercise(
        "ch30-3",
        seed,
        "Exercise 3: fewer KV heads, more requests",
        "Ch. 30 §30.8 exercise 3 (§30.4)",
        f"{src} has {L} layers, **{H0} KV heads**, head width {d}, {T:,} positions and {per_value} per value: "
        f"for one request {bytes_text(base)}. Now it uses **{h} KV heads** and **{B} equally long requests**. "
        "Keep the other dimensions fixed. Compute the ideal total cache bytes and MiB.",
        parts,
        (
            "M = 2 · B · L · T · H_kv · d · b, in bytes (b bytes per value), with the new H_kv.",
            f"Going from {H0} to {h} KV heads divides the per-request cache by {r}; {B} requests multiply it by {B}.",
            "1 MiB = 2²⁰ = 1,048,576 bytes.",
        ),
        f"M = 2 · {B} · {L} · {T:,} · {h} · {d} · {b} = **{right:,} bytes** = **{right / 2**20:,.4g} MiB**. "
        f"Reducing the KV heads divides the per-request {bytes_text(base)} by {r}; {B} requests multiply "
        f"it by {B}.",
        {
            "n_layer": L,
            "n_kv_head_before": H0,
            "n_kv_head": h,
            "head_dim": d,
            "positions": T,
            "batch": B,
            "bytes_per_value": b,
        },
    )


def cache_bill(seed: int) -> Exercise:
    """Ch. 19 "the cache bill": bytes per token and at a context, for a conventional (MHA) model."""
    rng = random.Random(seed)
    if seed == 0:
        width, L, b, T = 12288, 96, 2, 2048
    else:
        width, L = rng.choice([2048, 4096, 5120, 8192, 12288]), rng.choice([24, 32, 40, 60, 80, 96])
        b, T = rng.choice([1, 2, 4]), rng.choice([1024, 2048, 4096, 8192])
    head_dim = 128  # any split of the width into heads gives the same bytes: H_kv · d = width (MHA)
    per = lambda layers=L, per_value=b: cost.kv_cache_bytes(layers, width // head_dim, head_dim, 1, per_value)["total"]  # noqa: E731
    right = per()
    total = cost.kv_cache_bytes(L, width // head_dim, head_dim, T, b)["total"]
    common = lambda k: [  # noqa: E731
        Mistake(k / 2, "no factor 2", "Keys and values: the factor 2."),
        Mistake(k / L, "one layer", f"Each of the {L} layers stores its own keys and values."),
        Mistake(k * 8, "bits for bytes", f"{b} bytes per number, not {8 * b} (that is the bit count)."),
    ]
    parts = (
        part("per_token", "Bytes per token", "bytes", right, "B", BYTES_TOL, common(right)),
        part("total", f"At {T:,} tokens", "bytes", total, "GB", ABOUT_TOL, [*common(total), *unit_mixups(total)]),
    )
    return Exercise(
        "ch19-cache",
        seed,
        "Ch. 19: the cache bill",
        "Ch. 19 “What the cache stores” (worked example)",
        f"A conventional model, every head with its own keys and values, has **width {width:,}**, **{L} layers** "
        f"and stores **{b} byte{'s' if b > 1 else ''} per number**. How many bytes of keys and values per token? "
        f"About how many GB for **{T:,} tokens**?",
        parts,
        (
            "Per token and layer the cache holds one key and one value vector, each as wide as the model (MHA).",
            "Bytes per token = 2 × width × layers × bytes per number; GB = 10⁹ bytes.",
        ),
        f"2 × {width:,} × {L} × {b} = **{right:,} bytes per token**; × {T:,} = {total:,} bytes ≈ "
        f"**{total / 1e9:.3g} GB** (= {bytes_text(total)}), before other memory.",
        {"width": width, "n_layer": L, "bytes_per_value": b, "tokens": T},
    )


def growth(seed: int) -> Exercise:
    """Ch. 19 "The bill per token": ten times the context, a hundred times the score grid."""
    rng = random.Random(seed)
    n, k = (1000, 10) if seed == 0 else (rng.choice([256, 500, 512, 1000, 2000, 4096]), rng.choice([2, 3, 4, 5, 8]))
    small, big = cost.score_grid(n), cost.score_grid(k * n)
    exact = Tolerance()
    linear = "That is linear growth (the cache's); every query meets every key, so the grid grows as n²."
    masked = "That counts the pairs the causal mask keeps, n(n+1)/2; the question asks before masking."
    parts = (
        part(
            "small",
            f"Scores for {n:,} tokens",
            "number",
            small,
            "",
            exact,
            [
                Mistake(cost.causal_pairs(n), "masked pairs", masked),
                Mistake(
                    n, "linear for quadratic", "That is one decode step's work (n keys); the prompt's grid is n × n."
                ),
            ],
        ),
        part(
            "big",
            f"Scores for {k * n:,} tokens",
            "number",
            big,
            "",
            exact,
            [
                Mistake(cost.causal_pairs(k * n), "masked pairs", masked),
                Mistake(small * k, "linear for quadratic", linear),
            ],
        ),
        part(
            "ratio",
            "By what factor did the work grow?",
            "number",
            big / small,
            "×",
            exact,
            [
                Mistake(k, "linear for quadratic", f"{k}× is the context's growth; the grid grows as its square."),
                Mistake(2 * k, "doubled instead of squared", f"The factor is {k} squared, not {k} doubled."),
            ],
        ),
    )
    times = {2: "twice", 10: "ten times"}.get(k, f"{WORDS.get(k, k)} times")
    return Exercise(
        "ch19-growth",
        seed,
        "Ch. 19: the bill per token",
        "Ch. 19 “The bill per token”",
        f"A prompt of **{n:,} tokens**: how many query–key scores before masking, per layer and head? And for "
        f"**{k * n:,} tokens**? By what factor did the score grid grow when the context grew {times}?",
        parts,
        ("Before masking, every one of n queries is scored against every one of n keys.",),
        f"{n:,}² = **{small:,}**; {k * n:,}² = **{big:,}**: {times} the context means **{k * k}×** the score "
        f"grid, per layer and per head. (The cache grows only {k}×.)",
        {"n": n, "factor": k},
    )
