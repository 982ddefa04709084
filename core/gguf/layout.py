"""ggml's storage formats as data: what one block holds, byte by byte, and the bits per weight
that follow from it (llama.cpp's ``ggml-common.h`` block structs; GGUF stores tensors this way).

A block of ``block_size`` consecutive values of one row is stored in ``type_size`` bytes, so
bits per weight = 8 · type_size / block_size exactly: Q4_0 = 8 · 18 / 32 = 4.5, Q4_K =
8 · 144 / 256 = 4.5, Q2_K = 8 · 84 / 256 = 2.625. Every byte belongs to one part, and every part
is either codes (the values' integers), sub-block scales/mins (small integers that scale each
16 or 32 values inside a 256-value super-block) or block scales (fp16 numbers): that split is
"where the extra bits go".
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from core.text import quoted

CODES, SUB_SCALES, BLOCK_SCALES = "codes", "sub-block scales/mins", "block scales (fp16)"


@dataclass(frozen=True)
class BlockPart:
    """``n_bytes`` of one block with one role (``kind``: codes, sub-block scales/mins or block scales)."""

    name: str
    n_bytes: int
    kind: str
    what: str


@dataclass(frozen=True)
class BlockLayout:
    """One ggml type: ``block_size`` values stored in the bytes of ``parts``, in file order."""

    name: str
    block_size: int
    parts: tuple[BlockPart, ...]
    note: str

    @property
    def type_size(self) -> int:
        """Bytes per block."""
        return sum(p.n_bytes for p in self.parts)

    @property
    def bits_per_weight(self) -> Fraction:
        """8 · type_size / block_size, exact (Q6_K: 8 · 210 / 256 = 6.5625)."""
        return Fraction(8 * self.type_size, self.block_size)

    def offset(self, part: str) -> int:
        """Byte offset of ``part`` inside a block."""
        at = 0
        for p in self.parts:
            if p.name == part:
                return at
            at += p.n_bytes
        raise ValueError(f"{self.name} has no part {part!r}")

    def breakdown(self) -> list[dict]:
        """Where the bits go: one row per kind with its bytes per block and bits per weight
        (exact ``Fraction``); the rows sum to ``bits_per_weight``."""
        rows = []
        for kind in (CODES, SUB_SCALES, BLOCK_SCALES):
            n = sum(p.n_bytes for p in self.parts if p.kind == kind)
            if n:
                parts = ", ".join(f"{p.name} ({p.n_bytes} B)" for p in self.parts if p.kind == kind)
                rows.append(
                    {"kind": kind, "bytes": n, "bits_per_weight": Fraction(8 * n, self.block_size), "parts": parts}
                )
        return rows


def _p(name, n_bytes, kind, what):
    return BlockPart(name, n_bytes, kind, what)


_D = _p("d", 2, BLOCK_SCALES, "fp16 scale")
_DMIN = _p("dmin", 2, BLOCK_SCALES, "fp16 scale of the sub-block mins")
_QS4 = _p("qs", 16, CODES, "32 × 4-bit codes, two per byte: value j in the low nibble, value j+16 in the high nibble")
_QH5 = _p("qh", 4, CODES, "the fifth bit of each of the 32 codes (bit j = value j), little-endian uint32")
_K6 = _p("scales", 12, SUB_SCALES, "8 sub-block scales and 8 mins, 6 bits each, packed into 12 bytes")

LAYOUTS: dict[str, BlockLayout] = {
    "F32": BlockLayout("F32", 1, (_p("value", 4, CODES, "IEEE float32"),), "32-bit float"),
    "F16": BlockLayout("F16", 1, (_p("value", 2, CODES, "IEEE float16"),), "16-bit float"),
    "BF16": BlockLayout(
        "BF16", 1, (_p("value", 2, CODES, "bfloat16"),), "bfloat16: float32's exponent, 8-bit mantissa"
    ),
    "Q4_0": BlockLayout("Q4_0", 32, (_D, _QS4), "x = d · (code − 8); d = (largest-magnitude value, signed) / −8"),
    "Q4_1": BlockLayout(
        "Q4_1", 32, (_D, _p("m", 2, BLOCK_SCALES, "fp16 min"), _QS4), "x = d · code + m; d = (max − min) / 15, m = min"
    ),
    "Q5_0": BlockLayout("Q5_0", 32, (_D, _QH5, _QS4), "x = d · (code − 16); d = (signed extreme) / −16"),
    "Q5_1": BlockLayout(
        "Q5_1", 32, (_D, _p("m", 2, BLOCK_SCALES, "fp16 min"), _QH5, _QS4), "x = d · code + m; d = (max − min) / 31"
    ),
    "Q8_0": BlockLayout(
        "Q8_0", 32, (_D, _p("qs", 32, CODES, "32 × int8 codes")), "x = d · code; d = max|x| / 127, ties away from zero"
    ),
    "Q2_K": BlockLayout(
        "Q2_K",
        256,
        (
            _p("scales", 16, SUB_SCALES, "16 sub-blocks of 16: 4-bit scale (low nibble) and 4-bit min (high nibble)"),
            _p("qs", 64, CODES, "256 × 2-bit codes, four per byte"),
            _D,
            _DMIN,
        ),
        "x = d · scale · code − dmin · min, codes 0…3",
    ),
    "Q3_K": BlockLayout(
        "Q3_K",
        256,
        (
            _p("hmask", 32, CODES, "the high (third) bit of each code"),
            _p("qs", 64, CODES, "the low 2 bits of each code, four per byte"),
            _p("scales", 12, SUB_SCALES, "16 sub-block scales, 6-bit signed"),
            _D,
        ),
        "x = d · scale · code, codes −4…3, sub-blocks of 16",
    ),
    "Q4_K": BlockLayout(
        "Q4_K",
        256,
        (_D, _DMIN, _K6, _p("qs", 128, CODES, "256 × 4-bit codes")),
        "x = d · scale · code − dmin · min, sub-blocks of 32",
    ),
    "Q5_K": BlockLayout(
        "Q5_K",
        256,
        (_D, _DMIN, _K6, _p("qh", 32, CODES, "the fifth bit of each code"), _p("qs", 128, CODES, "the low 4 bits")),
        "x = d · scale · code − dmin · min, codes 0…31, sub-blocks of 32",
    ),
    "Q6_K": BlockLayout(
        "Q6_K",
        256,
        (
            _p("ql", 128, CODES, "the low 4 bits of each code"),
            _p("qh", 64, CODES, "the high 2 bits of each code"),
            _p("scales", 16, SUB_SCALES, "16 sub-block scales, int8"),
            _D,
        ),
        "x = d · scale · code, codes −32…31, sub-blocks of 16",
    ),
    "IQ4_NL": BlockLayout(
        "IQ4_NL",
        32,
        (_D, _p("qs", 16, CODES, "32 × 4-bit indices into a fixed non-linear table of 16 levels")),
        "x = d · table[index]",
    ),
    "IQ4_XS": BlockLayout(
        "IQ4_XS",
        256,
        (
            _D,
            _p("scales_h", 2, SUB_SCALES, "high 2 bits of the 8 sub-block scales"),
            _p("scales_l", 4, SUB_SCALES, "low 4 bits of the 8 sub-block scales"),
            _p("qs", 128, CODES, "256 × 4-bit indices into the IQ4_NL table"),
        ),
        "IQ4_NL's table with 6-bit scales per 32 inside a 256 super-block",
    ),
}

LEGACY = ("Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0")
K_QUANTS = ("Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K")
QUANTIZABLE = ("F32", "F16") + LEGACY + K_QUANTS  # the formats this app writes (IQ4 and BF16: layout only)


@functools.cache
def ggml_type_sizes() -> dict[str, tuple[int, int]]:
    """Every ggml type the installed ``gguf`` gives a size for, by name: (values per block, bytes per
    block), from ``gguf.constants.GGML_QUANT_SIZES`` (llama.cpp's type traits): IQ2_XXS (256, 66),
    MXFP4 (32, 17), TQ1_0 (256, 54) … so bits per weight = 8 · bytes / values. ``LAYOUTS`` draws a
    few of these byte by byte; this table prices all of them. Read once, when first asked."""
    import gguf

    sizes = gguf.GGML_QUANT_SIZES
    return {t.name: (int(sizes[t][0]), int(sizes[t][1])) for t in gguf.GGMLQuantizationType if t in sizes}


def layout(fmt: str) -> BlockLayout:
    """The layout of ``fmt`` (e.g. "Q4_K"). Raises ``ValueError`` naming the known formats."""
    if fmt not in LAYOUTS:
        raise ValueError(f"unknown format {quoted(str(fmt), 20)}; known: {', '.join(LAYOUTS)}")
    return LAYOUTS[fmt]


def bits_per_weight(fmt: str) -> Fraction:
    """Bits per weight of ``fmt`` from its block layout (Q4_0 4.5, Q2_K 2.625, Q6_K 6.5625)."""
    return layout(fmt).bits_per_weight


def to_f16(x) -> np.ndarray:
    """Round float32 values to fp16 (nearest, ties to even) and back to float32: the value a
    stored fp16 scale really has."""
    return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float32)


def as_blocks(x, fmt: str) -> tuple[np.ndarray, tuple[int, ...]]:
    """``x`` as float32 blocks ``(n_blocks, block_size)`` along its last axis, and its shape.

    Raises ``ValueError`` for an unknown or unwritable format, an empty input, a row length that
    is not a multiple of the block size, and values that are not finite (NaN, ±inf) or do not fit
    float32 (fp16 for F16)."""
    if fmt not in QUANTIZABLE:
        raise ValueError(f"cannot write {quoted(str(fmt), 20)}; this app writes {', '.join(QUANTIZABLE)}")
    lay = LAYOUTS[fmt]
    x = np.asarray(x)
    if x.ndim == 0 or x.size == 0:
        raise ValueError("there are no values to quantize")
    bad = np.flatnonzero(~np.isfinite(np.asarray(x, dtype=np.float64).ravel()))
    if bad.size:
        raise ValueError(f"value {bad[0] + 1} is {x.ravel()[bad[0]]}: only finite numbers can be quantized")
    with np.errstate(over="ignore"):
        x32 = x.astype(np.float32)
        too_big = ~np.isfinite(x32.astype(np.float16)) if fmt == "F16" else ~np.isfinite(x32)
    if np.any(too_big):
        limit = "fp16 (±65,504)" if fmt == "F16" else "float32"
        raise ValueError(f"value {np.flatnonzero(too_big.ravel())[0] + 1} is too large for {limit}")
    if x.shape[-1] % lay.block_size:
        raise ValueError(
            f"{fmt} stores blocks of {lay.block_size} values along each row; a row of {x.shape[-1]} values "
            f"is not a multiple of {lay.block_size}"
        )
    return x32.reshape(-1, lay.block_size), x.shape


def check_raw(raw, fmt: str, shape) -> np.ndarray:
    """``raw`` bytes as uint8 blocks ``(n_blocks, type_size)`` for a tensor of ``shape``.

    Raises ``ValueError`` for an unknown format, a bad shape or a byte count that does not match."""
    lay = layout(fmt)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if not shape or any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1 for s in shape):
        raise ValueError(f"the shape must be positive whole numbers, got {shape!r}")
    shape = tuple(int(s) for s in shape)
    if shape[-1] % lay.block_size:
        raise ValueError(f"{fmt}: a row of {shape[-1]} values is not a multiple of the block size {lay.block_size}")
    n_blocks = int(np.prod(shape, dtype=object)) // lay.block_size
    data = np.frombuffer(bytes(raw), dtype=np.uint8)
    if data.size != n_blocks * lay.type_size:
        raise ValueError(
            f"{fmt} {shape} needs {n_blocks:,} blocks × {lay.type_size} B = {n_blocks * lay.type_size:,} bytes, "
            f"got {data.size:,}"
        )
    return data.reshape(n_blocks, lay.type_size)
