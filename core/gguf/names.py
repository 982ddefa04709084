"""Weight-format names as model cards and download pages write them ("FP16", "Q4_K_M", "4-bit"),
read into bits per weight (Ch. 19 "Why the LLM cares"; llama.cpp's formats in ``core.gguf.layout``).

Three kinds of name:
- a storage format (F16, BF16, Q8_0, Q4_K, IQ4_XS …): bits per weight exactly, from its block
  layout, scales and mins included (Q4_0 4.5, Q2_K 2.625, Q6_K 6.5625); every other ggml type the
  installed ``gguf`` knows (IQ2_XXS 2.0625, IQ3_S 3.4375, IQ1_M 1.75, TQ1_0 1.6875, MXFP4 4.25 …)
  from gguf's own table of block sizes (``core.gguf.layout.ggml_type_sizes``);
- a bare bit count ("Q4", "4-bit", "INT8"): the nominal integer width only; a card that says
  "Q4" does not say which scales come with it (Ch. 19 reads "7B, Q4" as 4 bits);
- a llama.cpp mix (Q4_K_M, Q3_K_S …): a file whose tensors use different block types, so it
  has no single figure; we give llama.cpp's measured whole-file figure, labelled typical.

Typical figures: llama.cpp ``examples/quantize/README.md`` (Llama 2 7B table: Q2_K 3.35 … Q6_K
6.56; e.g. commit b8c1476) and ``tools/quantize/README.md`` (Llama-3.1-8B table: Q2_K_S 2.9697,
IQ4_XS 4.4597, IQ4_NL 4.6818, Q8_0 8.5008). Mix contents: llama.cpp's ``llama_tensor_get_type``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from core.gguf.layout import LAYOUTS, ggml_type_sizes
from core.text import plural, quoted

TYPICAL_SOURCE = "llama.cpp's quantize README"


@dataclass(frozen=True)
class WeightFormat:
    """A weight-format name read: ``bits_per_weight`` (exact unless ``typical``), whether that
    figure already counts stored scales/mins (``counts_scales``), the ``kind`` ("float",
    "integer", "block", "mix"), a one-line ``note`` a page can show, and the ggml block ``layout``
    it is (or, for a mix, is mostly made of): a key of ``core.gguf.layout.LAYOUTS``; None for a bare
    bit count and for a ggml type priced from gguf's table alone (its bytes not drawn part by part)."""

    name: str
    bits_per_weight: float
    kind: str
    typical: bool
    counts_scales: bool
    note: str
    layout: str | None = None


def _block(name: str, file_bpw: float | None = None, file_model: str = "Llama 2 7B") -> WeightFormat:
    bpw = float(LAYOUTS[name].bits_per_weight)
    lay = LAYOUTS[name]
    note = f"{name}: {lay.type_size} bytes per {lay.block_size} values = {bpw:g} bits per weight, scales included"
    if file_bpw is not None:
        note += (
            f"; a whole file labelled {name} keeps some tensors at more bits (typical {file_bpw:g} bpw for "
            f"{file_model}, {TYPICAL_SOURCE})"
        )
    return WeightFormat(name, bpw, "block", False, True, note, name)


def _mix(name: str, typical: float, base: str, extra: str, model: str = "Llama 2 7B") -> WeightFormat:
    base_bpw = float(LAYOUTS[base].bits_per_weight)
    note = (
        f"{name} is a mix, not one block format: mostly {base} ({base_bpw:g} bpw), {extra}; "
        f"typical {typical:g} bits per weight for {model} ({TYPICAL_SOURCE})"
    )
    return WeightFormat(name, typical, "mix", True, True, note, base)


_FLOATS = {
    "F32": WeightFormat("F32", 32.0, "float", False, True, "32-bit float: 4 bytes per weight, no scales", "F32"),
    "F16": WeightFormat("F16", 16.0, "float", False, True, "16-bit float (FP16): 2 bytes per weight, no scales", "F16"),
    "BF16": WeightFormat("BF16", 16.0, "float", False, True, "bfloat16: 2 bytes per weight, no scales", "BF16"),
}
_ALIASES = {"FP32": "F32", "FLOAT32": "F32", "FP16": "F16", "FLOAT16": "F16", "HALF": "F16", "BFLOAT16": "BF16"}

KNOWN: dict[str, WeightFormat] = {
    **_FLOATS,
    "Q8_0": _block("Q8_0", 8.5008, "Llama-3.1-8B"),
    "Q4_0": _block("Q4_0"),
    "Q4_1": _block("Q4_1"),
    "Q5_0": _block("Q5_0"),
    "Q5_1": _block("Q5_1"),
    "Q2_K": _block("Q2_K", 3.35),
    "Q3_K": _block("Q3_K"),
    "Q4_K": _block("Q4_K"),
    "Q5_K": _block("Q5_K"),
    "Q6_K": _block("Q6_K", 6.56),
    "IQ4_NL": _block("IQ4_NL", 4.6818, "Llama-3.1-8B"),
    "IQ4_XS": _block("IQ4_XS", 4.4597, "Llama-3.1-8B"),
    "Q2_K_S": _mix("Q2_K_S", 2.9697, "Q2_K", "a few tensors at more bits", "Llama-3.1-8B"),
    "Q3_K_S": _mix("Q3_K_S", 3.50, "Q3_K", "the output matrix at Q6_K"),
    "Q3_K_M": _mix("Q3_K_M", 3.91, "Q3_K", "attn_v, attn_output, ffn_down at Q4_K/Q5_K, the output matrix at Q6_K"),
    "Q3_K_L": _mix("Q3_K_L", 4.27, "Q3_K", "attn_v, attn_output, ffn_down at Q5_K, the output matrix at Q6_K"),
    "Q4_K_S": _mix("Q4_K_S", 4.58, "Q4_K", "some early attn_v/ffn_down at Q5_K, the output matrix at Q6_K"),
    "Q4_K_M": _mix("Q4_K_M", 4.84, "Q4_K", "about half of attn_v and ffn_down and the output matrix at Q6_K"),
    "Q5_K_S": _mix("Q5_K_S", 5.52, "Q5_K", "the output matrix at Q6_K"),
    "Q5_K_M": _mix("Q5_K_M", 5.68, "Q5_K", "about half of attn_v and ffn_down and the output matrix at Q6_K"),
}

EXAMPLES = (
    "F32, FP16, BF16, INT8, 4-bit, Q4, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K … Q6_K, Q4_K_M, Q5_K_S, IQ4_XS, "
    "IQ2_XXS, IQ3_S, IQ1_M, TQ1_0, MXFP4 (every ggml type)"
)


def _ggml_type(name: str) -> WeightFormat | None:
    """A ggml type ``KNOWN`` does not list (IQ2_XXS, MXFP4 …), priced from gguf's table of block sizes;
    None if gguf knows no such type. Its bytes hold codes and scales together: the figure counts them."""
    size = ggml_type_sizes().get(name)
    if size is None:
        return None
    block, type_size = size
    bpw = float(Fraction(8 * type_size, block))  # a multiple of 1/256 at most: exact in a float
    if block == 1:  # a plain number per value: F64, I8 … I64
        kind = "float" if name.startswith(("F", "BF")) else "integer"
        note = f"{name}: {plural(type_size, 'byte')} per value = {bpw:g} bits per weight, no scales (gguf's table)"
        return WeightFormat(name, bpw, kind, False, True, note, name if name in LAYOUTS else None)
    note = (
        f"{name}: {type_size} bytes per {block} values = {bpw:g} bits per weight, codes and scales together "
        "(gguf's table of ggml block sizes)"
    )
    return WeightFormat(name, bpw, "block", False, True, note, name if name in LAYOUTS else None)


def read_weight_format(text: str) -> WeightFormat:
    """Read one weight-format name (case and spaces ignored): "FP16", "q4_k_m", "4-bit", "INT8".

    Raises ``ValueError`` naming what it can read, for an unknown name or a bit count outside
    1 … 32."""
    raw = (text or "").strip()
    key = re.sub(r"\s+", "", raw).upper()
    key = _ALIASES.get(key, key)
    if key in KNOWN:
        return KNOWN[key]
    if (ggml := _ggml_type(key)) is not None:
        return ggml
    bits = re.fullmatch(r"(?:Q|INT|I|UINT)(\d{1,3})|(\d{1,3})-?BITS?", key)
    if bits:
        n = int(bits.group(1) or bits.group(2))
        if not 1 <= n <= 32:
            raise ValueError(f"{quoted(raw, 20)}: bits per weight must be between 1 and 32")
        note = (
            f"{n}-bit integers: the name gives the code width only, not the scales stored with them "
            f"(e.g. Q4_0 is 4.5 bits per weight, Q4_K_M ≈ 4.84)"
        )
        return WeightFormat(f"{n}-bit", float(n), "integer", False, False, note)
    raise ValueError(f"unknown weight format {quoted(raw, 20)}; this reader knows {EXAMPLES}")
