"""K-quants: Q2_K, Q3_K, Q4_K, Q5_K and Q6_K, written by this app in ggml's byte layout
(llama.cpp PR #1684; layouts in ``core.gguf.layout``).

A super-block holds 256 values in sub-blocks of 16 or 32. Each sub-block has its own scale (and
for Q2_K/Q4_K/Q5_K its own min), but those are stored as small integers (4, 6 or 8 bits) that
one fp16 number per super-block scales: x̂ = (d · scale_j) · code − (dmin · min_j). Two levels
of scales cost 0.125–0.5 bits per weight instead of Q4_0's 0.5 bits for one fp16 per 32.

Our quantizer is deliberately simple and stated: per sub-block the ideal scale (and min) from
its range; the super-block scale d = (largest ideal scale) / (largest integer scale), rounded
to fp16; each integer scale the floor or the ceiling of ideal / d, whichever reconstructs the
sub-block with the smaller squared error; codes to the nearest level (half to even) of the
grid the file really stores. llama.cpp's own quantizer searches scales iteratively, so its bytes
differ from ours; the layout, and so every reader (``gguf.quants.dequantize``, llama.cpp), is
the same. Our dequantizer uses ggml's float32 order of operations, so it equals gguf's exactly.
"""

from __future__ import annotations

import numpy as np

from core.gguf.layout import to_f16

# fmt: (sub-block size, code bits, affine?, bits of a sub-block scale)
SPEC = {
    "Q2_K": (16, 2, True, 4),
    "Q3_K": (16, 3, False, 6),
    "Q4_K": (32, 4, True, 6),
    "Q5_K": (32, 5, True, 6),
    "Q6_K": (16, 6, False, 8),
}


def _check_f16(*scales) -> None:
    if not all(np.all(np.isfinite(s)) for s in scales):
        raise ValueError("the values are too large: a super-block scale overflows fp16 (±65,504)")


def _f16b(v: np.ndarray) -> np.ndarray:
    """fp16 values ``(n,)`` as bytes ``(n, 2)``."""
    return np.asarray(v, dtype=np.float32).astype(np.float16).reshape(-1, 1).view(np.uint8)


def _spread(bits: np.ndarray, per_byte: int, width: int) -> np.ndarray:
    """Pack small integers ``(n, groups, per_byte, L)``: byte l of a group holds entry (k, l) at bit k·width."""
    out = np.zeros(bits.shape[:2] + bits.shape[3:], dtype=np.uint8)
    for k in range(per_byte):
        out |= (bits[:, :, k, :].astype(np.uint8) & ((1 << width) - 1)) << (k * width)
    return out.reshape(len(bits), -1)


def _gather(raw: np.ndarray, groups: int, per_byte: int, width: int) -> np.ndarray:
    """Inverse of ``_spread``: bytes ``(n, groups·L)`` → integers ``(n, groups·per_byte·L)``."""
    b = raw.reshape(len(raw), groups, 1, -1)
    shifts = (np.arange(per_byte, dtype=np.uint8) * width).reshape(1, 1, per_byte, 1)
    return ((b >> shifts) & ((1 << width) - 1)).reshape(len(raw), -1)


def _pick_scales(x, ideal, d, smin, smax, grid_for):
    """Integer scales (floor or ceiling of ideal/d, clipped to smin…smax) minimising each
    sub-block's squared error; ``grid_for(sc)`` returns that choice's reconstruction."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(d[:, None] > 0, ideal / d[:, None], 0)
    best, best_err = None, None
    for cand in (np.floor(r), np.ceil(r)):
        sc = np.clip(cand, smin, smax)
        err = ((grid_for(sc) - x) ** 2).sum(-1)
        if best is None:
            best, best_err = sc, err
        else:
            better = err < best_err
            best, best_err = np.where(better, sc, best), np.where(better, err, best_err)
    return best


def _codes(x, step, offset, qmin, qmax):
    """Nearest code qmin … qmax on the stored grid step·q − offset (a sub-block with step 0 stores 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(step[..., None] > 0, np.rint((x + offset[..., None]) / step[..., None]), 0)
    return np.clip(q, qmin, qmax)


def _affine(x: np.ndarray, nmax: int, smax: int):
    """Q2_K/Q4_K/Q5_K: x ``(n, n_sub, sub)`` → d, dmin ``(n,)``, scales, mins ``(n, n_sub)``, codes."""
    lo = np.minimum(x.min(-1), 0)  # the stored offset −dmin·min only subtracts: a min above 0 is 0
    ideal_scale, ideal_min = (x.max(-1) - lo) / nmax, -lo
    with np.errstate(over="ignore"):
        d, dmin = to_f16(ideal_scale.max(-1) / smax), to_f16(ideal_min.max(-1) / smax)
    _check_f16(d, dmin)
    # Mins first (with the ideal scales), then the integer scales against the chosen mins.
    mins = _pick_scales(x, ideal_min, dmin, 0, smax, lambda m: _grid(x, ideal_scale, dmin[:, None] * m, nmax))
    offset = dmin[:, None] * mins.astype(np.float32)
    sc = _pick_scales(x, ideal_scale, d, 0, smax, lambda s: _grid(x, d[:, None] * s.astype(np.float32), offset, nmax))
    step = d[:, None] * sc.astype(np.float32)
    return d, dmin, sc, mins, _codes(x, step, offset, 0, nmax)


def _grid(x, step, offset, nmax):
    """Reconstruction of ``x`` on the grid step·q − offset, q in 0 … nmax."""
    return step[..., None] * _codes(x, step, offset, 0, nmax) - offset[..., None]


def _signed_codes(x, step, qneg):
    """Nearest code −qneg … qneg − 1 on the grid step·q (a sub-block with step 0 stores 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(step[..., None] != 0, np.rint(x / step[..., None]), 0)
    return np.clip(q, -qneg, qneg - 1)


def _symmetric(x: np.ndarray, qneg: int, smax: int):
    """Q3_K/Q6_K: x ``(n, n_sub, sub)`` → d ``(n,)``, signed scales ``(n, n_sub)``, codes −qneg … qneg−1.

    A sub-block's ideal scale is its largest-magnitude value (signed) / −qneg, so that value
    lands on the extra negative code, as in Q4_0. Scales are signed: floor or ceiling of
    ideal/d in −smax … smax."""
    i = np.argmax(np.abs(x), axis=-1)[..., None]
    ideal = np.take_along_axis(x, i, axis=-1)[..., 0] / -qneg
    with np.errstate(over="ignore"):
        d = to_f16(np.abs(ideal).max(-1) / smax)
    _check_f16(d)

    def grid(s):
        step = d[:, None] * s.astype(np.float32)
        return step[..., None] * _signed_codes(x, step, qneg)

    sc = _pick_scales(x, ideal, d, -smax, smax, grid)
    return d, sc, _signed_codes(x, d[:, None] * sc.astype(np.float32), qneg)


def quantize(blocks: np.ndarray, fmt: str) -> np.ndarray:
    """float32 super-blocks ``(n, 256)`` → ggml bytes ``(n, type_size)`` for K-quant ``fmt``."""
    sub, n_bit, affine, sbits = SPEC[fmt]
    n = len(blocks)
    x = blocks.astype(np.float32).reshape(n, 256 // sub, sub)
    if affine:
        d, dmin, sc, mins, q = _affine(x, 2**n_bit - 1, 2**sbits - 1)
    else:
        qneg = 2 ** (n_bit - 1)
        d, sc, q = _symmetric(x, qneg, 2 ** (sbits - 1) - 1)
        q = q + qneg  # stored unsigned
    q = q.reshape(n, 256).astype(np.uint8)
    sc, d = sc.astype(np.int64), d.reshape(n)
    if fmt == "Q2_K":
        scales = (sc.astype(np.uint8) | (mins.astype(np.uint8) << 4)).reshape(n, 16)
        qs = _spread(q.reshape(n, 2, 4, 32), 4, 2)
        return np.concatenate([scales, qs, _f16b(d), _f16b(dmin)], axis=1)
    if fmt == "Q3_K":
        hmask = _spread((q >> 2).reshape(n, 1, 8, 32), 8, 1)
        qs = _spread((q & 3).reshape(n, 2, 4, 32), 4, 2)
        return np.concatenate([hmask, qs, _pack_q3_scales(sc + 32), _f16b(d)], axis=1)
    if fmt in ("Q4_K", "Q5_K"):
        parts = [_f16b(d), _f16b(dmin), _pack_k6(sc, mins.astype(np.int64))]
        if fmt == "Q5_K":
            parts.append(_spread((q >> 4).reshape(n, 1, 8, 32), 8, 1))
        parts.append(_spread((q & 15).reshape(n, 4, 2, 32), 2, 4))
        return np.concatenate(parts, axis=1)
    ql = _spread((q & 15).reshape(n, 2, 2, 64), 2, 4)  # Q6_K
    qh = _spread((q >> 4).reshape(n, 2, 4, 32), 4, 2)
    return np.concatenate([ql, qh, sc.astype(np.int8).view(np.uint8), _f16b(d)], axis=1)


def _pack_q3_scales(s6: np.ndarray) -> np.ndarray:
    """16 six-bit scales → 12 bytes: low nibbles of scales j and j+8 share byte j (0…7);
    the high 2 bits of scale 4i + b sit at bits 2i of byte 8 + b."""
    low = (s6[:, :8] & 15) | ((s6[:, 8:] & 15) << 4)
    high = _spread((s6 >> 4).reshape(len(s6), 1, 4, 4), 4, 2)
    return np.concatenate([low, high], axis=1).astype(np.uint8)


def _pack_k6(sc: np.ndarray, mins: np.ndarray) -> np.ndarray:
    """8 six-bit scales and 8 six-bit mins → 12 bytes: bytes 0…3 scales 0…3 (+ the top 2 bits of
    scales 4…7 in bits 6–7), bytes 4…7 mins likewise, bytes 8…11 the low nibbles of scales and
    mins 4…7."""
    b0 = sc[:, :4] | ((sc[:, 4:] >> 4) << 6)
    b4 = mins[:, :4] | ((mins[:, 4:] >> 4) << 6)
    b8 = (sc[:, 4:] & 15) | ((mins[:, 4:] & 15) << 4)
    return np.concatenate([b0, b4, b8], axis=1).astype(np.uint8)


def _unpack_k6(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sc = np.concatenate([b[:, :4] & 63, (b[:, 8:] & 15) | ((b[:, :4] >> 6) << 4)], axis=1)
    mins = np.concatenate([b[:, 4:8] & 63, (b[:, 8:] >> 4) | ((b[:, 4:8] >> 6) << 4)], axis=1)
    return sc.astype(np.float32), mins.astype(np.float32)


def _f16(b: np.ndarray) -> np.ndarray:
    return b.copy().view(np.float16).astype(np.float32)  # (n, 1)


def dequantize(raw: np.ndarray, fmt: str) -> np.ndarray:
    """ggml bytes ``(n, type_size)`` → float32 ``(n, 256)``, float32 operations in ggml's order:
    (d · scale) · code − (dmin · min)."""
    n, sub = len(raw), SPEC[fmt][0]
    if fmt == "Q2_K":
        sc = (raw[:, :16] & 15).astype(np.float32)
        mins = (raw[:, :16] >> 4).astype(np.float32)
        q = _gather(raw[:, 16:80], 2, 4, 2)
        d, dmin = _f16(raw[:, 80:82]), _f16(raw[:, 82:84])
    elif fmt == "Q3_K":
        high = _gather(raw[:, :32], 1, 8, 1)
        q = (_gather(raw[:, 32:96], 2, 4, 2) | (high << 2)).astype(np.float32) - 4
        s = raw[:, 96:108]
        s6 = np.concatenate([s[:, :8] & 15, s[:, :8] >> 4], axis=1) | (_gather(s[:, 8:], 1, 4, 2) << 4)
        sc, d = s6.astype(np.float32) - 32, _f16(raw[:, 108:110])
    elif fmt in ("Q4_K", "Q5_K"):
        d, dmin = _f16(raw[:, 0:2]), _f16(raw[:, 2:4])
        sc, mins = _unpack_k6(raw[:, 4:16])
        q = _gather(raw[:, -128:], 4, 2, 4)
        if fmt == "Q5_K":
            q = q | (_gather(raw[:, 16:48], 1, 8, 1) << 4)
    else:  # Q6_K
        q = (_gather(raw[:, :128], 2, 2, 4) | (_gather(raw[:, 128:192], 2, 4, 2) << 4)).astype(np.float32) - 32
        sc, d = raw[:, 192:208].copy().view(np.int8).astype(np.float32), _f16(raw[:, 208:210])
    q = q.astype(np.float32).reshape(n, 256 // sub, sub)
    out = (d * sc)[..., None] * q
    if SPEC[fmt][2]:
        out = out - (dmin * mins)[..., None]
    return out.reshape(n, 256)


def rms_error(x, fmt: str) -> float:
    """Root-mean-square error of a round trip of ``x`` (a multiple of 256 values) through ``fmt``."""
    blocks = np.asarray(x, dtype=np.float32).reshape(-1, 256)
    back = dequantize(quantize(blocks, fmt), fmt)
    return float(np.sqrt(np.mean((back.astype(np.float64) - blocks) ** 2)))
