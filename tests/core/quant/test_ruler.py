"""The quantization ruler's model: zero point, clipping order, ties, storage text, the scale slider."""

import math

import numpy as np
import pytest

from core.quant.quantize import effective_bits_per_weight, storage_bytes
from core.quant.ruler import SCALE_STEPS, bits_per_weight_curves, nearest_step, ruler, ruler_table, storage, tie_kind

VALUES = [0.0, 2.5, 5.0, 10.0]


def test_affine_zero_point_8_bit():
    """Affine 8-bit, scale 0.5, zero point 5: q = x/0.5 + 5 → 5, 10, 15, 25 (codes 0 … 255)."""
    r = ruler(VALUES, 8, 0.5, symmetric=False, zero_point=5)
    assert (r.qmin, r.qmax) == (0, 255)
    assert r.q.tolist() == [int(x / 0.5) + 5 for x in VALUES] == [5, 10, 15, 25]
    assert r.x_hat.tolist() == VALUES and not r.clipped.any()


def test_affine_zero_point_4_bit_clips_after_adding_it():
    """At 4 bits (codes 0 … 15) the same input stores 5, 10, 15, 15: 20 + 5 = 25 clips to 15, so 10 comes back as 5."""
    r = ruler(VALUES, 4, 0.5, symmetric=False, zero_point=5)
    assert (r.qmin, r.qmax) == (0, 15)
    assert r.q.tolist() == [min(int(x / 0.5) + 5, 15) for x in VALUES] == [5, 10, 15, 15]
    assert r.clipped.tolist() == [False, False, False, True]
    assert r.x_hat.tolist() == [0.0, 2.5, 5.0, 0.5 * (15 - 5)]
    assert "1 value clipped" in r.notes[0]


def test_zero_point_outside_the_codes_is_refused():
    """A 4-bit affine zero point of 16 is not a stored integer: a clear ValueError."""
    with pytest.raises(ValueError, match="0 … 15; got 16"):
        ruler(VALUES, 4, 0.5, symmetric=False, zero_point=16)


def test_near_tie_is_not_shown_as_a_tie():
    """0.675 / 0.15 is 4.500000000000001 in float64: the table shows every digit, stores 5 under half to even,
    says "not an exact tie", and a note explains why no tie rule applied."""
    quotient = 0.675 / 0.15
    assert quotient != 4.5 and math.floor(quotient + 0.5) == 5
    r = ruler([0.675], 4, 0.15, rounding="half_even")
    table = ruler_table(r)
    assert table["x / 0.15"] == [repr(quotient)] == ["4.500000000000001"]
    assert table["Stored q"] == [5] and table["tie?"] == ["not an exact tie"]
    assert any("not an exact tie" in n and "4.500000000000001" in n for n in r.notes)


def test_exact_ties_name_the_rule():
    """0.75 / 0.5 = 1.5 exactly: an exact tie, half to even stores 2 (−0.75 → −2); 5 / 0.5 is no tie."""
    table = ruler_table(ruler([0.75, -0.75, 5], 4, 0.5))
    assert table["Stored q"][:2] == [2, -2]
    assert table["tie?"] == ["exact tie: half to even", "exact tie: half to even", ""]
    assert tie_kind(1.5) == "exact" and tie_kind(4.500000000000001) == "near" and tie_kind(4.4) is None


def test_no_tie_column_without_ties():
    """Ch. 19's four weights have no ties: no tie column; x/s shows 3.4, not 3.4000000000000004."""
    table = ruler_table(ruler([0.34, -0.12, 0.7, 0.23], 4, 0.1))
    assert "tie?" not in table and table["x / 0.1"][0] == "3.4"


def test_storage_sentence_singular_and_plural():
    """One 4-bit value with an FP32 scale: "1 value × 4 bits = 1 byte packed + 4 bytes of scales = 5 bytes"."""
    s = storage(ruler([1.0], 4, None), None, 4)
    assert s.total_bytes == 1 + 4
    assert s.sentence.startswith("1 value × 4 bits = **1 byte packed** + **4 bytes of scales** = **5 bytes**")
    assert "(as float32: 4 bytes)" in s.sentence
    s = storage(ruler([1.0, 0.5], 1, None, symmetric=False), None, 2)
    assert "2 values × 1 bit = **1 byte packed** + **2 bytes of scales** + **1 byte of zero points**" in s.sentence


def test_scale_overflow_is_named_not_typed():
    """Affine values ±1e308 span 2e308 > float64 max: the automatic scale overflows, and the message says
    so instead of "got inf" as if a scale had been typed."""
    with pytest.raises(ValueError, match="overflows") as err:
        ruler([1e308, -1e308], 8, None, symmetric=False)
    assert "got inf" not in str(err.value)


def test_scale_steps_are_log_spaced_and_snap():
    """The slider spans 10⁻⁴ … 10⁴ at ~12% steps; 0.1, 0.25 and 0.5 are stops; 0.15 snaps to its nearest stop."""
    assert SCALE_STEPS[0] == 1e-4 and SCALE_STEPS[-1] == 1e4
    ratios = np.array(SCALE_STEPS[1:]) / np.array(SCALE_STEPS[:-1])
    assert ratios.min() > 1.05 and ratios.max() < 1.2
    assert {0.1, 0.25, 0.5, 1.0} <= set(SCALE_STEPS)
    assert nearest_step(0.15) == min(SCALE_STEPS, key=lambda v: abs(math.log(v / 0.15)))
    assert nearest_step(0) == SCALE_STEPS[0] and nearest_step(1e9) == SCALE_STEPS[-1]


def test_bits_per_weight_formula_and_count_agree():
    """The formula (4 + 16/32 = 4.5) equals the byte count of 4,096 values in full groups of 32."""
    assert effective_bits_per_weight(4, 32, 16) == storage_bytes(4096, 4, 32, 2)["bits_per_weight"] == 4.5
    curves = bits_per_weight_curves([1, 32])
    assert curves["4-bit + 16-bit scale"] == [20.0, 4.5] and curves["8-bit + 16-bit scale"] == [24.0, 8.5]


def test_ruler_block_pads_to_32_and_matches_gguf():
    """Four values become one Q4_0 block with 28 zeros (gguf's bytes for the padded block); 40 values make two
    blocks; a K-quant or an index past the blocks is refused."""
    import gguf

    from core.quant.ruler_block import block_count, ruler_block

    padded = np.zeros((1, 32), dtype=np.float32)
    padded[0, :4] = [0.34, -0.12, 0.7, 0.23]
    blk = ruler_block([0.34, -0.12, 0.7, 0.23], "Q4_0")
    assert blk.view.raw == gguf.quants.quantize(padded, gguf.GGMLQuantizationType.Q4_0).tobytes()
    assert (blk.n_blocks, blk.padded, blk.bits_per_weight) == (1, 28, 4.5) and "28 zeros" in blk.sentence
    assert block_count(np.ones(40)) == 2 and ruler_block(np.ones(40), "Q8_0", 1).padded == 24
    with pytest.raises(ValueError, match="block view shows"):
        ruler_block([1.0], "Q4_K")
    with pytest.raises(ValueError, match="block index"):
        ruler_block([1.0], "Q4_0", 1)
