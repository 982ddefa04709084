"""Weight storage: Ch. 30 §30.8 exercise 6 and Ch. 19's table for seven billion parameters,
computed with ``core.cost.counts`` and ``core.cost.shapes``.
"""

from __future__ import annotations

import random

from core.cost import counts as cost
from core.cost.kv_shape import PRESETS
from core.practice.bank import BYTES_TOL, unit_mixups
from core.practice.exercise_text import bytes_text
from core.practice.exercise_types import Exercise, Mistake
from core.practice.exercises import part


def ex6(seed: int) -> Exercise:
    """Ch. 30 exercise 6: weights to fewer bits, the KV cache unchanged."""
    rng = random.Random(seed)
    if seed == 0:
        n, before, after, shape, T = 7 * 10**9, 16, 4, PRESETS["Ch. 30 24-layer example"], 4096
    else:
        n, before, after = rng.choice([1, 3, 7, 8, 13, 34, 70]) * 10**9, rng.choice([16, 32]), rng.choice([8, 4])
        names = ["Ch. 30 24-layer example", "Llama-2-7B (MHA)", "Llama-3-8B (GQA)", "Mistral-7B-v0.1 (GQA)"]
        shape, T = PRESETS[rng.choice(names)], rng.choice([2048, 4096, 8192])
    w = lambda bits: float(cost.weight_bytes(n, bits))  # noqa: E731
    b = shape.bytes_per_value
    kv = lambda per_value: cost.kv_cache_bytes(shape.n_layer, shape.n_kv_head, shape.head_dim, T, per_value)["total"]  # noqa: E731
    right_kv = kv(b)
    bits_msg = "Bits, not bytes: divide the bit count by 8."
    parts = (
        part(
            "before",
            f"Weights at {before} bits",
            "bytes",
            w(before),
            "GB",
            BYTES_TOL,
            [Mistake(n * before, "bits, not bytes", bits_msg), *unit_mixups(w(before))],
        ),
        part(
            "after",
            f"Weights at {after} bits",
            "bytes",
            w(after),
            "GB",
            BYTES_TOL,
            [
                Mistake(n * after, "bits, not bytes", bits_msg),
                Mistake(w(before), "weights unchanged", f"That is still the {before}-bit figure."),
                *unit_mixups(w(after)),
            ],
        ),
        part(
            "kv",
            "KV cache after the switch",
            "bytes",
            right_kv,
            "MiB",
            BYTES_TOL,
            [
                Mistake(
                    kv(b * after / before),
                    "KV quantized with the weights",
                    f"The cache keeps {b:g} bytes per "
                    f"value: only the weights went to {after} bits, so its estimate does not change.",
                ),
                Mistake(right_kv / 2, "no factor 2", "Keys and values: the factor 2."),
                *unit_mixups(right_kv),
            ],
        ),
        part(
            "which",
            "Which estimate changes?",
            "choice",
            ("weights", "weight", "weight payload", "weight bytes", "weight memory", "the weights", "only the weights"),
            options=("the weights", "the KV cache", "both", "neither"),
            mistakes=[
                Mistake(
                    ("kv cache", "kv", "cache", "the kv cache", "both"),
                    "KV quantized with the weights",
                    f"Only the weights: the KV cache stays at {b:g} bytes per value.",
                ),
                Mistake(
                    ("neither", "nothing", "none"), "nothing changes", f"The weight payload shrinks {before // after}×."
                ),
            ],
        ),
        part(
            "why",
            "Why must the same changed-policy examples be rerun?",
            "explain",
            f"Approximate {after}-bit weights can change logits and so the selected tokens (a near tie can flip), "
            "so whether the model still uses the 750-yuan update correctly must be measured again on the same "
            f"prompts, not inferred from the {before}-bit result. The weight payload shrinks (plus scale and "
            "packing overhead); the stated KV payload does not.",
        ),
    )
    return Exercise(
        "ch30-6",
        seed,
        "Exercise 6: four-bit weights, two-byte KV",
        "Ch. 30 §30.8 exercise 6 (§30.4–§30.6)",
        f"An engine serves a model of **{n / 1e9:g} billion parameters** with {before}-bit weights and a KV cache "
        f"of {shape.n_layer} layers, {shape.n_kv_head} KV heads, head width {shape.head_dim} at {T:,} positions, "
        f"{b:g} bytes per value. It switches the weights to **{after} bits** but keeps the KV cache at {b:g} bytes. "
        "Give the weight bytes before and after (GB) and the KV cache after (MiB). Which estimate changes? Why "
        "must the same changed-policy examples be rerun?",
        parts,
        (
            "Weight bytes = parameters × bits ÷ 8; GB = 10⁹ bytes.",
            "M = 2 · B · L · T · H_kv · d · b does not contain the weights' bit width.",
        ),
        f"Weights: {n / 1e9:g}·10⁹ × {before} ÷ 8 = **{w(before) / 1e9:g} GB** → × {after} ÷ 8 = "
        f"**{w(after) / 1e9:g} GB** (plus scale and packing overhead). KV: 2 · 1 · {shape.n_layer} · {T:,} · "
        f"{shape.n_kv_head} · {shape.head_dim} · {b:g} = **{right_kv:,} bytes = {bytes_text(right_kv)}**, "
        "unchanged. Only the weight estimate changes; the outputs must be measured again.",
        {
            "n_params": n,
            "bits_before": before,
            "bits_after": after,
            "n_layer": shape.n_layer,
            "n_kv_head": shape.n_kv_head,
            "head_dim": shape.head_dim,
            "positions": T,
            "bytes_per_value": b,
        },
    )


def weights(seed: int) -> Exercise:
    """Ch. 19 "Weight storage for seven billion parameters": 32/16/8/4 bits."""
    n = 7 * 10**9 if seed == 0 else random.Random(seed).choice([1, 3, 8, 13, 34, 70, 405]) * 10**9
    bits = (32, 16, 8, 4)
    gb = {k: float(cost.weight_bytes(n, k)) for k in bits}
    parts = tuple(
        part(
            f"w{k}",
            f"{k}-bit",
            "bytes",
            gb[k],
            "GB",
            BYTES_TOL,
            [
                Mistake(n * k, "bits, not bytes", "Bits, not bytes: divide by 8."),
                *[Mistake(gb[o], "wrong bit width", f"That is the {o}-bit figure.") for o in bits if o != k],
                *unit_mixups(gb[k]),
            ],
        )
        for k in bits
    )
    return Exercise(
        "ch19-weights",
        seed,
        "Ch. 19: weight storage",
        "Ch. 19 “Shrinking the numbers” (table)",
        f"How many bytes do the weights of **{n / 1e9:g} billion parameters** take at 32, 16, 8 and 4 bits per "
        "weight (nominal: no scales)? Give GB (10⁹ bytes).",
        parts,
        ("Bytes = parameters × bits per weight ÷ 8.", "Each halving of the bits halves the bytes."),
        " → ".join(f"**{gb[k] / 1e9:g} GB** ({k}-bit)" for k in bits)
        + f": {bits[0] // bits[-1]}× smaller from 32 to 4 bits.",
        {"n_params": n, "bits": bits},
    )
