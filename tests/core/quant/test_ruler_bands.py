"""The ruler's bands in words (core.quant.ruler_bands): bytes per value, float32's digits, the chapters'
sentences with this ruler's numbers, and where shelf numbers go."""

import struct
from decimal import Decimal

import numpy as np
import pytest

from core.quant import ruler
from core.quant.ruler_bands import (
    GROUPS,
    PATTERNS,
    float32_text,
    label_rows,
    label_step,
    patterns,
    per_value,
    shelf_marks,
    shrink,
)

# The chapters' sentences, copied from Ch. 19 "Shrinking the numbers" and Ch. 30 §30.5.
CH19_PATTERNS = (
    "Bits determine how many patterns we can store. Quantization replaces fine-grained values with a smaller set. "
    "Four bits provide sixteen patterns; our symmetric toy uses integers −7 through 7, leaving one unused."
)
CH19_EIGHT = "In words: four bits instead of thirty-two makes the stored weights eight times smaller."
CH30_BLOCK = "Thus this tiny block does not achieve an eightfold storage reduction."
CH30_GROUPS = (
    "Larger groups amortize scales, while smaller groups may better accommodate varied ranges but add metadata."
)


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


def test_patterns_sentence_in_the_chapters_words():
    """Ch. 19's sentence verbatim, and this ruler's: 4 bits, 16 patterns, −7 through 7, one unused; 8 bits 256;
    affine uses all of them."""
    assert PATTERNS.split("”")[0].removeprefix("“") == CH19_PATTERNS
    assert patterns(ruler.ruler([0.34], 4, 0.1)) == (
        "Here 4 bits provide 16 patterns; symmetric uses integers −7 through 7, leaving one unused."
    )
    assert "8 bits provide 256 patterns; symmetric uses integers −127 through 127" in patterns(ruler.ruler([1], 8, 1))
    assert "affine uses all of them, 0 through 15" in patterns(ruler.ruler([1], 4, 1, symmetric=False))


def test_shrink_eight_times_then_what_scales_leave():
    """4 bits instead of 32: eight times smaller (Ch. 19); Ch. 30 §30.5's block of four values with one FP32 scale
    is 6 bytes against 16, 2.67 times smaller; 8 bits: four times."""
    text = shrink(4, 4, 6)
    assert "32 ÷ 4 = eight times smaller" in text and "16 bytes as float32 become 6 bytes, 2.67 times smaller" in text
    assert "32 ÷ 8 = four times smaller" in shrink(8, 4, 8)
    assert "32 ÷ 3 = 10.7 times smaller" in shrink(3, 4, 6)


def test_quoted_sentences_are_the_chapters():
    """Every quotation the sentences make is the chapters' own, word for word."""
    text = shrink(4, 4, 6)
    assert "“four bits instead of thirty-two makes the stored weights eight times smaller.”" in text
    assert "“four bits instead of thirty-two makes the stored weights eight times smaller.”"[1:-2] in CH19_EIGHT
    assert "“does not achieve an eightfold storage reduction”" in text and "does not achieve an eightfold" in CH30_BLOCK
    assert GROUPS.split("“")[1].split("”")[0] == CH30_GROUPS
