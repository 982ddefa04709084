"""llama.cpp's block formats, bit for bit: Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 (ggml's reference
quantizers, ``ggml-quants.c``), plus F32/F16 and the K-quants (``core.gguf.kquants``) behind one
``quantize_blocks`` / ``dequantize_blocks`` pair, and a ``BlockView`` of one block for the ruler.

Every block is 32 consecutive values of a row, quantized in float32 the way ggml does it:
- Q4_0: d = (the block's largest-magnitude value, with its sign) / −8, code = trunc(x·(1/d) + 8.5)
  clipped to 15, so the extreme value lands exactly on code 0 (= −8·d) and all 16 codes are used;
- Q5_0: the same with −16 and 32 codes; Q4_1/Q5_1: d = (max − min) / (2^b − 1), code =
  trunc((x − min)·(1/d) + 0.5), min stored too;
- Q8_0: d = max|x| / 127, code = round(x·(1/d)), ties away from zero ([127, 2.5, …] → 3, not 2).
The scale (and min) are then stored as fp16, so dequantizing uses the fp16-rounded d:
[1.0, 0, …] in Q8_0 → d = fp16(1/127) → 127 · d = 0.99993896… .
Checked bit-exact against ``gguf.quants`` (tests/core/gguf/test_blocks.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.gguf import kquants
from core.gguf.layout import K_QUANTS, LAYOUTS, as_blocks, check_raw, to_f16


def _inverse(d: np.ndarray) -> np.ndarray:
    """1/d in float32, 0 where d is 0 (an all-zero block then stores code offset·0 = 0)."""
    out = np.zeros_like(d)
    np.divide(np.float32(1), d, out=out, where=d != 0)
    return out


def _signed_extreme(blocks: np.ndarray, n_bit: int) -> tuple[np.ndarray, np.ndarray]:
    """Q4_0/Q5_0: scale d ``(n, 1)`` and unsigned codes ``(n, 32)`` in 0 … 2^b − 1."""
    half = 2 ** (n_bit - 1)
    i = np.argmax(np.abs(blocks), axis=1)  # the first largest magnitude, as ggml's scan keeps it
    extreme = np.take_along_axis(blocks, i[:, None], axis=1)
    d = extreme / np.float32(-half)
    # The + (half + 0.5) is a float32 addition, as in ggml: its rounding decides near-ties,
    # so it is not done in float64.
    v = blocks * _inverse(d) + np.float32(half + 0.5)
    return d, np.clip(np.trunc(v), 0, 2 * half - 1).astype(np.uint8)


def _min_max(blocks: np.ndarray, n_bit: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q4_1/Q5_1: scale d, min m (both ``(n, 1)`` float32) and codes 0 … 2^b − 1."""
    lo, hi = blocks.min(axis=1, keepdims=True), blocks.max(axis=1, keepdims=True)
    d = (hi - lo) / np.float32(2**n_bit - 1)
    v = (blocks - lo) * _inverse(d) + np.float32(0.5)
    return d, lo, np.clip(np.trunc(v), 0, 2**n_bit - 1).astype(np.uint8)


def _q8_0_codes(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d = np.abs(blocks).max(axis=1, keepdims=True) / np.float32(127)
    v = (blocks * _inverse(d)).astype(np.float64)  # the product is float32, as in ggml …
    q = np.sign(v) * np.floor(np.abs(v) + 0.5)  # … then C's roundf: ties away; |v| + 0.5 is exact in float64
    return d, q.astype(np.int8)


def pack_nibbles(codes: np.ndarray) -> np.ndarray:
    """32 codes → 16 bytes: value j in the low nibble of byte j, value j + 16 in the high nibble."""
    return (codes[:, :16] & 0x0F) | ((codes[:, 16:] & 0x0F) << 4)


def unpack_nibbles(qs: np.ndarray) -> np.ndarray:
    return np.concatenate([qs & 0x0F, qs >> 4], axis=1)


def _pack_fifth_bits(codes: np.ndarray) -> np.ndarray:
    """Bit 4 of each of the 32 codes as one little-endian uint32 (bit j = value j)."""
    return np.packbits((codes >> 4) & 1, axis=1, bitorder="little")


def _f16_bytes(v: np.ndarray) -> np.ndarray:
    """Scales (or mins) ``(n, 1)`` stored as fp16 bytes ``(n, 2)``; one that passes ±65,504
    would be stored as inf, so it is refused."""
    with np.errstate(over="ignore"):
        h = np.asarray(v, dtype=np.float32).astype(np.float16)
    if not np.all(np.isfinite(h)):
        raise ValueError("the values are too large: a block scale (or min) would overflow fp16 (±65,504)")
    return h.reshape(-1, 1).view(np.uint8)


def _quantize_legacy(blocks: np.ndarray, fmt: str) -> np.ndarray:
    if fmt == "Q8_0":
        d, q = _q8_0_codes(blocks)
        return np.concatenate([_f16_bytes(d), q.view(np.uint8)], axis=1)
    n_bit = 5 if fmt.startswith("Q5") else 4
    if fmt.endswith("_0"):
        d, codes = _signed_extreme(blocks, n_bit)
        head = [_f16_bytes(d)]
    else:
        d, m, codes = _min_max(blocks, n_bit)
        head = [_f16_bytes(d), _f16_bytes(m)]
    if n_bit == 5:
        head.append(_pack_fifth_bits(codes))
    return np.concatenate(head + [pack_nibbles(codes)], axis=1)


def _fields(raw: np.ndarray, fmt: str) -> dict:
    """Split legacy blocks ``(n, type_size)`` into d, m (or None), the integers q that d scales,
    and the unsigned stored codes."""
    lay, out = LAYOUTS[fmt], {}
    part = {p.name: raw[:, lay.offset(p.name) : lay.offset(p.name) + p.n_bytes] for p in lay.parts}
    out["d"] = part["d"].copy().view(np.float16).astype(np.float32)  # (n, 1)
    out["m"] = part["m"].copy().view(np.float16).astype(np.float32) if "m" in part else None
    if fmt == "Q8_0":
        out["codes"] = part["qs"].copy().view(np.int8)
        out["q"] = out["codes"].astype(np.float32)
        return out
    codes = unpack_nibbles(part["qs"])
    if "qh" in part:
        codes = codes | (np.unpackbits(part["qh"], axis=1, bitorder="little") << 4)
    offset = {"Q4_0": 8, "Q5_0": 16}.get(fmt, 0)  # the _0 formats store code = q + offset
    out["codes"], out["q"] = codes, codes.astype(np.float32) - np.float32(offset)
    return out


def _dequantize_legacy(raw: np.ndarray, fmt: str) -> np.ndarray:
    f = _fields(raw, fmt)
    return f["d"] * f["q"] if f["m"] is None else f["d"] * f["q"] + f["m"]


def quantize_blocks(x, fmt: str) -> bytes:
    """Quantize ``x`` (any shape; blocks run along the last axis) into ggml's bytes for ``fmt``
    (F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K): blocks in row-major
    order, exactly a GGUF tensor's data. Legacy formats are bit-identical to
    ``gguf.quants.quantize``; K-quants are this app's own quantizer in ggml's layout.

    Raises ``ValueError`` for an unknown format, a row length that is not a multiple of the block
    size (32; 256 for K-quants), NaN/±inf, or values too large for float32 (fp16 for F16)."""
    blocks, _ = as_blocks(x, fmt)
    if fmt in ("F32", "F16"):
        return blocks.astype(np.float32 if fmt == "F32" else np.float16).tobytes()
    if fmt in K_QUANTS:
        return kquants.quantize(blocks, fmt).tobytes()
    return _quantize_legacy(blocks, fmt).tobytes()


def dequantize_blocks(raw, fmt: str, shape) -> np.ndarray:
    """Values of a ``shape`` tensor stored as ``fmt`` in ``raw`` (bytes), as float32 — what ggml
    computes with. Raises ``ValueError`` if the byte count does not match ``shape`` and ``fmt``."""
    data = check_raw(raw, fmt, shape)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if fmt in ("F32", "F16", "BF16"):
        if fmt == "BF16":  # bfloat16 is the top half of a float32
            return (data.copy().view(np.uint16).astype(np.uint32) << 16).view(np.float32).reshape(shape)
        return data.copy().view(np.float32 if fmt == "F32" else np.float16).astype(np.float32).reshape(shape)
    if fmt in K_QUANTS:
        return kquants.dequantize(data, fmt).reshape(shape)
    if fmt not in LAYOUTS or LAYOUTS[fmt].block_size != 32 or fmt.startswith("IQ"):
        raise ValueError(f"this app does not decode {fmt}")
    return _dequantize_legacy(data, fmt).reshape(shape)


# ---- one block, as the ruler shows it ----------------------------------------------------------


@dataclass(frozen=True)
class BlockView:
    """One 32-value block of a legacy format, everything a page shows: the input ``x``, the
    fp16 scale ``d`` (and min ``m`` for Q4_1/Q5_1, else None), the stored unsigned ``codes``
    (Q8_0: its int8 values), the integers ``q`` that d multiplies (code − 8 for Q4_0, code − 16
    for Q5_0), the dequantized ``x_hat`` (float32), the ``raw`` bytes and where each value's code
    sits (``stored_at``, e.g. "byte 5, low nibble")."""

    fmt: str
    index: int
    x: np.ndarray
    d: float
    m: float | None
    codes: np.ndarray
    q: np.ndarray
    x_hat: np.ndarray
    raw: bytes
    stored_at: tuple[str, ...]

    @property
    def hex(self) -> str:
        """The block's bytes in hex, space-separated, in file order."""
        return self.raw.hex(" ")

    def byte_parts(self) -> list[dict]:
        """The block's parts in file order: name, byte range, what it holds, its bytes in hex."""
        rows, at = [], 0
        for p in LAYOUTS[self.fmt].parts:
            rows.append(
                {
                    "part": p.name,
                    "bytes": f"{at}…{at + p.n_bytes - 1}",
                    "holds": p.what,
                    "hex": self.raw[at : at + p.n_bytes].hex(" "),
                }
            )
            at += p.n_bytes
        return rows

    def rows(self) -> list[dict]:
        """One row per value: position, x, stored code, q, x̂, error x̂ − x, where its code is stored."""
        out = []
        for j in range(len(self.x)):
            x, x_hat = float(self.x[j]), float(self.x_hat[j]) + 0.0  # + 0.0: show −0.0 as 0
            row = {"position": j, "x": x, "code": int(self.codes[j]), "q": int(self.q[j]), "x_hat": x_hat}
            out.append(row | {"error": x_hat - x, "stored at": self.stored_at[j]})
        return out

    def packing(self) -> list[dict]:
        """How the codes sit in their bytes, one row per packed byte: its offset, hex, bits (high
        nibble first, as hex is written) and which value each nibble holds. Q4/Q5: byte j of ``qs``
        holds value j's low 4 bits in its low nibble and value j + 16's in its high nibble; Q5's
        ``qh`` bytes hold the fifth bits (bit j of the uint32 = value j). Q8_0 packs nothing (one
        int8 per byte): an empty list."""
        lay, rows = LAYOUTS[self.fmt], []
        if self.fmt == "Q8_0":
            return rows
        if "qh" in (p.name for p in lay.parts):
            at = lay.offset("qh")
            for k in range(4):
                b = self.raw[at + k]
                lo, hi = 8 * k, 8 * k + 7
                rows.append(
                    {
                        "byte": at + k,
                        "hex": f"{b:02x}",
                        "bits": f"{b >> 4:04b} {b & 15:04b}",
                        "high nibble holds": f"fifth bits of values {hi} … {lo + 4}",
                        "low nibble holds": f"fifth bits of values {lo + 3} … {lo}",
                    }
                )
        at = lay.offset("qs")
        for k in range(16):
            b = self.raw[at + k]
            rows.append(
                {
                    "byte": at + k,
                    "hex": f"{b:02x}",
                    "bits": f"{b >> 4:04b} {b & 15:04b}",
                    "high nibble holds": f"value {k + 16}",
                    "low nibble holds": f"value {k}",
                }
            )
        return rows


def _stored_at(fmt: str) -> tuple[str, ...]:
    lay = LAYOUTS[fmt]
    qs = lay.offset("qs")
    if fmt == "Q8_0":
        return tuple(f"byte {qs + j}" for j in range(32))
    out = [f"byte {qs + j % 16}, {'low' if j < 16 else 'high'} nibble" for j in range(32)]
    if fmt.startswith("Q5"):
        qh = lay.offset("qh")
        out = [f"{s} + bit {j % 8} of byte {qh + j // 8}" for j, s in enumerate(out)]
    return tuple(out)


def block_view(x, fmt: str, index: int = 0) -> BlockView:
    """Quantize ``x`` (a multiple of 32 values) as legacy ``fmt`` and show block ``index``.

    Raises ``ValueError`` like ``quantize_blocks``, for a K-quant (256-value super-blocks are
    shown with ``core.gguf.kquants``) and for an index outside the blocks."""
    if fmt not in ("Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0"):
        raise ValueError(f"the block view shows Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0, not {str(fmt)[:20]!r}")
    blocks, _ = as_blocks(np.ravel(np.asarray(x)), fmt)
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(blocks):
        raise ValueError(f"block index must be 0 … {len(blocks) - 1}, got {index!r}")
    raw = _quantize_legacy(blocks[index : index + 1], fmt)
    f = _fields(raw, fmt)
    x_hat = _dequantize_legacy(raw, fmt)[0]
    m = None if f["m"] is None else float(f["m"][0, 0])
    return BlockView(
        fmt,
        index,
        blocks[index],
        float(f["d"][0, 0]),
        m,
        f["codes"][0],
        f["q"][0].astype(np.int64),
        x_hat,
        raw.tobytes(),
        _stored_at(fmt),
    )


__all__ = ["BlockView", "block_view", "dequantize_blocks", "quantize_blocks", "to_f16"]
