"""The GGUF memory plan with a sliding window, against llama.cpp's allocation (src/llama-kv-cache-iswa.cpp:
SWA layers get min(n_ctx, n_swa + n_ubatch) cells padded to 256 unless --swa-full) and its loader's choice of
which layers slide (llama_model::load_hparams, set_swa_pattern). Every expected byte count is worked out here
from the model's published terms and the pattern as llama.cpp documents it, not from the plan's own rules."""

import pytest

from core.cost.gguf_plan import gguf_memory_plan, slides
from core.gguf.reader import GGUFSummary


def _summary(arch: str, window: int | None, n_layer=42, n_kv=8, head_dim=256) -> GGUFSummary:
    # Default: Gemma-2-9B's KV terms: 42 layers, 8 KV heads, key/value length 256.
    return GGUFSummary(
        "g.gguf", 10, arch, None, None, n_layer, 16, n_kv, head_dim, head_dim, None, (), 0, 0, 0.0, window
    )


def _pad(cells: int) -> int:
    return (cells + 255) // 256 * 256


def _f16(n_kv: int, head_dim: int, cells_per_layer) -> int:
    """K + V bytes in f16: one K row and one V row of n_kv · head_dim values, 2 B each, per cell."""
    return 2 * n_kv * head_dim * 2 * sum(cells_per_layer)


def test_gemma2_local_layers_cache_the_window_plus_a_ubatch():
    """Gemma 2 (llama.cpp's SWA pattern 2: even layers local), W = 4,096, n_ctx 8,192, f16: 21 layers at 8,192
    cells and 21 at pad256(4,096 + 512) = 4,608; --swa-full: all 42 at 8,192."""
    row = 8 * 256 * 2  # bytes of one layer's K (or V) row in f16
    plan = gguf_memory_plan(_summary("gemma2", 4096), 8192, "f16")
    assert plan["kv_cache/swa_cells"] == 4608
    assert plan["memory/kv_cache"] == 2 * row * (21 * 8192 + 21 * 4608)
    assert any("21 of 42 layers are local" in n for n in plan["notes"])
    full = gguf_memory_plan(_summary("gemma2", 4096), 8192, "f16", swa_full=True)
    assert full["memory/kv_cache"] == 2 * row * 42 * 8192 and full["kv_cache/swa_cells"] is None


def test_short_context_and_unknown_pattern():
    """n_ctx below the window: local layers are capped at n_ctx (1,024 → 1,024 cells); an architecture whose
    SWA pattern the plan does not know is counted full-size, and the note says so (the page shows it as a
    warning above the number: an upper bound, not a confident count)."""
    plan = gguf_memory_plan(_summary("gemma2", 4096), 1024, "f16")
    assert plan["kv_cache/swa_cells"] == 1024
    odd = gguf_memory_plan(_summary("mystery", 4096), 8192, "f16")
    assert odd["kv_cache/swa_cells"] is None and any("upper bound" in n for n in odd["notes"])
    assert odd["memory/kv_cache"] == _f16(8, 256, [8192] * 42) and not slides(_summary("mystery", 4096))
    assert gguf_memory_plan(_summary("llama", None, 32, 8, 128), 8192, "f16")["notes"] == ()


def test_gemma2_without_a_header_window_uses_llamas_default():
    """llama.cpp's Gemma 2 loader starts from n_swa = 4,096 and reads the header's window only if present."""
    plan = gguf_memory_plan(_summary("gemma2", None), 8192, "f16")
    assert plan["memory/kv_cache"] == _f16(8, 256, [4608, 8192] * 21)
    assert any("llama.cpp's own" in n for n in plan["notes"])


def test_gemma3n_e4b_pattern_5_and_only_20_layers_cached():
    """google/gemma-3n-E4B (text_config): 35 layers, 2 KV heads, head_dim 256, sliding_window 512. llama.cpp:
    set_swa_pattern(5) (layers 4, 9, 14 … global, the rest local) and n_layer_kv_from_start = 20 (layers 20 … 34
    reuse earlier caches, allocate none). At n_ctx 32,768, f16: 4 global layers (4, 9, 14, 19) at 32,768 cells,
    16 local at pad256(512 + 512) = 1,024, 15 at 0 = 301,989,888 B."""
    s = _summary("gemma3n", 512, n_layer=35, n_kv=2, head_dim=256)
    cells = [32768 if i in (4, 9, 14, 19) else 1024 for i in range(20)]
    plan = gguf_memory_plan(s, 32768, "f16")
    assert plan["memory/kv_cache"] == _f16(2, 256, cells) == 301_989_888
    assert any("first 20 of 35 layers" in n for n in plan["notes"])
    assert any("16 of 20 layers are local" in n for n in plan["notes"])
    full = gguf_memory_plan(s, 32768, "f16", swa_full=True)
    assert full["memory/kv_cache"] == _f16(2, 256, [32768] * 20)  # --swa-full: still no cache past layer 19


def test_llama4_scout_chunked_attention():
    """meta-llama/Llama-4-Scout-17B-16E (text_config): 48 layers, 8 KV heads, head_dim 128, attention_chunk_size
    8,192. llama.cpp: chunked attention, n_swa = 8,192 whatever the header says (0 switches it off), pattern 4
    (3 chunked, every 4th layer full: 3, 7, 11 …). At n_ctx 32,768, f16: 12 full layers at 32,768 cells, 36
    chunked at pad256(8,192 + 512) = 8,704 = 2,894,069,760 B."""
    s = _summary("llama4", None, n_layer=48, n_kv=8, head_dim=128)
    cells = [32768 if i % 4 == 3 else 8704 for i in range(48)]
    plan = gguf_memory_plan(s, 32768, "f16")
    assert plan["memory/kv_cache"] == _f16(8, 128, cells) == 2_894_069_760
    assert plan["kv_cache/swa_cells"] == 8704 and slides(s)
    assert any("Chunked attention" in n and "36 of 48" in n for n in plan["notes"])
    off = _summary("llama4", 0, n_layer=48, n_kv=8, head_dim=128)  # MobileLLM-style: sliding_window 0
    assert gguf_memory_plan(off, 32768, "f16")["memory/kv_cache"] == _f16(8, 128, [32768] * 48)
    assert not slides(off)


def test_exaone4_32b_and_the_small_model():
    """LGAI-EXAONE/EXAONE-4.0-32B: 64 layers, 8 KV heads, head_dim 128, sliding_window 4,096, pattern "LLLG".
    llama.cpp slides only the 64-layer model: pattern 4 (layers 3, 7 … global). At n_ctx 32,768, f16: 16
    global at 32,768, 48 local at 4,608 = 3,053,453,312 B. A 30-layer EXAONE 4 header with a window: llama.cpp
    does not slide it; every layer at n_ctx, and the note says why."""
    s = _summary("exaone4", 4096, n_layer=64, n_kv=8, head_dim=128)
    cells = [32768 if i % 4 == 3 else 4608 for i in range(64)]
    assert gguf_memory_plan(s, 32768, "f16")["memory/kv_cache"] == _f16(8, 128, cells) == 3_053_453_312
    small = gguf_memory_plan(_summary("exaone4", 4096, n_layer=30, n_kv=8, head_dim=64), 32768, "f16")
    assert small["memory/kv_cache"] == _f16(8, 64, [32768] * 30)
    assert any("only at 64 layers" in n for n in small["notes"])


def test_olmo3_7b_as_olmo2_with_a_window():
    """allenai/Olmo-3-1025-7B (llama.cpp arch olmo2): 32 layers, 32 KV heads, head_dim 128, sliding_window
    4,096, 3 sliding layers then 1 full. llama.cpp: pattern 4 when the header gives a window. At n_ctx 32,768,
    f16: 8 global at 32,768, 24 local at 4,608 = 6,106,906,624 B; OLMo 2 (no window): every layer at n_ctx."""
    s = _summary("olmo2", 4096, n_layer=32, n_kv=32, head_dim=128)
    cells = [32768 if i % 4 == 3 else 4608 for i in range(32)]
    assert gguf_memory_plan(s, 32768, "f16")["memory/kv_cache"] == _f16(32, 128, cells) == 6_106_906_624
    plain = gguf_memory_plan(_summary("olmo2", None, n_layer=32, n_kv=32, head_dim=128), 4096, "f16")
    assert plain["memory/kv_cache"] == _f16(32, 128, [4096] * 32) and plain["notes"] == ()


def test_smallthinker_global_layer_first():
    """SmallThinker (llama.cpp's 20B size: 52 layers; KV heads and head size here for the arithmetic): with a
    header window llama.cpp uses n_swa = 4,096 and set_swa_pattern(4, dense_first): layers 0, 4, 8 … global,
    the other three of each four local. At n_ctx 16,384, f16, 4 KV heads of 128: 13 global at 16,384, 39 local
    at 4,608 = 804,257,792 B."""
    s = _summary("smallthinker", 2048, n_layer=52, n_kv=4, head_dim=128)
    cells = [16384 if i % 4 == 0 else 4608 for i in range(52)]
    plan = gguf_memory_plan(s, 16384, "f16")
    assert plan["memory/kv_cache"] == _f16(4, 128, cells) == 804_257_792
    assert any("39 of 52" in n and "the header gives 2,048" in n for n in plan["notes"])
    none = _summary("smallthinker", None, n_layer=52, n_kv=4, head_dim=128)
    assert gguf_memory_plan(none, 16384, "f16")["memory/kv_cache"] == _f16(4, 128, [16384] * 52)


def test_phi3_window_is_switched_off_by_llama():
    """microsoft/Phi-3-mini-4k-instruct: 32 layers, 32 KV heads, head_dim 96, sliding_window 2,047. llama.cpp's
    loader switches Phi-3's window off: every layer at n_ctx 4,096 = 1,610,612,736 B, exactly, and said."""
    s = _summary("phi3", 2047, n_layer=32, n_kv=32, head_dim=96)
    plan = gguf_memory_plan(s, 4096, "f16")
    assert plan["memory/kv_cache"] == _f16(32, 96, [4096] * 32) == 1_610_612_736
    assert any("switches Phi-3's sliding window off" in n for n in plan["notes"]) and not slides(s)


@pytest.mark.parametrize("arch", ["gemma3", "cohere2", "gpt-oss"])
def test_other_patterns_without_a_window_do_not_slide(arch):
    """Gemma 3, Command R7B and gpt-oss read the window from the header: none given, nothing slides."""
    assert gguf_memory_plan(_summary(arch, None), 8192, "f16")["memory/kv_cache"] == _f16(8, 256, [8192] * 42)
