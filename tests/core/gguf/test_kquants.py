"""K-quants written by this app: gguf's dequantizer reads our bytes as we do; the error is sensible."""

from fractions import Fraction

import gguf
import numpy as np
import pytest
from gguf import GGMLQuantizationType

from core.gguf.blocks import (
    dequantize_blocks,
    quantize_blocks,
)
from core.gguf.layout import LAYOUTS, bits_per_weight
from core.model.shipped import load_model

K = ["Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"]


def _rms(x, fmt):
    back = dequantize_blocks(quantize_blocks(x, fmt), fmt, np.shape(x))
    return float(np.sqrt(np.mean((back.astype(np.float64) - np.asarray(x, dtype=np.float32)) ** 2)))


def _gguf_reads_ours(x, fmt):
    x = np.asarray(x, dtype=np.float32)
    raw = quantize_blocks(x, fmt)
    assert len(raw) == x.size // 256 * LAYOUTS[fmt].type_size
    ours = dequantize_blocks(raw, fmt, x.shape)
    ref = gguf.quants.dequantize(np.frombuffer(raw, np.uint8).reshape(*x.shape[:-1], -1), GGMLQuantizationType[fmt])
    assert ours.tobytes() == ref.astype(np.float32).tobytes()
    return ours


def _super_blocks():
    rng = np.random.default_rng(3)
    z = np.zeros(256, dtype=np.float32)
    spike = z.copy()
    spike[100] = -40.0
    return {
        "normal": rng.normal(size=(12, 512)).astype(np.float32),
        "heavy tails": rng.standard_t(2, size=(4, 256)).astype(np.float32),
        "all zero": z,
        "single outlier": spike,
        "all positive": rng.uniform(1, 2, size=256).astype(np.float32),
        "all negative": -rng.uniform(1, 2, size=256).astype(np.float32),
        "one quiet sub-block": np.r_[np.zeros(32), rng.normal(size=224) * 100].astype(np.float32),
        "tiny": (rng.normal(size=256) * 1e-7).astype(np.float32),
    }


@pytest.mark.parametrize("fmt", K)
@pytest.mark.parametrize("name", list(_super_blocks()))
def test_gguf_dequantizes_our_bytes_to_our_values(fmt, name):
    """gguf.quants.dequantize of our K-quant bytes equals our own dequantize, bit for bit."""
    _gguf_reads_ours(_super_blocks()[name], fmt)


@pytest.mark.parametrize("fmt", K)
def test_shipped_weights_round_trip(fmt):
    """The shipped model's projections (flattened, 256-value super-blocks) round-trip through gguf's reader."""
    model = load_model()
    w = np.concatenate([p.detach().numpy().ravel() for n, p in model.named_parameters() if n.endswith("proj.weight")])
    back = _gguf_reads_ours(w, fmt)
    assert np.sqrt(np.mean((back - w) ** 2)) < np.std(w)  # far from noise


def test_all_zero_and_outlier_blocks():
    """An all-zero super-block comes back all zero. A lone −40 comes back within 1%; the other
    sub-blocks stay exactly 0; inside its own sub-block the zeros err by at most half a code step
    (40 / (2^bits − 1) / 2) in the affine formats, whose grid need not contain 0, and not at all in
    the symmetric Q3_K and Q6_K."""
    blocks = _super_blocks()
    for fmt in K:
        assert not np.any(dequantize_blocks(quantize_blocks(blocks["all zero"], fmt), fmt, 256))
        back = dequantize_blocks(quantize_blocks(blocks["single outlier"], fmt), fmt, 256)
        assert abs(back[100] + 40) < 0.4
        sub = {"Q2_K": 16, "Q3_K": 16, "Q6_K": 16}.get(fmt, 32)
        own = np.zeros(256, dtype=bool)
        own[100 // sub * sub : 100 // sub * sub + sub] = True
        own[100] = False
        assert not np.any(back[~own & (np.arange(256) != 100)])
        n_bit = int(fmt[1])
        if fmt in ("Q3_K", "Q6_K"):
            assert not np.any(back[own])
        else:
            assert np.max(np.abs(back[own])) <= 40 / (2**n_bit - 1) / 2 * 1.02


def test_error_falls_with_bits():
    """On 10,240 normal values the RMS error falls with every code bit, roughly halving (×1.6…2.6 per bit),
    and ends above Q8_0's and F16's (gguf's reference quantizers)."""
    x = np.random.default_rng(0).normal(size=10_240).astype(np.float32)
    errs = [_rms(x, f) for f in K]
    ratios = [a / b for a, b in zip(errs, errs[1:], strict=False)]
    assert all(1.6 < r < 2.6 for r in ratios), ratios
    q8 = gguf.quants.dequantize(gguf.quants.quantize(x, GGMLQuantizationType.Q8_0), GGMLQuantizationType.Q8_0)
    f16 = x.astype(np.float16).astype(np.float32)
    assert errs[-1] > np.sqrt(np.mean((q8 - x) ** 2)) > np.sqrt(np.mean((f16 - x) ** 2)) > 0


def test_k_quants_beat_legacy_at_the_same_code_bits():
    """Two-level scales with a min: Q4_K and Q5_K err less than gguf's Q4_0 and Q5_0 on the same values,
    in fewer or equal bits per weight (4.5 vs 4.5, 5.5 vs 5.5)."""
    x = np.random.default_rng(1).normal(size=10_240).astype(np.float32)
    for kq, legacy in (("Q4_K", "Q4_0"), ("Q5_K", "Q5_0")):
        t = GGMLQuantizationType[legacy]
        ref = gguf.quants.dequantize(gguf.quants.quantize(x, t), t)
        assert _rms(x, kq) < np.sqrt(np.mean((ref - x) ** 2))
        assert bits_per_weight(kq) <= bits_per_weight(legacy)


def test_bits_per_weight_from_block_sizes():
    """Q2_K 2.625, Q3_K 3.4375, Q4_K 4.5, Q5_K 5.5, Q6_K 6.5625 bits per weight (the issue's figures)."""
    assert [bits_per_weight(f) for f in K] == [
        Fraction(21, 8),
        Fraction(55, 16),
        Fraction(9, 2),
        Fraction(11, 2),
        Fraction(105, 16),
    ]
    assert [float(bits_per_weight(f)) for f in K] == [2.625, 3.4375, 4.5, 5.5, 6.5625]


def test_where_the_extra_bits_go():
    """Q4_K: 4 code bits + 12 B of 6-bit scales/mins (0.375) + 4 B of fp16 d, dmin (0.125) per 256 = 4.5;
    Q6_K: 6 + 16 int8 scales (0.5) + fp16 d (0.0625) = 6.5625; every breakdown sums to its bpw."""
    q4k = {r["kind"]: r["bits_per_weight"] for r in LAYOUTS["Q4_K"].breakdown()}
    assert q4k == {"codes": 4, "sub-block scales/mins": Fraction(3, 8), "block scales (fp16)": Fraction(1, 8)}
    q6k = {r["kind"]: r["bits_per_weight"] for r in LAYOUTS["Q6_K"].breakdown()}
    assert q6k == {"codes": 6, "sub-block scales/mins": Fraction(1, 2), "block scales (fp16)": Fraction(1, 16)}
    for lay in LAYOUTS.values():
        assert sum(r["bits_per_weight"] for r in lay.breakdown()) == lay.bits_per_weight


@pytest.mark.parametrize("bad,match", [(np.ones(255), "multiple of 256"), (np.r_[np.nan, np.zeros(255)], "finite")])
def test_k_quants_refuse(bad, match):
    """A length that is not a multiple of 256, or a NaN, is refused with a reason."""
    with pytest.raises(ValueError, match=match):
        quantize_blocks(bad, "Q4_K")
