"""The GGUF memory plan with a sliding window, against llama.cpp's allocation (src/llama-kv-cache-iswa.cpp:
SWA layers get min(n_ctx, n_swa + n_ubatch) cells padded to 256 unless --swa-full)."""

from core.cost.gguf_plan import gguf_memory_plan
from core.gguf.reader import GGUFSummary


def _summary(arch: str, window: int | None) -> GGUFSummary:
    # Gemma-2-9B's KV terms: 42 layers, 8 KV heads, key/value length 256.
    return GGUFSummary("g.gguf", 10, arch, None, None, 42, 16, 8, 256, 256, 8192, (), 0, 0, 0.0, window)


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
    SWA pattern the plan does not know is counted full-size, and the note says so."""
    plan = gguf_memory_plan(_summary("gemma2", 4096), 1024, "f16")
    assert plan["kv_cache/swa_cells"] == 1024
    odd = gguf_memory_plan(_summary("mystery", 4096), 8192, "f16")
    assert odd["kv_cache/swa_cells"] is None and any("upper bound" in n for n in odd["notes"])
    assert gguf_memory_plan(_summary("gemma2", None), 8192, "f16")["notes"] == ()
