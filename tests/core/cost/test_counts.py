from fractions import Fraction

import pytest

from core.cost.counts import causal_pairs, kv_cache_bytes, score_grid


def test_ch19_score_grid():
    """Ch. 19: n = 1,000 → 1,000,000 pairs; n = 10,000 → 100,000,000 (before masking)."""
    assert score_grid(1_000) == 1_000_000
    assert score_grid(10_000) == 100_000_000


def test_causal_pairs_small_cases():
    """The mask keeps n(n+1)/2 pairs: 1, 3, 6, 10 for n = 1..4 (count the triangle)."""
    assert [causal_pairs(n) for n in range(1, 5)] == [1, 1 + 2, 1 + 2 + 3, 1 + 2 + 3 + 4]


def test_ch30_large_example():
    """Ch. 30: L=24, H_kv=8, d=128, T=4,096, b=2 → 402,653,184 bytes = 384 MiB; two requests 768 MiB."""
    one = kv_cache_bytes(24, 8, 128, 4096, 2)["total"]
    assert one == 402_653_184 and one / 2**20 == 384
    assert kv_cache_bytes(24, 8, 128, 4096, 2, batch_size=2)["total"] / 2**20 == 768


def test_exercise_3():
    """Exercise 3: four KV heads, four requests → 805,306,368 bytes = 768 MiB."""
    assert kv_cache_bytes(24, 4, 128, 4096, 2, batch_size=4)["total"] == 805_306_368


def test_ch19_cache_bill():
    """Ch. 19: width 12,288 (MHA: H_kv·d = 12,288), 96 layers, 2 bytes → 4,718,592 bytes/token; ≈ 9.66 GB at 2,048."""
    per_token = kv_cache_bytes(96, 96, 128, 1, 2)["total"]
    assert per_token == 4_718_592
    assert round(kv_cache_bytes(96, 96, 128, 2048, 2)["total"] / 1e9, 2) == 9.66


def test_four_bit_values_pack_to_half_bytes():
    """At 0.5 bytes per value the itemized halves are exact and the total is whole bytes."""
    out = kv_cache_bytes(1, 1, 3, 1, 0.5)
    assert out["kv_cache/keys_bytes"] == 1.5 and out["total"] == 3


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_bad_counts_raise(bad):
    """Negative or non-integer counts are refused with ValueError."""
    with pytest.raises(ValueError):
        kv_cache_bytes(bad, 1, 1, 1, 2)


def test_decode_step_scores():
    """One step at 1,000 positions: 1,000 scores cached vs 500,500 by recompute."""
    from core.cost.counts import decode_step_scores

    assert decode_step_scores(1000, cached=True) == 1000
    assert decode_step_scores(1000, cached=False) == 500_500


def test_generation_scores_match_step_by_step_sums():
    """Closed forms equal the explicit sums of the session counters (n=5, m=3: 28 vs 64)."""
    from core.cost.counts import generation_scores

    assert generation_scores(5, 3, cached=True) == 15 + 6 + 7
    assert generation_scores(5, 3, cached=False) == 15 + 21 + 28
    for n, m in [(1, 1), (8, 10), (37, 4)]:
        naive = sum(causal_pairs(t) for t in range(n, n + m))
        cached = causal_pairs(n) + sum(range(n + 1, n + m))
        assert generation_scores(n, m, False) == naive and generation_scores(n, m, True) == cached
    assert generation_scores(10**12, 10**6, cached=False) > 0  # exact big integers, no overflow


def test_units_binary_and_decimal():
    """402,653,184 bytes = 384.00 MiB (binary) = 402.65 MB (decimal)."""
    from core.text import format_bytes

    assert format_bytes(402_653_184) == "384.00 MiB"
    assert format_bytes(402_653_184, binary=False) == "402.65 MB"
    assert format_bytes(512) == "512 B"


def test_ragged_batch_sum_of_lengths_replaces_bt():
    """Unequal lengths 8 and 10 in the Ch. 30 small shape: 64 bytes per position × 18 = 1,152 bytes."""
    from core.cost.counts import kv_cache_itemized

    out = kv_cache_itemized(2, 2, 4, [8, 10], 2)
    assert out["kv_cache/positions"] == 18 and out["kv_cache/bytes_per_position"] == 64
    assert out["total"] == 512 + 640
    with pytest.raises(ValueError, match="empty"):
        kv_cache_itemized(2, 2, 4, [], 2)


def test_common_mistakes():
    """Llama-3-8B-like GQA (8 of 32 heads): hidden size instead of H_kv·d overstates by 4×; no factor 2 halves."""
    from core.cost.kv_compare import kv_mistakes

    m = kv_mistakes(32, 8, 128, 4096, 8192, 2)
    assert m["right"] == 2 * 32 * 8192 * 8 * 128 * 2 == 1_073_741_824
    assert m["hidden_size_not_kv"] == 4 * m["right"] and m["no_factor_2"] * 2 == m["right"]
    assert m["mib_as_mb"] == 1024


def test_ch19_weight_table_and_effective_bits():
    """7B params: 32/16/8/4 bits → 28/14/7/3.5 GB; 4-bit + fp16 scale per 32 → 4.5 bits; 8-bit → 8.5."""
    from core.cost.counts import weight_bytes
    from core.quant.quantize import effective_bits_per_weight

    assert [weight_bytes(7 * 10**9, b) / 10**9 for b in (32, 16, 8, 4)] == [28, 14, 7, 3.5]
    assert effective_bits_per_weight(4, 32) == 4.5 and effective_bits_per_weight(8, 32) == 8.5
    # Ch. 30: four 4-bit values + one FP32 scale = 6 bytes = 12 bits per weight.
    assert effective_bits_per_weight(4, 4, scale_bits=32) * 4 / 8 == 6


def test_params_match_the_real_model(tiny_model):
    """The closed-form parameter count equals sum(p.numel()) of the real model."""
    from core.cost.counts import params

    assert params(tiny_model.cfg)["total"] == sum(p.numel() for p in tiny_model.parameters())


def test_formula_matches_real_cache_bytes_batch_and_lengths(tiny_model):
    """The calculator equals the real KVCache bytes at several lengths and for batch 3."""
    import torch

    from core.decode.kv_cache import KVCache

    cfg = tiny_model.cfg
    for T in (1, 7, cfg.block_size):
        cache = KVCache(cfg, batch_size=3)
        tiny_model(torch.ones(3, T, dtype=torch.long), cache)
        assert cache.nbytes == kv_cache_bytes(cfg.n_layer, cfg.n_kv_head, cfg.head_dim, T, 4, batch_size=3)["total"]


def test_memory_plan_7b_q4_8k():
    """7B at 4 bits = 3.5 GB of weights; Llama-2-7B shape, 8,192 tokens, fp16 KV = 4 GiB; + 1 GB overhead."""
    from core.cost.counts import memory_plan

    plan = memory_plan(7 * 10**9, 4, 32, 32, 128, 8192, 2, 1, 10**9)
    assert plan["memory/weights"] == 3_500_000_000
    assert plan["memory/kv_cache"] == 4 * 2**30  # 512 KiB per token × 8,192
    assert plan["total"] == 3_500_000_000 + 4 * 2**30 + 10**9


def test_kv_sharing_variants():
    """32 heads → MHA 32, GQA 8, MQA 1; 71 (prime) has no GQA; 2 heads none; a custom count is added."""
    from core.cost.kv_compare import kv_sharing_variants

    assert list(kv_sharing_variants(32, 8).values()) == [32, 8, 1]
    assert list(kv_sharing_variants(71, 1).values()) == [71, 1]
    assert list(kv_sharing_variants(2, 2).values()) == [2, 1]
    assert list(kv_sharing_variants(12, 4).values()) == [12, 4, 1]  # a GQA model's own group is the GQA bar
    # Llama-3-70B (64 heads, 8 KV heads) and Llama-3.2-3B (24, 8): the bars read "GQA (16 KV heads)" and
    # "GQA (6 KV heads)" beside "yours (8 KV heads)".
    assert list(kv_sharing_variants(64, 8)) == ["MHA (64 KV heads)", "GQA (8 KV heads)", "MQA (1 KV head)"]
    assert list(kv_sharing_variants(24, 8).values()) == [24, 8, 1]
    assert list(kv_sharing_variants(64, 64).values()) == [64, 16, 1]  # MHA: a GQA group for comparison


def test_llama_cpp_q8_0_cache_with_block_overhead():
    """64 layers × 8 KV heads × 128, 32,768 positions, q8_0 (34 B per 32 values): K = 2,176 MiB, K+V = 4,352 MiB."""
    from core.cost.counts import kv_cache_bytes_typed

    out = kv_cache_bytes_typed(64, 8, 128, 32_768, "q8_0")
    assert out["kv_cache/keys_bytes"] == 2176 * 2**20 == out["kv_cache/values_bytes"]
    assert out["total"] == 4352 * 2**20 and out["kv_cache/bytes_per_value_k"] == Fraction(34, 32)
    # q4_0: 18 B per 32 → 1,152 MiB each; f16 is the plain 2-byte formula (8,192 MiB in all)
    assert kv_cache_bytes_typed(64, 8, 128, 32_768, "q4_0")["kv_cache/keys_bytes"] == 1152 * 2**20
    assert kv_cache_bytes_typed(64, 8, 128, 32_768, "f16")["total"] == kv_cache_bytes(64, 8, 128, 32_768, 2)["total"]


def test_cache_types_mix_and_refuse():
    """K and V may differ (q8_0 K + f16 V); unknown types and rows that are not whole blocks are refused."""
    from core.cost.counts import kv_cache_bytes_typed

    mixed = kv_cache_bytes_typed(2, 2, 32, 10, "q8_0", "f16")
    assert mixed["kv_cache/keys_bytes"] == 2 * 10 * 2 * 34 and mixed["kv_cache/values_bytes"] == 2 * 10 * 64 * 2
    with pytest.raises(ValueError, match="unknown cache type"):
        kv_cache_bytes_typed(2, 2, 32, 10, "q3_k")
    with pytest.raises(ValueError, match="multiple"):
        kv_cache_bytes_typed(2, 1, 16, 10, "q4_0")


def test_huge_byte_counts_print_every_digit_right():
    """10⁴⁰ bytes in GiB and 8·10⁴⁸ bytes in GB: every digit equals Python's exact Decimal division."""
    from decimal import ROUND_HALF_UP, Decimal, localcontext

    from core.text import format_bytes

    for n, size, unit, binary in ((10**40, 2**30, "GiB", True), (8 * 10**48, 10**9, "GB", False)):
        with localcontext() as ctx:
            ctx.prec = 80
            expected = (Decimal(n) / Decimal(size)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        assert format_bytes(n, binary) == f"{expected:,} {unit}"
    assert format_bytes(10**40).startswith("9,313,225,746,154,785,156,250,000,000,000.00")  # a float gives …785,234,…


def test_mistake_notes_are_exact():
    """Llama-3-8B-like GQA at 8,192 positions: 4.00 GiB instead of 1.00 GiB (4.00×); 1,024.00 “MB” vs 1,073.74 MB."""
    from core.cost.kv_compare import kv_mistake_notes, kv_mistakes

    notes = kv_mistake_notes(kv_mistakes(32, 8, 128, 4096, 8192, 2))
    assert notes["hidden_size_not_kv"].startswith("4.00 GiB instead of 1.00 GiB (4.00×)")
    assert notes["mib_as_mb"].startswith("1,024.00 “MB” is really MiB; in MB it is 1,073.74 MB (4.9% apart)")
    assert round((2**30 / 1e6 / 1024 - 1) * 100, 1) == 4.9


def test_weight_rows_and_card_budget():
    """7B: 4-bit + fp16 scale per 32 = 4.5 bits = 3,937,500,000 bytes; “7B, Q4, 8K” with Llama-2-7B's KV shape:
    3.9375 GB + 2·32·8,192·32·128·2 B + 1 GB overhead, over an 8 GB budget."""
    from core.cost.kv_shape import PRESETS
    from core.cost.shapes import parse_model_card
    from core.cost.weight_bytes import card_budget, gb, weight_rows

    rows = {r.bits: r for r in weight_rows(7 * 10**9, 32, 16)}
    assert rows[4].effective_bits == 4.5 and rows[4].bytes_with_scales == 3_937_500_000
    assert rows[16].effective_bits == 16 and gb(rows[32].nominal_bytes) == "28.00 GB"
    # The page's smallest model, 0.001 B parameters: 500,000 bytes at 4 bits, 4,000,000 at 32 (two decimals
    # showed every row as 0.00 GB); a value of 0.01 GB or more keeps two decimals.
    small = {r.bits: r for r in weight_rows(10**6, None, 16)}
    assert [gb(small[b].nominal_bytes) for b in (32, 8, 4)] == ["0.0040 GB", "0.0010 GB", "0.00050 GB"]
    assert gb(0) == "0.00 GB" and gb(10**7) == "0.01 GB" and gb(9_999_999) == "0.0100 GB" and gb(123) == "0.00000012 GB"
    bill = card_budget(parse_model_card("7B, Q4, 8K"), PRESETS["Llama-2-7B (MHA)"], True, 2, 1, 1.0, 8.0)
    assert bill.plan["total"] == 3_937_500_000 + 2 * 32 * 8192 * 32 * 128 * 2 + 10**9 and not bill.fits


def test_batch_kv_bytes_add_up_to_the_tensors(tiny_model):
    """Padded: payload + padding to the longest row + reserved slots = the batch's K/V tensors' bytes; ragged holds
    the payload only. Right after prefill the padding is Σ(longest − each) positions."""
    from core.cost.counts import batch_kv_bytes, kv_cache_bytes_for
    from core.serving.batch import Batch

    prompts, budgets = [[1, 2, 3], [4, 5, 6, 7, 8], [9]], [4, 2, 6]
    per_pos = kv_cache_bytes_for(tiny_model.cfg, 1, 4)
    for layout in ("padded", "ragged"):
        batch = Batch(tiny_model, prompts, budgets, layout)
        batch.prefill()
        kv = batch_kv_bytes([r.length for r in batch.requests], batch.s_max, per_pos, layout)
        assert kv["total"] == batch.held_bytes() and kv["kv_cache/payload"] == batch.payload_bytes()
        assert kv["kv_cache/padding"] == (0 if layout == "ragged" else (2 + 0 + 4) * per_pos)


def test_card_bits_never_count_scales_twice():
    """Formats that count their scales keep their figure with or without grouping (Q4_0 4.5, Q2_K 2.625, Q4_K_M
    typical 4.84, FP16 16); bare counts get 16/32 when grouped (Q4 → 4.5, INT8 → 8.5) and nothing otherwise."""
    from fractions import Fraction

    from core.cost.weight_bytes import card_bits
    from core.gguf.names import read_weight_format

    for name, bits in (("Q4_0", Fraction(9, 2)), ("Q2_K", Fraction(21, 8)), ("Q4_K_M", Fraction(484, 100)),
                       ("FP16", Fraction(16))):  # fmt: skip
        assert card_bits(read_weight_format(name), True) == card_bits(read_weight_format(name), False) == (bits, False)
    assert card_bits(read_weight_format("Q4"), True) == (Fraction(9, 2), True)
    assert card_bits(read_weight_format("INT8"), True) == (Fraction(17, 2), True)
    assert card_bits(read_weight_format("4-bit"), False) == (Fraction(4), False)


def test_where_the_bits_go_from_the_layouts():
    """K-quant rows: bytes / 256 values from gguf's type sizes, and codes + sub-block scales + fp16 scales add up
    to the bits per weight (Q3_K 3 + 0.375 + 0.0625 = 3.4375)."""
    from fractions import Fraction

    import gguf

    from core.cost.weight_bytes import bits_sentence, format_table, where_the_bits_go
    from core.gguf.names import read_weight_format

    for row in format_table():
        block, size = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType[row["format"]]]
        assert (row["values per block"], row["bytes per block"]) == (block, size)
        parts = (row["codes"], row["sub-block scales/mins"], row["fp16 block scales"])
        assert sum(Fraction(p) for p in parts) == Fraction(row["bits per weight"]) == Fraction(8 * size, block)
    assert "3 for codes + 0.375 for sub-block scales/mins + 0.0625 for block scales (fp16) = 3.4375" in (
        where_the_bits_go("Q3_K")
    )
    assert "mostly Q5_K" in bits_sentence(read_weight_format("Q5_K_M"))
    assert bits_sentence(read_weight_format("FP16")) is None and bits_sentence(read_weight_format("Q4")) is None


def test_kv_cache_typed_choices_and_mib():
    """b choices: q8_0 = 34/32 B, q4_0 = 18/32 B; 64 × 8 × 128 at 32,768 positions in q8_0 itemizes to K = V =
    2,176 MiB (printed so), and the plain formula with b = 34/32 gives the same total."""
    from fractions import Fraction

    from core.cost.counts import kv_cache_itemized, kv_cache_itemized_typed, kv_value_choices
    from core.text import format_bytes

    choices = {ctype: b for b, ctype in kv_value_choices().values() if ctype}
    assert choices == {"f16": 2, "q8_0": Fraction(34, 32), "q4_0": Fraction(18, 32)}
    kv = kv_cache_itemized_typed(64, 8, 128, [32_768], "q8_0")
    assert kv["kv_cache/keys_bytes"] == kv["kv_cache/values_bytes"] == 2176 * 2**20
    assert format_bytes(kv["total"], unit="MiB") == "4,352.00 MiB"
    assert kv["total"] == kv_cache_itemized(64, 8, 128, [32_768], Fraction(34, 32))["total"]
    assert kv_cache_itemized_typed(2, 4, 64, [100, 28], "f16")["total"] == 2 * 2 * 4 * 64 * 128 * 2
    with pytest.raises(ValueError, match="not a multiple"):
        kv_cache_itemized_typed(2, 1, 4, [8], "q8_0")


def test_hidden_size_mistake_on_an_mha_model_says_it_changes_nothing():
    """MHA (n_kv_head = n_head = 4, d = 32, hidden 128): hidden size = H_kv · d, so the "mistake" gives
    the right bytes, 2 · 2 · 128 · 16 · 4 = 32,768 B; the note says so instead of "32.00 KiB instead of
    32.00 KiB (1.00×)"."""
    from core.cost.kv_compare import kv_mistake_notes, kv_mistakes

    m = kv_mistakes(2, 4, 32, 128, 16, 4)
    assert m["right"] == m["hidden_size_not_kv"] == 2 * 2 * 128 * 16 * 4
    note = kv_mistake_notes(m)["hidden_size_not_kv"]
    assert "either way" in note and "instead of" not in note
