"""Rounding: Ch. 30 §30.8 exercise 4 (§30.5), Ch. 19's 4-bit ruler and rounding reaching the
output, computed with ``core.quant.quantize``.
"""

from __future__ import annotations

import random

import numpy as np

from core.practice.exercise_types import Exercise, Mistake, Tolerance
from core.practice.exercises import part
from core.quant import quantize as quant
from core.quant.ruler import ruler as ruler_of

CH19_VALUES = (0.34, -0.12, 0.7, 0.23)


def small_number_mistakes(diff: float, fraction: float, tol: float) -> list[Mistake]:
    """A relative error typed below 1 %: the fraction before × 100, or the difference itself. Two
    mistakes when their values are told apart at ``tol``, else one naming both."""
    recipe = "relative error = |difference| ÷ |original result|, × 100 for a percentage"
    if abs(diff - fraction) <= tol:
        message = f"A number below 1 here is the difference itself or the fraction before the × 100: {recipe}."
        return [Mistake(fraction, "below 1: not a percentage", message)]
    return [
        Mistake(fraction, "fraction, not percent", "That is a fraction; as a percentage multiply by 100."),
        Mistake(diff, "difference, not relative", f"That is the difference itself: {recipe}."),
    ]


def ex4(seed: int) -> Exercise:
    """Ch. 30 exercise 4: a tie under half-to-even, then an outlier that clips."""
    rng = random.Random(seed)
    if seed == 0:
        s, v, x = 0.5, 0.75, 5.0
    else:  # powers of two: the ties stay exact in binary floating point
        s = rng.choice([0.125, 0.25, 0.5, 1.0, 2.0])
        v, x = rng.choice([0.5, 1.5, 2.5, 3.5, 4.5, 5.5]) * s, rng.randrange(9, 25) * s
    pair = np.array([v, -v])
    q = quant.quantize(pair, 4, s)
    qx = quant.quantize([x], 4, s)
    x_hat = float(quant.dequantize(qx.q, s)[0])
    raw = int(round(x / s))
    lo, hi = q.qmin, q.qmax
    ints = lambda mode: tuple(int(i) for i in quant.quantize(pair, 4, s, rounding=mode).q)  # noqa: E731
    err = x_hat - x
    parts = (
        part(
            "q",
            f"Stored integers for {v:g} and −{v:g}",
            "int_list",
            tuple(int(i) for i in q.q),
            "",
            Tolerance(),
            [
                Mistake(
                    ints("half_away"),
                    "ties away from zero",
                    "Ties rounded away from zero; Ch. 30's rule is half to even.",
                ),
                Mistake(
                    ints("half_up"),
                    "ties up",
                    f"The tie {-v / s:g} was rounded up (toward +∞); Ch. 30's rule is half to even.",
                ),
                Mistake(
                    tuple(int(i) for i in np.trunc(pair / s)),
                    "truncated",
                    "Truncated toward zero instead of rounding to the nearest integer.",
                ),
                Mistake(
                    tuple(float(i) for i in pair / s),
                    "forgot to round",
                    "Those are x / s: the stored integer is x / s rounded (ties to the even neighbour).",
                ),
            ],
        ),
        part(
            "x_hat",
            "Their reconstructions",
            "number_list",
            tuple(quant.dequantize(q.q, s)),
            "",
            Tolerance(abs=0.005),
            [
                Mistake((v, -v), "no rounding", "Those are the inputs: reconstruct s · q from the stored integers."),
            ],
        ),
        part(
            "q5",
            f"Stored integer for {x:g}",
            "number",
            int(qx.q[0]),
            "",
            Tolerance(),
            [
                Mistake(raw, "no clipping", f"{x:g} / {s:g} = {raw} — but 4 bits store only {lo} … {hi}: clip."),
                Mistake(hi + 1, "range −8 … 7", f"The symmetric 4-bit range is {lo} … {hi} (one code unused)."),
            ],
        ),
        part(
            "x5",
            f"Reconstruction of {x:g}",
            "number",
            x_hat,
            "",
            Tolerance(abs=0.005),
            [
                Mistake(
                    raw * s, "no clipping", f"{raw} cannot be stored: it clips to {hi}, and {hi} · {s:g} = {x_hat:g}."
                ),
            ],
        ),
        part(
            "err",
            "Its error (reconstructed − original)",
            "number",
            err,
            "",
            Tolerance(abs=0.005),
            [
                Mistake(-err, "error sign", f"Error = reconstructed − original = {x_hat:g} − {x:g}."),
                *[
                    Mistake(
                        e,
                        "clipping as rounding",
                        f"The clipped outlier treated as a rounding error: rounding errs "
                        f"by at most s/2 = {s / 2:g}, but {x:g} lies outside the range, and clipping has no such "
                        "bound.",
                    )
                    for e in (s / 2, -s / 2, 0.0)
                ],
            ],
        ),
        part(
            "why",
            "Why does the last error have a different cause?",
            "explain",
            f"The scaled values are ±{v / s:g}; half to even gives {q.q[0]} and {q.q[1]}, reconstructing "
            f"{q.q[0] * s:g} and {q.q[1] * s:g} — a rounding error of at most s/2 = {s / 2:g}. For {x:g}, the "
            f"scaled value {x / s:g} clips to {hi} and reconstructs {x_hat:g}: its {err:g} error comes from "
            "exceeding the supported range, not from rounding between adjacent levels.",
        ),
    )
    return Exercise(
        "ch30-4",
        seed,
        "Exercise 4: a tie, then an outlier",
        "Ch. 30 §30.8 exercise 4 (§30.5)",
        f"Symmetric 4-bit integers (−7 … 7), scale **s = {s:g}**, zero point 0, ties to even. Quantize "
        f"**{v:g}** and **−{v:g}**; then quantize **{x:g}**. Explain why the last error has a different cause.",
        parts,
        (
            "q = clip(round(x / s), −7, 7); x̂ = s · q.",
            "Half to even: 1.5 → 2, 2.5 → 2, −1.5 → −2.",
            "Inside the range the error is at most s/2; a clipped value has no such bound.",
        ),
        f"{v:g} / {s:g} = {v / s:g} → **{q.q[0]}**, −{v:g} / {s:g} = {-v / s:g} → **{q.q[1]}** (half to even), "
        f"reconstructing **{q.q[0] * s:g}** and **{q.q[1] * s:g}**. {x:g} / {s:g} = {x / s:g} clips to **{hi}**, "
        f"reconstructing **{x_hat:g}**; error {x_hat:g} − {x:g} = **{err:g}**, from clipping, not rounding.",
        {"scale": s, "tie": v, "outlier": x, "n_bit": 4},
    )


def signed_sum(values) -> str:
    """0.34 − 0.12 + 0.7 + 0.23, as one writes a sum (not "+ −0.12")."""
    out = f"{values[0]:.4g}"
    for v in values[1:]:
        out += f" − {-v:.4g}" if v < 0 else f" + {v:.4g}"
    return out


def ruler_values(seed: int) -> tuple[float, ...]:
    """Four weights whose largest magnitude is 7 steps of a round scale, none near a tie, and
    whose sum is at least 3 steps from zero (the relative error of the sum stays meaningful)."""
    if seed == 0:
        return CH19_VALUES
    rng = random.Random(seed)
    while True:
        s = rng.choice([0.05, 0.1, 0.2, 0.25, 0.5])
        out = [round((q + rng.choice([-0.4, -0.3, -0.2, 0.2, 0.3, 0.4])) * s, 4) for q in rng.sample(range(-6, 7), 3)]
        out.insert(rng.randrange(4), round(rng.choice([-7, 7]) * s, 4))
        if abs(sum(out)) >= 3 * s:
            return tuple(out)


def ruler(seed: int) -> Exercise:
    """Ch. 19 "the 4-bit ruler": scale from the largest magnitude, stored integers, reconstruction."""
    x = np.array(ruler_values(seed))
    r = ruler_of(x, 4, None)
    big = float(np.max(np.abs(x)))
    wrong_scale = big / 8
    as_ints = lambda a: tuple(int(i) for i in a)  # noqa: E731
    listed = ", ".join(f"{v:g}" for v in x)
    parts = (
        part(
            "scale",
            "Scale",
            "number",
            r.scale,
            "",
            Tolerance(rel=0.001),
            [
                Mistake(wrong_scale, "qmax 8", f"Symmetric 4-bit stores −7 … 7, so the scale is {big:g} / 7."),
                Mistake(
                    (x.max() - x.min()) / 15,
                    "affine step",
                    "That is an affine step over 16 codes; this ruler is symmetric: largest magnitude / 7.",
                ),
            ],
        ),
        part(
            "q",
            "Stored integers",
            "int_list",
            as_ints(r.q),
            "",
            Tolerance(),
            [
                Mistake(as_ints(np.ceil(x / r.scale)), "rounded up", "Rounded up; take the nearest shelf."),
                Mistake(
                    tuple(float(i) for i in x / r.scale),
                    "forgot to round",
                    "Those are x / s: the stored integer is x / s rounded to the nearest shelf.",
                ),
                Mistake(as_ints(np.abs(r.q)), "dropped a sign", "A negative weight stores a negative integer."),
                Mistake(
                    as_ints(quant.quantize(x, 4, wrong_scale, qmin=-8, qmax=8).q),
                    "qmax 8",
                    f"With scale {big:g} / 8 the largest weight lands on 8, which 4 symmetric bits cannot store.",
                ),
            ],
        ),
        part(
            "x_hat",
            "Reconstructed weights",
            "number_list",
            tuple(r.x_hat),
            "",
            Tolerance(abs=0.005),
            [
                Mistake(tuple(x), "no rounding", "Those are the originals: rebuild each as stored integer × scale."),
                Mistake(
                    tuple(float(v) for v in r.q),
                    "forgot the scale",
                    "Those are the stored integers: multiply each back by the scale.",
                ),
            ],
        ),
    )
    steps = "; ".join(f"{v:g} → {q} → {q} × {r.scale:.4g} = {h:.4g}" for v, q, h in zip(x, r.q, r.x_hat, strict=True))
    return Exercise(
        "ch19-ruler",
        seed,
        "Ch. 19: the 4-bit ruler",
        "Ch. 19 “Shrinking the numbers” (worked example)",
        f"Quantize the weights **{listed}** to symmetric 4-bit integers (−7 … 7): choose the scale from the "
        "largest magnitude, give the stored integers, and rebuild each weight.",
        parts,
        (
            "scale = largest magnitude / 7.",
            "Divide each weight by the scale and round to the nearest integer.",
            "Rebuild: stored integer × scale.",
        ),
        f"scale = {big:g} / 7 = **{r.scale:.4g}**; stored **{', '.join(str(q) for q in r.q)}**. {steps}.",
        {"values": tuple(float(v) for v in x), "n_bit": 4},
    )


def output(seed: int) -> Exercise:
    """Ch. 19 "rounding reaches the output": the row's sum before and after, the relative error."""
    x = np.array(ruler_values(seed))
    r = ruler_of(x, 4, None)
    ones = np.ones_like(x)
    before, after = float(x @ ones), float(r.x_hat @ ones)
    rel = abs(after - before) / abs(before) * 100
    parts = (
        part(
            "before",
            "Original result",
            "number",
            before,
            "",
            Tolerance(abs=0.005),
            [
                Mistake(float(np.abs(x).sum()), "dropped a sign", "A negative weight subtracts."),
            ],
        ),
        part(
            "after",
            "Reconstructed result",
            "number",
            after,
            "",
            Tolerance(abs=0.005),
            [
                Mistake(
                    float(r.q.sum()),
                    "forgot the scale",
                    "That is the sum of the stored integers: multiply back by the scale first.",
                ),
            ],
        ),
        part(
            "rel",
            "Relative error",
            "percent",
            rel,
            "%",
            # ±0.05 points: the percentage rounded to one decimal is right (4.348 % typed as 4.3 %).
            Tolerance(abs=0.05),
            [
                Mistake(
                    abs(after - before) / abs(after) * 100,
                    "relative to the wrong result",
                    "Relative to the reconstructed result; the error is relative to the original.",
                ),
                Mistake(
                    abs(after - before) * 100,
                    "difference as percent",
                    f"{abs(after - before):.3g} is the "
                    f"difference itself; relative to {before:.4g} it is a different percentage.",
                ),
                # The fraction (0.0435) and the difference itself (0.05) lie within the tolerance of one
                # another: one message for both ("multiply by 100" sent a student typing 0.05 to 5 %).
                *small_number_mistakes(abs(after - before), rel / 100, 0.05),
                Mistake(
                    float(np.abs(r.x_hat - x).sum()) / abs(before) * 100,
                    "errors don't cancel",
                    "You added the sizes of the per-weight errors; the signed errors partly cancel in the sum.",
                ),
            ],
        ),
    )
    listed = ", ".join(f"{v:g}" for v in x)
    return Exercise(
        "ch19-output",
        seed,
        "Ch. 19: rounding reaches the output",
        "Ch. 19 “Rounding reaches the output”",
        f"The weight row **{listed}** is stored on the 4-bit ruler (scale = largest magnitude / 7). With input "
        "[1, 1, 1, 1], what is the original result, the result from the reconstructed weights, and the "
        "relative error?",
        parts,
        ("With input [1, 1, 1, 1] the result is the row's sum.", "Relative error = |difference| / |original|."),
        f"Original: {signed_sum(x)} = **{before:.4g}**. Reconstructed: "
        f"{signed_sum(r.x_hat)} = **{after:.4g}**. The difference {abs(after - before):.3g} is "
        f"about **{rel:.3g} %** of the original result.",
        {"values": tuple(float(v) for v in x), "n_bit": 4},
    )
