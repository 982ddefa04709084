"""The chapters' sentences about fewer bits that no figure says, for the quantization pages: in the chapters'
own words, each followed by the page's own numbers.

- Ch. 19 "Shrinking the numbers": "Four bits provide sixteen patterns …" (``PATTERNS``, ``patterns``), "four bits
  instead of thirty-two makes the stored weights eight times smaller" (``shrink``), "Rounding errors can
  accumulate, and sensitive weights need care." (``ACCUMULATE``);
- Ch. 19 "Why the LLM cares": "a smaller representation" is not "fewer parameters" (``same_parameters``);
- Ch. 30 §30.5: "Larger groups amortize scales, while smaller groups may better accommodate varied ranges but add
  metadata." (``GROUPS``), and a tiny block "does not achieve an eightfold storage reduction" (``shrink``).
"""

from __future__ import annotations

from fractions import Fraction

from core.quant.ruler import Ruler
from core.quant.ruler_bands import shelf_text
from core.text import plural

GROUPS = (
    "Ch. 30 §30.5: “Larger groups amortize scales, while smaller groups may better accommodate varied ranges but "
    "add metadata.”"
)
NUMBER_WORDS = {32: "thirty-two", 16: "sixteen", 8: "eight", 4: "four", 2: "two", 1: "one"}

PATTERNS = (
    "“Bits determine how many patterns we can store. Quantization replaces fine-grained values with a smaller "
    "set. Four bits provide sixteen patterns; our symmetric toy uses integers −7 through 7, leaving one unused.” "
    "(Ch. 19)"
)


def patterns(r: Ruler) -> str:
    """This ruler's patterns in the chapter's terms: "Here 8 bits provide 256 patterns; symmetric uses integers
    −127 through 127, leaving one unused." (affine uses all of them)."""
    lo, hi = shelf_text(r.qmin), shelf_text(r.qmax)
    use = (
        f"symmetric uses integers {lo} through {hi}, leaving one unused"
        if r.symmetric
        else f"affine uses all of them, {lo} through {hi}"
    )
    return f"Here {plural(r.n_bit, 'bit')} provide {2**r.n_bit:,} patterns; {use}."


def shrink(n_bit: int, n_values: int, total_bytes: int) -> str:
    """What fewer bits save, in the chapters' words: 32 ÷ b for the integers alone (Ch. 19, "four bits instead
    of thirty-two makes the stored weights eight times smaller"), and what the scales leave of it (Ch. 30
    §30.5: "this tiny block does not achieve an eightfold storage reduction"): float32's 4 bytes a value ÷
    ``total_bytes`` (packed integers + scales, ``core.quant.ruler.storage``)."""
    nominal = Fraction(32, n_bit)
    words = NUMBER_WORDS.get(nominal, f"{float(nominal):.3g}")
    as_float = 4 * n_values
    return (
        f"Ch. 19: “four bits instead of thirty-two makes the stored weights eight times smaller.” Here "
        f"{n_bit} bits instead of 32: the integers alone are 32 ÷ {n_bit} = {words} times smaller. With the scales "
        f"counted, {plural(as_float, 'byte')} as float32 become {plural(total_bytes, 'byte')}, "
        f"{as_float / total_bytes:.3g} times smaller (Ch. 30 §30.5: a tiny block “does not achieve an eightfold "
        "storage reduction”)."
    )


ACCUMULATE = (
    "Ch. 19: “Rounding errors can accumulate, and sensitive weights need care. Measure task quality at the chosen "
    "precision.” Here the embeddings, norms and output head stay float, the loss and greedy changes are measured "
    "at every width, and “Where does the text first diverge?” below shows one changed token changing every later "
    "input."
)


def same_parameters(name: str, n_params: int, float_bytes: int, smallest_bytes: int, smallest_bits: int) -> str:
    """Ch. 19's "Why the LLM cares" with a model's numbers: every width keeps all ``n_params`` parameters; only
    their bytes change (``float_bytes`` as float32 → ``smallest_bytes`` at ``smallest_bits`` bits)."""
    return (
        "Ch. 19: “We can now distinguish a smaller representation from fewer parameters.” Every width below keeps "
        f"all {n_params:,} parameters of {name}; only how each is stored changes: the weight bytes go from "
        f"{float_bytes:,} (float32) to {smallest_bytes:,} at {smallest_bits} bits."
    )
