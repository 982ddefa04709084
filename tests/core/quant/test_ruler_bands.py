"""The ruler's bands in words (core.quant.ruler_bands): bytes per value, float32's digits, and where shelf
numbers go."""

import struct
from decimal import Decimal

import numpy as np
import pytest

from core.quant import ruler
from core.quant.ruler_bands import float32_text, label_rows, label_step, per_value, shelf_marks


@pytest.mark.parametrize(
    "bits,words",
    [
        (32, "4 bytes each"),
        (16, "2 bytes each"),
        (8, "1 byte each"),
        (4, "half a byte each"),
        (2, "a quarter of a byte each"),
        (1, "an eighth of a byte each"),
        (3, "3/8 of a byte each"),
        (6, "3/4 of a byte each"),
    ],
)
def test_bytes_per_value_in_words(bits, words):
    """b bits are b/8 of a byte: Ch. 19's "4 bytes each" (32-bit) and "half a byte each" (4-bit), the rest alike."""
    assert per_value(bits) == words


@pytest.mark.parametrize("x", [0.34, -0.12, 0.7, 1e-3, 123456.789])
def test_float32_digits_are_what_float32_holds(x):
    """The short text reads back as the float32 that ``struct`` packs; the long one is its exact decimal."""
    held = struct.unpack("<f", struct.pack("<f", x))[0]
    short, exact = float32_text(x)
    assert float(short.replace("−", "-")) == held
    assert exact.endswith(str(Decimal(held)).replace("-", "−"))


def test_float32_text_says_when_a_value_is_beyond_float32():
    """1e39 is past float32's largest finite value (struct refuses to pack it): said, not "inf"."""
    with pytest.raises(OverflowError):
        struct.pack("<f", 1e39)
    assert "beyond float32's range" in float32_text(1e39)[0]


def test_label_rows_puts_close_neighbours_on_a_second_row():
    """Reconstructions −1, 0, 0.5, 2, 3.5 with labels needing 12.5 / 16 apart: 0.5 is 0.5 right of 0 (on row 0),
    so it takes row 1; the rest stay on row 0."""
    x = np.array([0.5, -1.0, 2.0, 0.0, 3.5])
    assert label_rows(x, x, 12.5 / 16) == [1, 0, 0, 0, 0]


def test_label_step_is_the_smallest_1_2_5_step_with_room():
    """Two-character numbers need 3 × 11 = 33 px: shelves 40 px apart get every number, 20 px every 2nd, 5 px
    every 10th (7 × 5 = 35 ≥ 33 is not a 1-2-5 step), 0 px none but shelf 0."""
    assert (label_step(2, 40), label_step(2, 20), label_step(2, 5)) == (1, 2, 10)
    assert label_step(2, 0.0) > 10**9


def test_every_shelf_numbered_in_the_chapter_case():
    """Ch. 19's ruler (4 bits, s = 0.1, values to ±0.7): every one of the 15 shelves numbered, nothing to say."""
    marks = shelf_marks(ruler.ruler([0.34, -0.12, 0.7, 0.23], 4, 0.1))
    assert marks.step == 1 and marks.note == ""
    assert sorted(marks.numbers + marks.stored) == list(range(-7, 8))
