"""Quantization in numpy: store a nearby value with fewer bits (Ch. 19 "Shrinking the numbers",
Ch. 30 §30.5-§30.6; scale/zero-point mapping after Jacob et al., 2018, §2.1).

Symmetric: q = clip(round(x / s), −(2^(b−1)−1), 2^(b−1)−1), x̂ = s·q (one signed code unused).
Affine:    q = clip(round(x / s) + z, 0, 2^b − 1),           x̂ = s·(q − z).
Inside the unclipped range nearest rounding errs by at most s/2; clipping has no such bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from core.text import quoted
from core.typed_numbers import read_number, split_items

ROUNDING = {
    "half_even": "half to even (Ch. 30): 2.5 → 2, 1.5 → 2",
    "half_away": "half away from zero: 2.5 → 3, −2.5 → −3",
    "half_up": "half up (toward +∞): 2.5 → 3, −2.5 → −2",
}


def round_half(x: np.ndarray, mode: str = "half_even") -> np.ndarray:
    """Round to the nearest integer, ties broken by ``mode`` (see ``ROUNDING``).

    Raises ``ValueError`` for an unknown mode."""
    x = np.asarray(x, dtype=np.float64)
    if mode == "half_even":
        return np.round(x)  # numpy rounds ties to even
    if mode == "half_away":
        return np.sign(x) * np.floor(np.abs(x) + 0.5)
    if mode == "half_up":
        return np.floor(x + 0.5)
    raise ValueError(f"unknown rounding mode {quoted(mode)}; choose one of {', '.join(ROUNDING)}")


def int_range(n_bit: int, symmetric: bool = True) -> tuple[int, int]:
    """Stored-integer range: symmetric −(2^(b−1)−1) … 2^(b−1)−1 (−7 … 7 at 4 bits), affine 0 … 2^b−1.

    Raises ``ValueError`` for a symmetric 1-bit format (its range is 0 … 0: it can store only
    zero) and for bit widths outside 1 … 32."""
    if isinstance(n_bit, bool) or not isinstance(n_bit, int) or not 1 <= n_bit <= 32:
        raise ValueError(f"bit width must be a whole number from 1 to 32, got {n_bit!r}")
    if symmetric:
        if n_bit == 1:
            raise ValueError(
                "a symmetric 1-bit format has range −(2⁰−1) … 2⁰−1 = 0 … 0: it can store only zero; "
                "use 2 bits or more, or an affine (zero-point) format"
            )
        return -(2 ** (n_bit - 1) - 1), 2 ** (n_bit - 1) - 1
    return 0, 2**n_bit - 1


def _check_values(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        raise ValueError("there are no values to quantize")
    bad = np.flatnonzero(~np.isfinite(x.ravel()))
    if bad.size:
        raise ValueError(f"value {bad[0] + 1} is {x.ravel()[bad[0]]}: only finite numbers can be quantized")
    return x


def _check_scale(scale) -> np.ndarray:
    s = np.asarray(scale, dtype=np.float64)
    if np.any(~np.isfinite(s)) or np.any(s <= 0):
        raise ValueError(f"the scale must be a positive finite number, got {scale!r}")
    return s


def auto_scale(x, n_bit: int, symmetric: bool = True) -> tuple[float, int]:
    """Scale (and zero point) from the values' range: symmetric s = max|x| / qmax, z = 0;
    affine s = (max − min) / (2^b − 1), z = round(−min / s).

    An all-zero input has no range (the scale would be 0): scale 1.0 is returned, since any
    positive scale stores zeros exactly; so is a range so tiny that the scale underflows to 0.
    Raises ``ValueError`` on empty or non-finite input, and (affine) when max − min overflows."""
    x = _check_values(x)
    qmin, qmax = int_range(n_bit, symmetric)
    if symmetric:
        s = float(np.max(np.abs(x))) / qmax
        return (s if s > 0 else 1.0), 0
    lo, hi = min(float(x.min()), 0.0), max(float(x.max()), 0.0)  # keep 0 exactly representable
    s = (hi - lo) / (qmax - qmin)
    if not math.isfinite(s):
        raise ValueError(
            f"the values span {lo:g} … {hi:g}, wider than a float64 can hold: the automatic scale "
            f"(max − min) / {qmax - qmin} overflows; set the scale by hand"
        )
    if not s > 0:
        return 1.0, 0
    return s, int(np.clip(round_half(-lo / s), qmin, qmax))


@dataclass(frozen=True)
class Quantized:
    """Stored integers ``q`` and what reconstructs them: ``scale``, ``zero_point``; ``clipped``
    marks values that hit the range's end (their error is not bounded by s/2); ``qmin, qmax``."""

    q: np.ndarray
    scale: float
    zero_point: int
    clipped: np.ndarray
    qmin: int
    qmax: int


def quantize(
    x,
    n_bit: int,
    scale: float | None = None,
    zero_point: int = 0,
    symmetric: bool = True,
    rounding: str = "half_even",
    clip: bool = True,
    qmin: int | None = None,
    qmax: int | None = None,
) -> Quantized:
    """Quantize values ``x`` (any shape) with one scale.

    ``scale=None`` picks it automatically (``auto_scale``, which also sets the zero point for
    affine). With ``clip=False`` integers outside the range are kept and marked in ``clipped``
    (they could not be stored in ``n_bit`` bits). ``qmin``/``qmax`` override the range for
    formats such as −8 … 7. Raises ``ValueError`` on empty or non-finite values, a scale ≤ 0,
    an unknown rounding mode or a symmetric 1-bit format."""
    x = _check_values(x)
    lo, hi = int_range(n_bit, symmetric)
    lo, hi = (lo if qmin is None else qmin), (hi if qmax is None else qmax)
    if scale is None:
        scale, zero_point = auto_scale(x, n_bit, symmetric)
    s = float(_check_scale(scale))
    with np.errstate(over="ignore"):
        raw = round_half(x / s, rounding) + (0 if symmetric else zero_point)
    if not np.all(np.isfinite(raw)) or np.max(np.abs(raw)) > 2**62:
        raise ValueError(f"the scale {s:g} is too small for these values: x / s overflows")
    outside = (raw < lo) | (raw > hi)
    q = np.clip(raw, lo, hi) if clip else raw
    return Quantized(q.astype(np.int64), s, int(zero_point if not symmetric else 0), outside, lo, hi)


def dequantize(q, scale: float, zero_point: int = 0) -> np.ndarray:
    """Reconstruct x̂ = scale · (q − zero_point). Raises ``ValueError`` for a scale ≤ 0."""
    return float(_check_scale(scale)) * (np.asarray(q, dtype=np.float64) - zero_point)


def fake_quantize_groups(
    w: np.ndarray, n_bit: int, group_size: int | None, rounding: str = "half_even", symmetric: bool = True
) -> np.ndarray:
    """Round-trip a 2-D weight ``(out, in)`` through ``n_bit`` integers, one automatic scale per
    group of ``group_size`` consecutive inputs of each row (``None``: one scale per row).
    Returns floats of the same shape. Raises ``ValueError`` if ``group_size`` does not divide ``in``."""
    w = _check_values(w)
    rows, cols = w.shape
    g = cols if group_size is None else group_size
    if g < 1 or cols % g:
        raise ValueError(f"group size {g} must divide the row length {cols}")
    groups = w.reshape(rows, cols // g, g)  # (rows, n_groups, g)
    qmin, qmax = int_range(n_bit, symmetric)
    if symmetric:
        peak = np.abs(groups).max(axis=-1, keepdims=True)
        s = peak / qmax
        s = np.where(s > 0, s, 1.0)  # an all-zero (or subnormal) group stores zeros with any scale
        q = np.clip(round_half(groups / s, rounding), qmin, qmax)
        return (q * s).reshape(rows, cols)
    lo = np.minimum(groups.min(axis=-1, keepdims=True), 0.0)
    hi = np.maximum(groups.max(axis=-1, keepdims=True), 0.0)
    s = (hi - lo) / (qmax - qmin)
    s = np.where(s > 0, s, 1.0)
    z = np.clip(round_half(-lo / s, rounding), qmin, qmax)
    q = np.clip(round_half(groups / s, rounding) + z, qmin, qmax)
    return (s * (q - z)).reshape(rows, cols)


# ---- storage, honestly counted ------------------------------------------------------------------


def storage_bytes(
    n_values: int, n_bit: int, group_size: int | None, scale_bytes: int = 4, zero_point_bytes: int = 0
) -> dict:
    """Bytes to store ``n_values`` quantized values: packed integers plus per-group metadata.

    ``"quant/packed_bytes"`` = ceil(n · b / 8); ``"quant/scale_bytes"`` and
    ``"quant/zero_point_bytes"`` per group (one group if ``group_size`` is None);
    ``"total"`` bytes; ``"bits_per_weight"`` = total · 8 / n, what these ``n`` values really
    cost, byte padding and a partial last group included (``effective_bits_per_weight`` is the
    per-weight formula for full groups; the two agree when they apply). Ch. 30: four 4-bit
    values + one FP32 scale = 2 + 4 = 6 bytes (12 bits per weight)."""
    if n_values < 1 or n_bit < 1:
        raise ValueError("need at least one value and one bit")
    n_groups = 1 if group_size is None else math.ceil(n_values / group_size)
    out = {
        "quant/packed_bytes": math.ceil(n_values * n_bit / 8),
        "quant/scale_bytes": n_groups * scale_bytes,
        "quant/zero_point_bytes": n_groups * zero_point_bytes,
    }
    out["total"] = sum(out.values())
    out["bits_per_weight"] = out["total"] * 8 / n_values
    return out


@dataclass(frozen=True)
class Format:
    """A named storage format: bits, integer range, group size, scale (and min) bytes, tie rule.

    Only formats that are exactly llama.cpp's carry its names (Q4_0 …): their bytes come from
    ``quantize_blocks`` (``core.gguf.blocks``), bit-identical to ``gguf.quants``."""

    name: str
    n_bit: int
    qmin: int
    qmax: int
    group_size: int | None
    scale_bytes: int
    rounding: str
    note: str
    min_bytes: int = 0


TEACHING_INT4 = "teaching int4 (−7…7, half to even)"
_LLAMA = "llama.cpp's, bit-exact (quantize_blocks):"
FORMATS = [
    Format(TEACHING_INT4, 4, -7, 7, None, 4, "half_even", "Ch. 30's, the ruler's default: one FP32 scale; −8 unused"),
    Format("teaching int8 (−127…127, half to even)", 8, -127, 127, None, 4, "half_even", "one FP32 scale; −128 unused"),
    Format("Q4_0", 4, -8, 7, 32, 2, "half_up", f"{_LLAMA} d = (signed extreme) / −8 in fp16, all 16 codes"),
    Format("Q4_1", 4, 0, 15, 32, 2, "half_up", f"{_LLAMA} d = (max − min) / 15 and the min, fp16", 2),
    Format("Q5_0", 5, -16, 15, 32, 2, "half_up", f"{_LLAMA} d = (signed extreme) / −16 in fp16"),
    Format("Q5_1", 5, 0, 31, 32, 2, "half_up", f"{_LLAMA} d = (max − min) / 31 and the min, fp16", 2),
    Format("Q8_0", 8, -127, 127, 32, 2, "half_away", f"{_LLAMA} d = max|x| / 127 in fp16, ties away from 0"),
]


def effective_bits_per_weight(
    n_bit: float, group_size: int | None = None, scale_bits: int = 16, zero_point_bits: int = 0
) -> Fraction:
    """Bits per weight including per-group metadata: n_bit + (scale_bits + zero_point_bits)/group_size.

    The one formula for bits per weight (the weights page, the formats table and the ruler's
    curves all call it). ``group_size=None`` means no per-group metadata (nominal bits). Example:
    4-bit with an fp16 scale per 32 weights is 4.5 bits per weight; Ch. 30's block of four 4-bit
    values with one FP32 scale is 4 + 32/4 = 12. Raises ``ValueError`` on a bad group size."""
    if not n_bit > 0:
        raise ValueError(f"bits per weight must be positive, got {n_bit!r}")
    bits = Fraction(n_bit)
    if group_size is None:
        return bits
    if isinstance(group_size, bool) or not isinstance(group_size, int) or group_size < 1:
        raise ValueError(f"group size must be a whole number ≥ 1, got {group_size!r}")
    return bits + Fraction(scale_bits + zero_point_bits, group_size)


def format_bits_per_weight(fmt: Format, n_values: int = 4096) -> float:
    """Effective bits per weight of ``fmt`` (scales and mins included); a per-tensor scale is spread
    over ``n_values`` weights."""
    return float(
        effective_bits_per_weight(fmt.n_bit, fmt.group_size or n_values, 8 * fmt.scale_bytes, 8 * fmt.min_bytes)
    )


# ---- rounding reaches the output -----------------------------------------------------------------


def parse_values(text: str, max_values: int = 1000) -> np.ndarray:
    """Numbers from text like "0.34, -0.12, 0.7" (";", ", ", spaces or new lines; "−" accepted), read by
    ``core.typed_numbers`` as every number box is ("1,5" names its two readings; "1,000" is one number).

    Raises ``ValueError`` naming the first entry that is not a finite number, for an empty
    list, or for more than ``max_values`` values."""
    parts = split_items(text)
    if not parts:
        raise ValueError("the list is empty: type numbers separated by commas, e.g. 0.34, -0.12")
    if len(parts) > max_values:
        raise ValueError(f"{len(parts):,} values is more than the ruler shows ({max_values:,})")
    out = []
    for i, p in enumerate(parts, 1):
        try:
            v = float(read_number(p, in_list=True)[0])
        except ValueError as err:
            if "reads as" in str(err):
                raise ValueError(f"entry {i}: {err}") from None
            raise ValueError(f"entry {i} ({quoted(p, 30)}) is not a number") from None
        if not math.isfinite(v):
            raise ValueError(f"entry {i} ({quoted(p, 30)}) is not a finite number: it cannot be quantized")
        out.append(v)
    return np.array(out)


def greedy_after_quantizing(logits, scale: float, rounding: str = "half_even") -> tuple[int, np.ndarray]:
    """Greedy choice (first maximum, i.e. first in candidate order) after rounding ``logits``
    to multiples of ``scale`` (no clipping). Ch. 30 §30.6: [0.6, 0.7] at 0.5 → [0.5, 0.5] → 0.
    Raises ``ValueError`` as ``quantize`` does, and when x / s overflows float64."""
    x = _check_values(logits)
    s = float(_check_scale(scale))
    with np.errstate(over="ignore"):
        xq = round_half(x / s, rounding) * s
    if not np.all(np.isfinite(xq)):  # 1e308 / 1e-300 is inf: "rounded to [inf, inf]" read as a result
        raise ValueError(f"the scale {s:g} is too small for these logits: x / s overflows")
    return int(np.argmax(xq)), xq
