import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.quant.flip import flip_scale
from core.quant.quantize import (
    FORMATS,
    auto_scale,
    dequantize,
    fake_quantize_groups,
    format_bits_per_weight,
    greedy_after_quantizing,
    int_range,
    parse_values,
    quantize,
    round_half,
    storage_bytes,
)


def test_ch19_round_trip():
    """Ch. 19: scale 0.7/7 = 0.1; [0.34, −0.12, 0.7, 0.23] → (3, −1, 7, 2) → [0.30, −0.10, 0.70, 0.20]."""
    x = [0.34, -0.12, 0.7, 0.23]
    scale, _ = auto_scale(x, 4)
    assert scale == pytest.approx(0.1)
    r = quantize(x, 4, scale=0.1)
    assert r.q.tolist() == [3, -1, 7, 2]
    assert np.allclose(dequantize(r.q, 0.1), [0.30, -0.10, 0.70, 0.20])


def test_ch19_dot_product():
    """With input [1,1,1,1]: 1.15 before, 1.10 after, a 0.05 difference = 4.35%."""
    x = np.array([0.34, -0.12, 0.7, 0.23])
    xh = dequantize(quantize(x, 4, scale=0.1).q, 0.1)
    before, after = x @ np.ones(4), xh @ np.ones(4)
    assert round(before, 10) == 1.15 and round(after, 10) == 1.10
    assert round(abs(before - after) / before * 100, 2) == 4.35


def test_table_30_2():
    """Scale 0.5: [−1.2, −0.2, 0.7, 1.8] → (−2, 0, 1, 4); errors +0.2, +0.2, −0.2, +0.2."""
    x = np.array([-1.2, -0.2, 0.7, 1.8])
    r = quantize(x, 4, scale=0.5)
    assert r.q.tolist() == [-2, 0, 1, 4]
    assert np.allclose(dequantize(r.q, 0.5) - x, [0.2, 0.2, -0.2, 0.2])


def test_outlier_clips():
    """x = 8 at scale 0.5 would be 16, clips to 7, reconstructs 3.5: error −4.5 > s/2."""
    r = quantize([8.0], 4, scale=0.5)
    assert r.q.tolist() == [7] and r.clipped.tolist() == [True]
    err = dequantize(r.q, 0.5)[0] - 8.0
    assert err == -4.5 and abs(err) > 0.25


def test_exercise_4_ties_and_clip():
    """0.75 and −0.75 at 0.5 are ties 1.5 and −1.5 → 2 and −2 (nearest even); 5 → 10 clips to 7 → 3.5."""
    r = quantize([0.75, -0.75, 5.0], 4, scale=0.5)
    assert r.q.tolist() == [2, -2, 7]
    assert dequantize(r.q, 0.5).tolist() == [1.0, -1.0, 3.5]


def test_rounding_modes_on_ties():
    """2.5, −2.5, 1.5: half-even 2, −2, 2; half-away 3, −3, 2; half-up 3, −2, 2."""
    x = [2.5, -2.5, 1.5]
    assert round_half(x, "half_even").tolist() == [2, -2, 2]
    assert round_half(x, "half_away").tolist() == [3, -3, 2]
    assert round_half(x, "half_up").tolist() == [3, -2, 2]


def test_ch30_near_tie_flips_to_paris():
    """Logits [0.6, 0.7] (Paris, Lyon): Lyon before; at scale 0.5 both 0.5 and greedy picks Paris."""
    assert int(np.argmax([0.6, 0.7])) == 1
    choice, xq = greedy_after_quantizing([0.6, 0.7], 0.5)
    assert xq.tolist() == [0.5, 0.5] and choice == 0


def test_flip_scale_finds_the_smallest_changing_scale():
    """[0.6, 0.7]: at scale s the two round to the same level first for s with 0.6/s, 0.7/s in one bin."""
    s = flip_scale([0.6, 0.7])
    assert s is not None
    assert greedy_after_quantizing([0.6, 0.7], s)[0] == 0
    assert greedy_after_quantizing([0.6, 0.7], s * 0.98)[0] == 1


def test_storage_ch30_block():
    """Four 4-bit values + one FP32 scale = 6 bytes, not 16 / 8 = 2."""
    out = storage_bytes(4, 4, 4, scale_bytes=4)
    assert out["quant/packed_bytes"] == 2 and out["total"] == 6 and out["bits_per_weight"] == 12


def test_named_formats():
    """int4 −7…7, int8 −127…127; Q4_0 (block-32 4-bit, fp16 scale) = 4.5 bpw (−8…7); Q8_0 (block-32 8-bit) = 8.5 bpw."""
    by = {f.name: f for f in FORMATS}
    int4, int8 = "teaching int4 (−7…7, half to even)", "teaching int8 (−127…127, half to even)"
    assert (by[int4].qmin, by[int4].qmax) == (-7, 7)
    assert (by[int8].qmin, by[int8].qmax) == (-127, 127)
    assert format_bits_per_weight(by["Q4_0"]) == 4.5
    assert (by["Q4_0"].qmin, by["Q4_0"].qmax) == (-8, 7)
    assert format_bits_per_weight(by["Q8_0"]) == 8.5


def test_int_range_and_one_bit():
    """4-bit symmetric −7…7; affine 0…15; symmetric 1-bit is refused with the reason."""
    assert int_range(4) == (-7, 7) and int_range(4, symmetric=False) == (0, 15)
    with pytest.raises(ValueError, match="only zero"):
        int_range(1)
    assert int_range(1, symmetric=False) == (0, 1)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"x": [1.0], "scale": 0.0}, "positive"),
        ({"x": [1.0], "scale": -0.5}, "positive"),
        ({"x": [float("nan")]}, "finite"),
        ({"x": [float("inf")]}, "finite"),
        ({"x": []}, "no values"),
        ({"x": [1.0], "rounding": "banker"}, "rounding"),
    ],
)
def test_bad_inputs(kwargs, match):
    """Scale 0 or negative, NaN/inf, empty input, unknown rounding: ValueError with a reason."""
    x = kwargs.pop("x")
    with pytest.raises(ValueError, match=match):
        quantize(x, 4, **kwargs)


def test_all_zero_group_gets_a_usable_scale():
    """All zeros: the automatic scale would be 0; scale 1 stores them exactly."""
    assert auto_scale([0.0, 0.0], 4) == (1.0, 0)
    assert np.all(fake_quantize_groups(np.zeros((2, 4)), 4, 2) == 0)


def test_affine_zero_point():
    """Affine 8-bit on [−1, 3]: s = 4/255, z = round(255/4) = 64; 0 stays exactly 0."""
    s, z = auto_scale([-1.0, 3.0], 8, symmetric=False)
    assert s == pytest.approx(4 / 255) and z == 64
    r = quantize([0.0, -1.0, 3.0], 8, symmetric=False)
    assert dequantize(r.q, r.scale, r.zero_point)[0] == 0.0


def test_group_quantization_error_bound():
    """Group-wise round-trip errs by at most half of each group's scale."""
    rng = np.random.default_rng(0)
    w = rng.normal(size=(8, 64))
    wq = fake_quantize_groups(w, 4, 16)
    s = np.abs(w.reshape(8, 4, 16)).max(-1, keepdims=True) / 7
    assert np.all(np.abs((wq - w).reshape(8, 4, 16)) <= s / 2 + 1e-12)


def test_parse_values():
    """Commas, spaces, new lines and the typographic minus; errors name the entry."""
    assert parse_values("0.34, −0.12\n0.7 0.23").tolist() == [0.34, -0.12, 0.7, 0.23]
    for bad, match in [
        ("", "empty"),
        ("1, x", "entry 2"),
        ("nan", "finite"),
        ("inf", "finite"),
        (",".join(["1"] * 1001), "more than"),
    ]:
        with pytest.raises(ValueError, match=match):
            parse_values(bad)


finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(finite, min_size=1, max_size=50), st.integers(2, 8), st.sampled_from(["half_even", "half_away", "half_up"])
)
def test_property_range_and_error_bound(values, n_bit, rounding):
    """Stored integers stay in range; inside the unclipped range |x̂ − x| ≤ s/2."""
    x = np.array(values)
    r = quantize(x, n_bit, rounding=rounding)
    assert r.q.min() >= r.qmin and r.q.max() <= r.qmax
    err = np.abs(dequantize(r.q, r.scale) - x)
    assert np.all(err[~r.clipped] <= r.scale / 2 * (1 + 1e-9))


@settings(max_examples=200, deadline=None)
@given(st.lists(finite, min_size=1, max_size=50), st.integers(2, 8), st.booleans())
def test_property_idempotent(values, n_bit, symmetric):
    """dequantize∘quantize is idempotent: quantizing x̂ again with the same scale gives x̂."""
    r = quantize(values, n_bit, symmetric=symmetric)
    xh = dequantize(r.q, r.scale, r.zero_point)
    r2 = quantize(xh, n_bit, scale=r.scale, zero_point=r.zero_point, symmetric=symmetric)
    assert np.allclose(dequantize(r2.q, r2.scale, r2.zero_point), xh, rtol=0, atol=1e-9 * max(1, r.scale))


@settings(max_examples=200, deadline=None)
@given(st.integers(-1000, 1000), st.sampled_from(["half_even", "half_away", "half_up"]))
def test_property_ties_follow_the_rule(k, mode):
    """For every tie k + 0.5 the chosen integer follows the stated rule."""
    t = k + 0.5
    got = int(round_half([t], mode)[0])
    expected = {"half_even": k if k % 2 == 0 else k + 1, "half_away": k + 1 if t > 0 else k, "half_up": k + 1}[mode]
    assert got == expected and math.isclose(abs(got - t), 0.5)


def test_greedy_by_bits_on_a_near_tie():
    """Logits [0.6, 0.7, −1.0]: 8 bits keep Lyon (1); 2 bits (s = 1.0) round both to 1 → tie → Paris (0)."""
    from core.quant.flip import greedy_by_bits

    rows = {r.bits: r for r in greedy_by_bits([0.6, 0.7, -1.0], bits=(8, 2))}
    assert rows[8].greedy == 1 and not rows[8].changed
    assert rows[2].scale == 1.0 and rows[2].greedy == 0 and rows[2].changed


def test_tiny_scale_overflow_is_refused():
    """A scale so small that x / s overflows gets a clear ValueError, not garbage integers."""
    with pytest.raises(ValueError, match="too small"):
        quantize([1.0], 4, scale=1e-310)
