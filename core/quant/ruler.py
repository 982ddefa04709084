"""The quantization ruler (Ch. 19 "Shrinking the numbers", Ch. 30 §30.5): a handful of values,
their shelves, what is stored, and what that costs in bytes. Everything the ruler page shows.

Symmetric: q = clip(round(x / s), −(2^(b−1)−1), 2^(b−1)−1); affine: q = clip(round(x / s) + z,
0, 2^b − 1), clipping after the zero point is added; x̂ = s·(q − z).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.quant.quantize import (
    FORMATS,
    ROUNDING,
    _check_values,
    auto_scale,
    dequantize,
    effective_bits_per_weight,
    format_bits_per_weight,
    int_range,
    quantize,
    round_half,
    storage_bytes,
)
from core.text import plural

MAX_SHELVES = 257  # more levels than this merge into a solid bar on the ruler: say so instead of drawing them

PRESETS = {
    "Ch. 19: four weights, scale 0.1": ("0.34, -0.12, 0.7, 0.23", 0.1),
    "Ch. 30 Table 30.2: scale 0.5": ("-1.2, -0.2, 0.7, 1.8", 0.5),
    "Ch. 30: the outlier 8": ("-1.2, -0.2, 0.7, 1.8, 8", 0.5),
    "Exercise 4: ties 0.75 and −0.75, then 5": ("0.75, -0.75, 5", 0.5),
}

# The scale slider's stops: 10⁻⁴ … 10⁴, 20 per decade (each ~12% above the last), at two
# significant digits so the labels read 0.1, 0.25, 0.5, 1; the number box beside it takes any value.
SCALE_STEPS: tuple[float, ...] = tuple(float(f"{10 ** (k / 20):.2g}") for k in range(-80, 81))


def nearest_step(scale: float) -> float:
    """The slider stop nearest to ``scale`` on a log scale (the ends for values outside, or not
    positive), so a typed scale moves the slider to where it belongs."""
    if not (isinstance(scale, int | float) and math.isfinite(scale) and scale > 0):
        return SCALE_STEPS[0]
    logs = np.log(SCALE_STEPS)
    return SCALE_STEPS[int(np.argmin(np.abs(logs - math.log(scale))))]


def exact(value: float) -> str:
    """The shortest text that reads back as exactly this float (``repr``): 0.15, 4.500000000000001."""
    return repr(float(value))


def shown(value: float) -> str:
    """A scale as a reader wants it: the fewest digits up to 12 significant, so the automatic scale
    0.7 / 7 = 0.09999999999999999 reads 0.1 (the chapter's scale). ``exact`` keeps every digit where
    they matter (a near tie)."""
    return f"{float(value):.12g}"


@dataclass(frozen=True)
class Ruler:
    """Everything the ruler draws: values ``x``, stored ``q``, reconstructions ``x_hat``,
    ``clipped`` flags (clipped, or with clipping off outside the range), the ``levels`` (None
    when more than ``MAX_SHELVES`` to draw), the mapping, the rules used and notes to show."""

    x: np.ndarray
    q: np.ndarray
    x_hat: np.ndarray
    clipped: np.ndarray
    levels: np.ndarray | None
    scale: float
    zero_point: int
    qmin: int
    qmax: int
    n_bit: int
    symmetric: bool
    rounding: str
    clip: bool
    notes: tuple[str, ...]

    @property
    def title(self) -> str:
        kind = "symmetric" if self.symmetric else "affine"
        return f"{self.n_bit}-bit {kind}: stored integers {self.qmin} … {self.qmax}, scale s = {shown(self.scale)}" + (
            "" if self.symmetric else f", zero point {self.zero_point}"
        )

    @property
    def formula(self) -> str:
        """The mapping as applied: ``clip(…)`` only while clipping is on."""
        stored = "round(x/s) + z" if not self.symmetric else "round(x/s)"
        back = "s·(q − z)" if not self.symmetric else "s·q"
        if self.clip:
            return f"q = clip({stored}, {self.qmin}, {self.qmax}), x̂ = {back}"
        return f"q = {stored} (not clipped: integers past {self.qmin} … {self.qmax} are kept, marked), x̂ = {back}"

    @property
    def outside_label(self) -> str:
        """Legend name of flagged values: with clipping off their error is still ≤ s/2, but the
        integer does not fit the bits, so "clipped" would be wrong."""
        if self.clip:
            return "clipped values (error not bounded by s/2)"
        return f"q outside {self.qmin} … {self.qmax}: not storable"


def ruler(
    x,
    n_bit: int,
    scale: float | None,
    symmetric: bool = True,
    zero_point: int | None = None,
    rounding: str = "half_even",
    clip: bool = True,
) -> Ruler:
    """Quantize ``x`` for the ruler figure. ``scale=None``: automatic from the range (and, for
    affine, the zero point too unless given); ``zero_point=None`` with a scale: 0. Raises
    ``ValueError`` like ``quantize``, and for an affine zero point outside the stored range."""
    x = _check_values(x)
    notes = []
    if scale is None and not np.any(x):
        notes.append(
            "All values are zero, so the automatic scale would be 0; scale 1 is used "
            "(any positive scale stores zero exactly)."
        )
    if scale is None:
        scale, auto_z = auto_scale(x, n_bit, symmetric)
        zero_point = auto_z if zero_point is None else zero_point
    qmin, qmax = int_range(n_bit, symmetric)
    z = 0 if symmetric else int(zero_point or 0)
    if not symmetric and not qmin <= z <= qmax:
        raise ValueError(f"the zero point must be a stored integer, {qmin} … {qmax}; got {z}")
    r = quantize(x, n_bit, scale, z, symmetric, rounding, clip)
    x_hat = dequantize(r.q, r.scale, r.zero_point)
    n_out = int(r.clipped.sum())
    if n_out and clip:
        notes.append(
            f"{plural(n_out, 'value')} clipped to the range {qmin} … {qmax}: "
            f"{'its' if n_out == 1 else 'their'} error is not bounded by s/2."
        )
    elif n_out:
        notes.append(
            f"Values that round to integers outside {qmin} … {qmax}: their error is still within s/2, but "
            f"{n_bit} bits cannot store those integers (clipping would). Here: {plural(n_out, 'value')}."
        )
    notes += near_tie_notes(x, r.scale, rounding)
    n_levels = qmax - qmin + 1
    levels = r.scale * (np.arange(qmin, qmax + 1) - r.zero_point) if n_levels <= MAX_SHELVES else None
    return Ruler(
        x,
        r.q,
        x_hat,
        r.clipped,
        levels,
        r.scale,
        r.zero_point,
        qmin,
        qmax,
        n_bit,
        symmetric,
        rounding,
        clip,
        tuple(notes),
    )


# ---- ties: the rule shown must be the rule applied ----------------------------------------------


def tie_kind(quotient: float) -> str | None:
    """``"exact"`` if x/s is exactly k + ½ (the tie rule decides), ``"near"`` if it is within
    10⁻⁹ of one without being one (floating point put it on one side: no tie rule applies, e.g.
    0.675 / 0.15 = 4.500000000000001), else None."""
    off = abs(quotient - math.floor(quotient) - 0.5)
    if off == 0:
        return "exact"
    return "near" if off <= 1e-9 * max(1.0, abs(quotient)) else None


def near_tie_notes(x: np.ndarray, scale: float, rounding: str) -> list[str]:
    """One note per value whose x/s looks like a tie but is not one (see ``tie_kind``), with the
    integer it rounds to (before the zero point and clipping)."""
    notes = []
    for xi, k in zip(x, round_half(x / scale, rounding), strict=True):
        quotient = xi / scale
        if tie_kind(quotient) == "near":
            notes.append(
                f"{exact(xi)} / {exact(scale)} = {exact(quotient)} in floating point: not an exact tie, so it "
                f"rounds to {int(k)} under every tie rule (a tie rule only decides exactly k + ½)."
            )
    return notes


def _quotient_text(v: float) -> str:
    """x/s for the table: near-ties in full (so 4.500000000000001 is not shown as 4.5), others
    without float noise such as 3.4000000000000004."""
    return exact(v) if tie_kind(v) == "near" else f"{v:.12g}"


def _tidy(a: np.ndarray) -> list[float]:
    """``a`` rounded to 10 decimals, hiding float noise such as 1e-16; values too large to round
    that way (rounding scales by 10¹⁰, which overflows past ~1.8 × 10²⁹⁸) are kept as they are."""
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = np.round(a, 10)
    return np.where(np.isfinite(rounded), rounded, a).tolist()


def signed(v: float) -> str:
    """A signed error as Table 30.2 prints it: "+0.2", "−0.2" (a minus sign, not a hyphen), "0"."""
    return "0" if v == 0 else f"{v:+.10g}".replace("-", "−")


def table_labels(r: Ruler) -> dict[str, str]:
    """The ruler table's column labels, in Table 30.2's words with this ruler's scale: "Original x",
    "x / 0.5", "Stored q", "Reconstructed 0.5q" (affine: "Reconstructed 0.5(q − z)"), "Reconstructed −
    original". Keys: ``x``, ``quotient``, ``q``, ``x_hat``, ``error``."""
    s = f"{r.scale:.6g}"  # a label: six significant digits (the exact scale is in the title and the box)
    back = f"{s}q" if r.symmetric else f"{s}(q − {r.zero_point})"
    return {
        "x": "Original x",
        "quotient": f"x / {s}",
        "q": "Stored q",
        "x_hat": f"Reconstructed {back}",
        "error": "Reconstructed − original",
    }


TABLE_30_2 = ([-1.2, -0.2, 0.7, 1.8], 4, 0.5)  # Example 30.4's values, bits and scale


def table_title(r: Ruler) -> str:
    """The ruler table's title: Table 30.2's own for Example 30.4's case (those four values, 4-bit
    symmetric, s = 0.5, clipped, ties to even), else the same layout for the learner's values."""
    values, bits, scale = TABLE_30_2
    chapter = r.x.tolist() == values and (r.n_bit, r.scale, r.symmetric, r.clip) == (bits, scale, True, True)
    if chapter and r.rounding == "half_even":
        return "Table 30.2 — Derived storage values and signed errors (Ch. 30 Example 30.4)"
    return "Derived storage values and signed errors, laid out as Ch. 30's Table 30.2"


HALFWAY_RULES = {"half_even": "nearest-even rounding", "half_away": "rounding away from zero",
                 "half_up": "rounding half up"}  # fmt: skip
SMALL_NUMBERS = dict(enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")))


def halfway_sentence(r: Ruler) -> str:
    """Whether any value lies exactly half-way between two shelves (x/s − z a whole number + 0.5), in Example 30.4's
    words: "Exact half-way cases use nearest-even rounding. None of these four inputs is a half-way case." (the
    rule named as the ruler applies it)."""
    rule = HALFWAY_RULES.get(r.rounding, "the rule chosen")
    with np.errstate(over="ignore", invalid="ignore"):
        frac = np.abs(r.x / r.scale - np.floor(r.x / r.scale))
    ties = int(np.sum(np.isclose(frac, 0.5, rtol=0, atol=1e-9)))
    n = len(r.x)
    said = f"Exact half-way cases use {rule}. "
    if ties == 0:
        if n == 1:
            return said + "The input is not a half-way case."
        return said + f"None of these {SMALL_NUMBERS.get(n, f'{n:,}')} inputs is a half-way case."
    return said + f"{ties:,} of these {n:,} inputs {'is a half-way case' if ties == 1 else 'are half-way cases'}."


def ruler_table(r: Ruler) -> dict[str, list]:
    """The ruler's table, one row per value, labelled as Ch. 30's Table 30.2 ("Derived storage values
    and signed errors", ``table_labels``): x, x/s, stored q, x̂, the signed error x̂ − x ("+0.2"),
    whether it is within s/2; and, when any value is a tie or near-tie, how it was rounded."""
    quotients = r.x / r.scale
    within = "no: clipped" if r.clip else "yes, but q does not fit"
    label = table_labels(r)
    table = {
        label["x"]: r.x.tolist(),
        label["quotient"]: [_quotient_text(v) for v in quotients],
        label["q"]: r.q.tolist(),
        label["x_hat"]: _tidy(r.x_hat),
        label["error"]: [signed(v) for v in _tidy(r.x_hat - r.x)],
        "within ±s/2": [within if c else "yes" for c in r.clipped],
    }
    rule = ROUNDING[r.rounding].split(":")[0].split(" (")[0]
    kinds = [tie_kind(v) for v in quotients]
    if any(kinds):
        table["tie?"] = [{"exact": f"exact tie: {rule}", "near": "not an exact tie", None: ""}[k] for k in kinds]
    return table


# ---- what the rounding does downstream, and what storing costs -----------------------------------


@dataclass(frozen=True)
class DotProduct:
    """Ch. 19's dot product with input [1, 1, …, 1]: the sum before and after rounding, and
    the relative change (None when the original sum is 0 or a sum is beyond float64's range,
    ±1.8 × 10³⁰⁸: then ``finite`` is False)."""

    before: float
    after: float
    relative: float | None

    @property
    def finite(self) -> bool:
        return math.isfinite(self.before) and math.isfinite(self.after)


def dot_product(r: Ruler) -> DotProduct:
    with np.errstate(over="ignore"):  # values near float64's maximum may add up past it: inf
        before, after = float(r.x.sum()), float(r.x_hat.sum())
    finite = math.isfinite(before) and math.isfinite(after)
    return DotProduct(before, after, abs(after - before) / abs(before) if before and finite else None)


@dataclass(frozen=True)
class Storage:
    """Bytes to store the ruler's values (``quant.storage_bytes``) and the sentence that adds them up."""

    total_bytes: int
    sentence: str


def storage(r: Ruler, group_size: int | None, scale_bytes: int) -> Storage:
    """Packed integers + one scale per group (+ one 1-byte zero point per group, affine);
    ``group_size=None``: one group for the whole list."""
    n, zp = len(r.x), 0 if r.symmetric else 1
    s = storage_bytes(n, r.n_bit, group_size, scale_bytes, zp)
    text = (
        f"{plural(n, 'value')} × {plural(r.n_bit, 'bit')} = **{plural(s['quant/packed_bytes'], 'byte')} packed** "
        f"+ **{plural(s['quant/scale_bytes'], 'byte')} of scales**"
        + (f" + **{plural(s['quant/zero_point_bytes'], 'byte')} of zero points**" if zp else "")
        + f" = **{plural(s['total'], 'byte')}**, {s['bits_per_weight']:.3g} bits per value "
        f"(as float32: {plural(4 * n, 'byte')})."
    )
    return Storage(s["total"], text)


def bits_per_weight_curves(group_sizes: list[int], formats=((4, 16), (4, 32), (8, 16))) -> dict[str, list[float]]:
    """Effective bits per weight against group size for (bits, scale bits) pairs."""
    return {
        f"{b}-bit + {sb}-bit scale": [float(effective_bits_per_weight(b, g, sb)) for g in group_sizes]
        for b, sb in formats
    }


def formats_table() -> list[dict]:
    """The named formats (``quant.FORMATS``: the chapters' teaching int4/int8, then llama.cpp's Q4_0 …
    Q8_0) with their stored integers, group, ties and bits per weight (scales and mins included)."""
    return [
        {
            "format": f.name,
            "stored integers": f"{f.qmin} … {f.qmax}",
            "group": str(f.group_size or "whole tensor"),
            "ties": f.rounding.replace("_", " "),
            "bits per weight": round(format_bits_per_weight(f), 3),
            "note": f.note,
        }
        for f in FORMATS
    ]
