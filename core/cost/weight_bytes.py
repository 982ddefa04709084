"""The weights page's bills (Ch. 19 "Shrinking the numbers", "Why the LLM cares"): weight bytes by
precision, and a model card's memory at its full context against a budget. Exact arithmetic
(``Fraction``), printed in GB = 10⁹ bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from core.cost.counts import weight_bytes
from core.cost.kv_formula import formula_line
from core.cost.kv_layers import layers_kv_bytes
from core.gguf.layout import BLOCK_SCALES, CODES, K_QUANTS, LAYOUTS, SUB_SCALES, ggml_type_sizes
from core.quant.quantize import effective_bits_per_weight
from core.text import exact_decimal


def gb(n_bytes) -> str:
    """Bytes in GB (10⁹ bytes), two decimals, computed exactly: "3.94 GB"; under 0.01 GB, to two
    significant digits ("0.00050 GB" for 10⁶ parameters at 4 bits, which two decimals showed as 0.00)."""
    v = Fraction(n_bytes) / 10**9
    digits = 2
    while 0 < v < Fraction(1, 10**digits) and digits < 20:
        digits += 1
    return f"{exact_decimal(v, digits + (digits > 2))} GB"


@dataclass(frozen=True)
class WeightRow:
    """One precision in the weights table: nominal bits and bytes, and with per-group scales."""

    bits: int
    nominal_bytes: Fraction
    effective_bits: Fraction
    bytes_with_scales: Fraction


# Ch. 19's "Weight storage for seven billion parameters", its Tradeoff column in the chapter's words.
TRADEOFF = {
    32: "Finest precision here",
    16: "Common floating-point storage",
    8: "Fewer representable levels",
    4: "More rounding; quality needs checking",
}


def short_gb(n_bytes) -> str:
    """``gb`` without trailing zeros, as the chapter writes a nominal size: "3.5 GB", "28 GB"."""
    number, unit = gb(n_bytes).split(" ")
    return f"{number.rstrip('0').rstrip('.') if '.' in number else number} {unit}"


def weight_rows(n_params: int, group_size: int | None, scale_bits: int, bits=(32, 16, 8, 4)) -> list[WeightRow]:
    """Weight bytes of ``n_params`` parameters at each precision (Ch. 19: 7B at 4 bits = 3.5 GB);
    integer formats (< 16 bits) add one ``scale_bits`` scale per ``group_size`` weights, floats none."""
    rows = []
    for b in bits:
        eff = effective_bits_per_weight(b, group_size if b < 16 else None, scale_bits)
        rows.append(WeightRow(b, weight_bytes(n_params, b), eff, weight_bytes(n_params, eff)))
    return rows


@dataclass(frozen=True)
class Budget:
    """A model card's memory bill (``card_budget``: weights, the KV cache layer by layer, overhead) against a
    budget, all in bytes;
    ``scales_added``: whether one fp16 scale per 32 weights was added to the card's bits."""

    bits_per_weight: Fraction
    plan: dict
    budget_bytes: int
    scales_added: bool = False
    kv_formula: str = ""  # the KV term's formula line (core.cost.kv_formula), as the memory page writes it

    @property
    def fits(self) -> bool:
        return self.plan["total"] <= self.budget_bytes

    @property
    def parts_gb(self) -> dict[str, float]:
        """Weights, KV cache and overhead in GB, for the bar (drawing needs floats)."""
        return parts_gb(self.plan)


def parts_gb(plan: dict) -> dict[str, float]:
    """A memory plan's weights, KV cache and (if any) overhead in GB, for the bar (drawing needs floats)."""
    names = {"memory/weights": "weights", "memory/kv_cache": "KV cache", "memory/overhead": "overhead"}
    return {label: plan[key] / 1e9 for key, label in names.items() if key in plan}


def verdict(need: int, have: int, unit=gb) -> tuple[bool, str]:
    """Whether ``need`` bytes fit ``have``, and the sentence: "Fits: 9.23 GB needed of 10.00 GB (0.77 GB
    spare)" or "Does not fit: 9.23 GB needed, 1.23 GB over the 8.00 GB budget". ``unit`` formats bytes."""
    if need <= have:
        return True, f"Fits: {unit(need)} needed of {unit(have)} ({unit(have - need)} spare)."
    return False, f"Does not fit: {unit(need)} needed, {unit(need - have)} over the {unit(have)} budget."


def card_bits(weight_format, grouped: bool) -> tuple[Fraction, bool]:
    """Bits per weight a bill uses for a card's format (``core.gguf.names.WeightFormat``), and
    whether a group scale was added. A format whose figure already counts its scales (Q4_0 4.5,
    Q2_K 2.625, Q4_K_M typical 4.84, F16 16) is used as it is: adding 16/32 would count them twice.
    Only a bare bit count ("Q4", "4-bit", "INT8") below 16 bits gets one fp16 scale per 32 weights
    when ``grouped``."""
    bits = Fraction(repr(weight_format.bits_per_weight))  # repr: 4.84 → 121/25, not the float's tail
    if weight_format.counts_scales or not grouped or bits >= 16:
        return bits, False
    return effective_bits_per_weight(bits, 32), True


def card_budget(
    card, shape, grouped: bool, kv_bytes_per_value: float, batch_size: int, overhead_gb, budget_gb
) -> Budget:
    """The memory to serve ``card`` ("7B, Q4, 8K", ``core.cost.shapes.ModelCard``) at its full context
    with ``shape``'s KV terms (``core.cost.shapes.KVShape``; a card does not give them). ``grouped``:
    a bare bit count's weights in groups of 32 with one fp16 scale each (``card_bits``; formats
    that count their scales are left alone). ``kv_bytes_per_value`` may be a ``Fraction`` (q8_0:
    34/32). ``overhead_gb`` and ``budget_gb`` in GB (10⁹ bytes)."""
    bits, added = card_bits(card.weight_format, grouped)
    # The KV term layer by layer, as the memory page counts it (core.cost.kv_layers): a local layer of a
    # sliding-window model (Mistral, Gemma 2/3) keeps min(T, W) positions, MLA one latent per layer.
    layers = shape.layers(shape.n_layer, shape.n_kv_head, shape.head_dim, shape.window)
    lengths = [card.context_tokens] * batch_size
    kv = layers_kv_bytes(layers, lengths, kv_bytes_per_value)["total"]
    w = weight_bytes(card.n_params, bits)
    if isinstance(overhead_gb, bool) or not overhead_gb >= 0:
        raise ValueError(f"the overhead must be ≥ 0 GB, got {overhead_gb!r}")
    plan = {
        "memory/weights": -(-w.numerator // w.denominator),
        "memory/kv_cache": kv,
        "memory/overhead": round(overhead_gb * 10**9),
    }
    plan["total"] = sum(plan.values())
    formula = formula_line(layers, lengths, shape.head_dim, kv_bytes_per_value, kv)
    return Budget(bits, plan, round(budget_gb * 10**9), added, formula)


def card_weight_steps(card, grouped: bool) -> tuple[str, str]:
    """A card's weights in two steps (Ch. 19 "Why the LLM cares"): first the nominal bytes at the
    card's code width ("7B, Q4": 7·10⁹ × 4 bits ÷ 8 = 3.5 GB, the chapter's number), then what the
    stored scales add (one fp16 scale per 32 weights: 4.5 bits, 3.94 GB), as ``card_budget`` counts
    them. Markdown sentences; a format whose bits count their scales (Q4_0, Q4_K_M) starts from its
    codes' bits."""
    fmt = card.weight_format
    bits, added = card_bits(fmt, grouped)
    if fmt.kind == "block" and fmt.layout is None:  # a ggml type priced from gguf's table (IQ2_XXS, MXFP4 …)
        return _whole_block_steps(card, bits)
    lay = LAYOUTS.get(fmt.layout) if fmt.layout else None
    if lay is not None and lay.block_size > 1:
        code = next(r["bits_per_weight"] for r in lay.breakdown() if r["kind"] == CODES)
    else:
        code = Fraction(repr(fmt.bits_per_weight))
    nominal, stored = weight_bytes(card.n_params, code), weight_bytes(card.n_params, bits)
    first = (
        f"**Step 1, nominal:** {card.n_params / 1e9:g} billion parameters × {float(code):g} bits ÷ 8 = "
        f"**{short_gb(nominal)}** of weights, the card's nominal figure, and only one memory bill (Ch. 19 “Why the "
        "LLM cares”)."
    )
    if bits == code:
        if code >= 16:
            why = "floats need none"
        elif fmt.counts_scales:  # gguf's I8: plain int8 values
            why = f"{fmt.name} stores plain integers, without scales"
        else:
            why = "none added (the switch above is off)"
        return first, f"**Step 2, scales:** {why}; the bill below uses {float(bits):g} bits per weight."
    if added:
        why = "one fp16 scale per group of 32 weights adds 16/32 = 0.5 bits"
    elif fmt.kind == "mix":
        why = f"{fmt.name} stores block scales and keeps some tensors at more bits (typical)"
    else:
        why = f"{fmt.name} stores its scales in every block"
    return first, (
        f"**Step 2, scales:** {why}: {float(bits):g} bits per weight = **{gb(stored)}**, "
        f"{gb(stored - nominal)} more. The bill below uses this."
    )


def _whole_block_steps(card, bits: Fraction) -> tuple[str, str]:
    """``card_weight_steps`` for a ggml type whose block is not drawn part by part: its codes and scales
    share the block's bytes (IQ2_XXS packs a 4-bit scale into each 32 values' grid indices), so no code
    width stands apart; the block's own bits per weight are the bill's, said in both steps."""
    fmt = card.weight_format
    block, type_size = ggml_type_sizes()[fmt.name]
    stored = weight_bytes(card.n_params, bits)
    first = (
        f"**Step 1, nominal:** {card.n_params / 1e9:g} billion parameters × {float(bits):g} bits ÷ 8 = "
        f"**{gb(stored)}** of weights: {fmt.name} stores {type_size} bytes per {block} values (gguf's table of "
        "ggml block sizes)."
    )
    return first, (
        f"**Step 2, scales:** already in step 1: {fmt.name}'s blocks hold its codes and scales together; the bill "
        f"below uses {float(bits):g} bits per weight."
    )


# ---- llama.cpp's block formats: where the bits go -------------------------------------------------


def where_the_bits_go(layout_name: str, with_block: bool = True) -> str:
    """One sentence: a ggml block format's bits per weight as codes + sub-block scales/mins + fp16
    block scales (``ggml_layout.LAYOUTS[fmt].breakdown()``): "Q4_K: 144 bytes per 256 values =
    4 for codes + 0.375 for sub-block scales/mins + 0.125 for block scales (fp16) = 4.5 bits per
    weight" (``with_block=False``: from "4 for codes" on)."""
    lay = LAYOUTS[layout_name]
    parts = " + ".join(f"{float(r['bits_per_weight']):g} for {r['kind']}" for r in lay.breakdown())
    block = f"{lay.name}: {lay.type_size} bytes per {lay.block_size} values = " if with_block else ""
    return f"{block}{parts} = {float(lay.bits_per_weight):g} bits per weight"


def bits_sentence(weight_format) -> str | None:
    """Where a card's bits go (``core.gguf.names.WeightFormat``): its block format's
    ``where_the_bits_go``, said to be the main part of a mix; None for floats and bare bit counts."""
    name = weight_format.layout
    if name is None or LAYOUTS[name].block_size == 1:
        return None
    if weight_format.kind == "mix":
        return f"Where the bits go: {weight_format.name} is mostly {name} blocks. {where_the_bits_go(name)}."
    return f"Where the bits go: {where_the_bits_go(name, with_block=False)}."


def format_table(names=K_QUANTS) -> list[dict]:
    """One row per ggml format: bytes per block, values per block, bits per weight, and the bits per
    weight of its codes, sub-block scales/mins and fp16 block scales (exact from the layout, written
    as the shortest decimal: the K-quants are Q2_K 2.625, Q3_K 3.4375, Q4_K 4.5, Q5_K 5.5, Q6_K 6.5625)."""
    rows = []
    for name in names:
        lay = LAYOUTS[name]
        by_kind = {r["kind"]: r["bits_per_weight"] for r in lay.breakdown()}
        text = lambda bits: f"{float(bits):g}"  # noqa: E731 — multiples of 1/256: exact in a float
        rows.append(
            {
                "format": name,
                "bytes per block": lay.type_size,
                "values per block": lay.block_size,
                "bits per weight": text(lay.bits_per_weight),
                "codes": text(by_kind.get(CODES, 0)),
                "sub-block scales/mins": text(by_kind.get(SUB_SCALES, 0)),
                "fp16 block scales": text(by_kind.get(BLOCK_SCALES, 0)),
                "how a value is stored": lay.note,
            }
        )
    return rows
