"""llama.cpp's legacy block formats, bit for bit against the `gguf` package's reference quantizers."""

import struct

import gguf
import numpy as np
import pytest
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

from core.gguf.blocks import (
    block_view,
    dequantize_blocks,
    quantize_blocks,
)
from core.gguf.layout import LAYOUTS, bits_per_weight
from core.model.shipped import load_model
from core.quant.quantize import FORMATS, format_bits_per_weight

LEGACY = ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0"]


def _reference(x, fmt):
    """gguf's bytes and gguf's dequantized values for x (float32, rows along the last axis)."""
    x = np.asarray(x, dtype=np.float32)
    raw = gguf.quants.quantize(x, GGMLQuantizationType[fmt])
    return raw.tobytes(), gguf.quants.dequantize(raw, GGMLQuantizationType[fmt])


def _assert_exact(x, fmt):
    x = np.asarray(x, dtype=np.float32)
    ref_bytes, ref_values = _reference(x, fmt)
    ours = quantize_blocks(x, fmt)
    assert ours == ref_bytes
    back = dequantize_blocks(ours, fmt, x.shape)
    assert back.dtype == np.float32 and back.tobytes() == ref_values.astype(np.float32).tobytes()


def _edge_blocks():
    """Blocks that stress the rules: zeros, one outlier, signs of the extreme, exact ties, tiny and equal values."""
    z = np.zeros(32, dtype=np.float32)
    out = {"all zero": z.copy()}
    one = z.copy()
    one[7] = 5.0
    out["single outlier"] = one
    neg = np.linspace(-1, 0.5, 32, dtype=np.float32)
    out["negative extreme"] = neg
    out["+/- equal extremes (first wins)"] = np.r_[1.0, -1.0, np.zeros(30)].astype(np.float32)
    out["Q8_0 ties"] = np.r_[127.0, 2.5, -2.5, 0.5, -0.5, 1.5, np.zeros(26)].astype(np.float32)
    out["Q4_0 ties"] = np.r_[-8.0, np.arange(-7.5, 8.0, 0.5)[:31]].astype(np.float32)
    out["constant"] = np.full(32, 0.3, dtype=np.float32)
    out["tiny (fp16 subnormal scale)"] = (np.arange(32, dtype=np.float32) - 16) * np.float32(1e-9)
    out["large"] = np.linspace(-6e4, 5e4, 32, dtype=np.float32)
    return out


@pytest.mark.parametrize("fmt", LEGACY)
@pytest.mark.parametrize("scale", [1e-3, 1.0, 300.0])
def test_random_values_bit_exact(fmt, scale):
    """10,240 normal values (several shapes): bytes and dequantized values equal gguf's exactly."""
    rng = np.random.default_rng(int(scale * 1000) % 97)
    x = (rng.normal(size=10_240) * scale).astype(np.float32)
    _assert_exact(x, fmt)
    _assert_exact(x.reshape(20, 512), fmt)
    _assert_exact(rng.standard_t(2, size=(8, 4, 64)).astype(np.float32), fmt)  # heavy tails: many outliers


@pytest.mark.parametrize("fmt", LEGACY)
@pytest.mark.parametrize("name", list(_edge_blocks()))
def test_edge_blocks_bit_exact(fmt, name):
    """All-zero, single-outlier, tie, equal-extreme, constant, tiny and large blocks match gguf byte for byte."""
    _assert_exact(_edge_blocks()[name], fmt)


@pytest.mark.parametrize("fmt", LEGACY)
def test_every_shipped_matrix_bit_exact(fmt):
    """Every 2-D weight of the shipped model (embedding, projections, lm_head) matches gguf exactly."""
    model = load_model()
    for p in model.parameters():
        if p.ndim == 2:
            _assert_exact(p.detach().numpy(), fmt)


def test_issue_q8_0_ties_away_from_zero():
    """[127, 2.5, 0×30] in Q8_0: d = 1, 2.5 → 3 (half away from zero), not 2."""
    x = np.r_[127.0, 2.5, np.zeros(30)]
    view = block_view(x, "Q8_0")
    assert view.d == 1.0 and view.codes[:3].tolist() == [127, 3, 0]
    assert dequantize_blocks(quantize_blocks(x, "Q8_0"), "Q8_0", 32)[1] == 3.0


def test_issue_q8_0_scale_is_fp16():
    """[1.0, 0×31] in Q8_0: d = fp16(1/127) = 0.0078735…, so 1.0 comes back as 127·d = 0.99993896…"""
    d16 = float(np.float16(np.float32(1) / np.float32(127)))
    back = dequantize_blocks(quantize_blocks(np.r_[1.0, np.zeros(31)], "Q8_0"), "Q8_0", 32)
    assert back[0] == np.float32(127 * d16) and abs(back[0] - 0.99993896) < 1e-8


def test_issue_q4_0_signed_extreme():
    """[1.0, 0.5, 0×30] in Q4_0: d = 1.0/−8 = −0.125; 1.0 → code 0 (q −8), 0.5 → code 4 (q −4), 0 → code 8: exact."""
    view = block_view(np.r_[1.0, 0.5, np.zeros(30)], "Q4_0")
    assert view.d == -0.125 and view.m is None
    assert view.codes[:3].tolist() == [0, 4, 8] and view.q[:3].tolist() == [-8, -4, 0]
    assert view.x_hat[:2].tolist() == [1.0, 0.5] and not np.any(view.x_hat[2:])
    assert view.raw[:2] == struct.pack("<e", -0.125)
    # nibble packing, low first: byte 2 = value 0 (low) | value 16 (high) = 0 | 8 << 4
    assert view.raw[2] == 0x80 and view.raw[3] == 0x84 and view.stored_at[16] == "byte 2, high nibble"
    assert view.hex.startswith("00 b0 80 84 88")


def test_block_view_q5_1_fields():
    """Q5_1's view: min m = fp16(min), codes 0…31 with their fifth bits in qh; x̂ = d·code + m; rows per value."""
    x = np.arange(32, dtype=np.float32) * 0.25 - 3.0
    view = block_view(x, "Q5_1")
    assert view.m == float(np.float16(-3.0)) and view.codes.tolist() == list(range(32))
    assert np.array_equal(view.x_hat, np.float32(view.d) * view.codes.astype(np.float32) + np.float32(view.m))
    assert view.stored_at[20] == "byte 12, high nibble + bit 4 of byte 6"
    rows = view.rows()
    assert len(rows) == 32 and rows[20]["code"] == 20 and rows[20]["x"] == 2.0
    assert [p["part"] for p in view.byte_parts()] == ["d", "m", "qh", "qs"]


def test_block_view_refuses():
    """The view refuses K-quants and an index outside the blocks, with a reason."""
    with pytest.raises(ValueError, match="block view"):
        block_view(np.zeros(256), "Q4_K")
    with pytest.raises(ValueError, match="0 … 1"):
        block_view(np.zeros(64), "Q4_0", index=2)


@pytest.mark.parametrize(
    "x,fmt,match",
    [
        ([1.0, float("nan")] * 16, "Q4_0", "finite"),
        ([float("inf")] + [0.0] * 31, "Q8_0", "finite"),
        ([-float("inf")] + [0.0] * 31, "Q4_1", "finite"),
        ([1.0] * 31, "Q4_0", "not a multiple of 32"),
        ([1.0] * 32, "Q8_0", None),
        ([1.0] * 32, "Q4_2", "cannot write"),
        ([1.0] * 32, "q4_0", "cannot write"),
        ([], "Q4_0", "no values"),
        ([1e6] * 32, "Q4_0", "overflow fp16"),
        ([1e39] * 32, "Q8_0", "too large for float32"),
        ([7e4], "F16", "fp16"),
    ],
)
def test_bad_input_refused(x, fmt, match):
    """NaN, ±inf, a length off the block size, unknown names, empty, fp16 overflow: ValueError with a reason."""
    if match is None:
        quantize_blocks(x, fmt)
        return
    with pytest.raises(ValueError, match=match):
        quantize_blocks(x, fmt)


def test_dequantize_refuses_wrong_byte_count():
    """18 bytes hold one Q4_0 block: 17 bytes, or a shape of 64 values, are refused."""
    raw = quantize_blocks(np.ones(32), "Q4_0")
    with pytest.raises(ValueError, match="18 bytes"):
        dequantize_blocks(raw[:17], "Q4_0", 32)
    with pytest.raises(ValueError, match="36 bytes"):
        dequantize_blocks(raw, "Q4_0", (2, 32))
    with pytest.raises(ValueError, match="unknown format"):
        dequantize_blocks(raw, "Q9_9", 32)


@pytest.mark.parametrize("fmt", LEGACY + ["Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "F16", "BF16"])
def test_decoder_matches_gguf_on_arbitrary_bytes(fmt):
    """Any bytes (random, so every bit pattern of scales and codes) decode exactly as gguf decodes them."""
    bs, ts = GGML_QUANT_SIZES[GGMLQuantizationType[fmt]]
    raw = np.random.default_rng(5).integers(0, 256, size=(6, 2 * ts), dtype=np.uint8)
    ref = gguf.quants.dequantize(raw, GGMLQuantizationType[fmt])
    ours = dequantize_blocks(raw.tobytes(), fmt, (6, 2 * bs))
    np.testing.assert_array_equal(ours, ref)  # NaN where both have NaN


def test_layouts_match_ggml_sizes():
    """Every layout's (block size, bytes per block) equals ggml's GGML_QUANT_SIZES."""
    for name, lay in LAYOUTS.items():
        assert (lay.block_size, lay.type_size) == GGML_QUANT_SIZES[GGMLQuantizationType[name]], name


def test_bits_per_weight_from_layout():
    """Q4_0 4.5, Q4_1 5, Q5_0 5.5, Q5_1 6, Q8_0 8.5 bits per weight; the Format table agrees."""
    expected = {"Q4_0": 4.5, "Q4_1": 5.0, "Q5_0": 5.5, "Q5_1": 6.0, "Q8_0": 8.5, "IQ4_NL": 4.5, "IQ4_XS": 4.25}
    assert {f: float(bits_per_weight(f)) for f in expected} == expected
    named = {f.name: f for f in FORMATS}
    for f in LEGACY:
        assert format_bits_per_weight(named[f]) == expected[f]


def test_f32_f16_round_trip():
    """F32 stores the float32 bytes; F16 rounds to fp16 (0.1 → 0.0999755859375)."""
    x = np.array([0.1, -2.0, 3.5], dtype=np.float32)
    assert quantize_blocks(x, "F32") == x.tobytes()
    assert dequantize_blocks(quantize_blocks(x, "F16"), "F16", 3)[0] == np.float32(0.0999755859375)


def test_block_view_packing_is_low_nibble_first():
    """Q4_0 of 0 … 31 / 31: byte j of qs = code j | code j+16 << 4, as gguf packs it; Q5 adds the four qh bytes."""
    x = np.arange(32, dtype=np.float32) / 31
    view = block_view(x, "Q4_0")
    ref = gguf.quants.quantize(x.reshape(1, 32), gguf.GGMLQuantizationType.Q4_0).tobytes()
    rows = view.packing()
    assert [r["byte"] for r in rows] == list(range(2, 18)) and [r["hex"] for r in rows] == [f"{b:02x}" for b in ref[2:]]
    for j, r in enumerate(rows):
        assert int(r["bits"].replace(" ", ""), 2) == (view.codes[j] | view.codes[j + 16] << 4) == ref[2 + j]
        assert (r["low nibble holds"], r["high nibble holds"]) == (f"value {j}", f"value {j + 16}")
    q5 = block_view(x, "Q5_0").packing()
    assert len(q5) == 20 and q5[0]["low nibble holds"] == "fifth bits of values 3 … 0"
    assert block_view(x, "Q8_0").packing() == []
