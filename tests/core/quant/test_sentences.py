"""The chapters' sentences on the quantization pages (core.quant.sentences): word for word, with the page's
numbers worked out by hand."""

from core.quant import ruler
from core.quant.sentences import ACCUMULATE, GROUPS, PATTERNS, patterns, same_parameters, shrink

# The chapters' sentences, copied from Ch. 19 "Shrinking the numbers" and Ch. 30 §30.5.
CH19_PATTERNS = (
    "Bits determine how many patterns we can store. Quantization replaces fine-grained values with a smaller set. "
    "Four bits provide sixteen patterns; our symmetric toy uses integers −7 through 7, leaving one unused."
)
CH19_EIGHT = "In words: four bits instead of thirty-two makes the stored weights eight times smaller."
CH30_BLOCK = "Thus this tiny block does not achieve an eightfold storage reduction."
CH19_ACCUMULATE = (
    "Rounding errors can accumulate, and sensitive weights need care. Measure task quality at the chosen precision."
)
CH19_REPRESENTATION = "We can now distinguish a smaller representation from fewer parameters."
CH30_GROUPS = (
    "Larger groups amortize scales, while smaller groups may better accommodate varied ranges but add metadata."
)


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


def test_the_same_parameters_at_every_width():
    """Ch. 19's "Why the LLM cares" verbatim, with the model's count and its bytes at float32 and the narrowest
    width."""
    text = same_parameters("the shipped model", 1_000_448, 4_001_792, 1_000_000, 2)
    assert f"“{CH19_REPRESENTATION}”" in text
    assert (
        "all 1,000,448 parameters of the shipped model" in text and "from 4,001,792 (float32) to 1,000,000 at 2" in text
    )
    assert f"“{CH19_ACCUMULATE}”" in ACCUMULATE
