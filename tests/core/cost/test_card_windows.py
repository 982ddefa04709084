"""The weights page's model-card plan prices the KV cache layer by layer, as the memory page does: sliding
windows (Mistral's on every layer, Gemma 2's on alternate layers) keep min(T, W) positions. Expected bytes are
worked out here from the published configs, not from the plan's own functions."""

from fractions import Fraction

from core.cost.kv_shape import MODERN_PRESETS, PRESETS
from core.cost.shapes import parse_model_card
from core.cost.weight_bytes import card_budget

GEMMA = MODERN_PRESETS["Gemma-2-9B (every 2nd layer local, W = 4,096)"]


def test_gemma2_9b_card_at_8k_bf16():
    """google/gemma-2-9b: 42 layers, 8 KV heads, head_dim 256, sliding_window 4,096 on layers 0, 2, 4 … (21
    local, 21 global). "9B, BF16, 8K" with b = 2: a position costs 2 · 8 · 256 · 2 = 8,192 B per layer; 21 layers
    hold 8,192 positions and 21 hold 4,096: 8,192 · (21 · 8,192 + 21 · 4,096) = 2,113,929,216 B, not the uniform
    formula's 42 · 8,192 · 8,192 = 2,818,572,288 B. Weights: 9·10⁹ · 2 B = 18·10⁹ B."""
    per_position_layer = 2 * 8 * 256 * 2
    expected = per_position_layer * (21 * 8192 + 21 * 4096)
    assert expected == 2_113_929_216
    bill = card_budget(parse_model_card("9B, BF16, 8K"), GEMMA, False, 2, 1, 1.5, 24)
    assert bill.plan["memory/kv_cache"] == expected
    assert bill.plan["memory/weights"] == 18 * 10**9 and bill.plan["memory/overhead"] == 1_500_000_000
    assert bill.plan["total"] == 18 * 10**9 + expected + 1_500_000_000
    assert "L_global" in bill.kv_formula and "min(8,192; 4,096)" in bill.kv_formula
    assert "2,113,929,216 bytes" in bill.kv_formula
    assert "every 2nd layer global" in GEMMA.terms and "42 layers, 8 KV heads, head width 256" in GEMMA.terms
    two = card_budget(parse_model_card("9B, BF16, 8K"), GEMMA, False, 2, 2, 0, 24)  # two requests: twice
    assert two.plan["memory/kv_cache"] == 2 * expected


def test_mistral_7b_card_at_32k_keeps_the_window():
    """mistralai/Mistral-7B-v0.1: 32 layers, 8 KV heads, head_dim 128, sliding_window 4,096 on every layer.
    "7B, Q4_0, 32K": each layer holds 4,096 of 32,768 positions: 32 · 4,096 · 2 · 8 · 128 · 2 = 536,870,912 B.
    Below the window (4K) the window changes nothing: 32 · 4,096 · 4,096 B as well."""
    mistral = PRESETS["Mistral-7B-v0.1 (GQA)"]
    expected = 32 * 4096 * 2 * 8 * 128 * 2
    assert card_budget(parse_model_card("7B, Q4_0, 32K"), mistral, False, 2, 1, 0, 24).plan["memory/kv_cache"] == (
        expected
    )
    assert card_budget(parse_model_card("7B, Q4_0, 4K"), mistral, False, 2, 1, 0, 24).plan["memory/kv_cache"] == (
        expected
    )


def test_uniform_card_unchanged_and_q8_0_blocks():
    """Without windows the plan is M = 2·B·L·T·H_kv·d·b (Ch. 19's "7B, Q4, 8K" on Llama-2-7B: 32 · 8,192 · 2 · 32
    · 128 · 2 = 4,294,967,296 B); q8_0's b = 34/32 counts its block scales."""
    llama = PRESETS["Llama-2-7B (MHA)"]
    card = parse_model_card("7B, Q4, 8K")
    assert card_budget(card, llama, False, 2, 1, 0, 24).plan["memory/kv_cache"] == 2 * 32 * 8192 * 32 * 128 * 2
    q8 = card_budget(card, llama, False, Fraction(34, 32), 1, 0, 24).plan["memory/kv_cache"]
    assert q8 == 2 * 32 * 8192 * (32 * 128 // 32) * 34
