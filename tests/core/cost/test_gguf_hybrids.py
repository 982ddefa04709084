"""GGUF hybrids as llama.cpp allocates them (issue 57): Qwen3-Next's full_attention_interval and the recurrent
(SSM) state of its and Granite-4.0-H's other layers, from real files written by the ``gguf`` package.

Reference: llama.cpp's loader marks a Qwen3-Next layer recurrent when (i + 1) mod full_attention_interval ≠ 0 and a
Granite-4.0-H layer recurrent when its head_count_kv is 0; ``llama_hparams::n_embd_r`` = (d_conv − 1)·(d_inner +
2·n_group·d_state) and ``n_embd_s`` = d_state·d_inner values per layer and sequence, held in F32."""

import gguf
import numpy as np

from core.cost.gguf_plan import gguf_memory_plan
from core.gguf.reader import read_gguf


def _write(path, arch: str, scalars: dict, head_count_kv, extra=()) -> str:
    w = gguf.GGUFWriter(str(path), arch)
    for key, value in scalars.items():
        w.add_uint32(f"{arch}.{key}", value)
    if isinstance(head_count_kv, list):
        w.add_array(f"{arch}.attention.head_count_kv", head_count_kv)
    else:
        w.add_uint32(f"{arch}.attention.head_count_kv", head_count_kv)
    for key in extra:
        w.add_uint32(f"{arch}.{key}", 7)
    w.add_tensor("token_embd.weight", np.zeros((4, 64), dtype=np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


QWEN3_NEXT = {  # Qwen3-Next-80B-A3B's GGUF header (its config.json's terms as convert_hf_to_gguf writes them)
    "block_count": 48, "embedding_length": 2048, "attention.head_count": 16, "attention.key_length": 256,
    "attention.value_length": 256, "context_length": 262144, "full_attention_interval": 4, "ssm.conv_kernel": 4,
    "ssm.state_size": 128, "ssm.group_count": 16, "ssm.inner_size": 4096, "ssm.time_step_rank": 32,
}  # fmt: skip


def test_qwen3_next_caches_only_its_full_attention_layers(tmp_path):
    """12 of 48 layers attend: at n_ctx 32,768 in f16, 12 · 2 · 2 · 256 · 2 B · 32,768 = 805,306,368 B (768 MiB;
    every layer counted before: 3,221,225,472 B, 4× high). The other 36 keep r = 3·(4,096 + 2·16·128) = 24,576
    and s = 128·4,096 = 524,288 values in F32: 36 · 548,864 · 4 = 79,036,416 B, at every n_ctx."""
    summary = read_gguf(_write(tmp_path / "q3n.gguf", "qwen3next", QWEN3_NEXT, 2))
    plan = gguf_memory_plan(summary, 32_768)
    assert plan["memory/kv_cache"] == 12 * 2 * 2 * 256 * 2 * 32_768 == 805_306_368
    assert plan["memory/recurrent_state"] == 36 * (3 * (4096 + 2 * 16 * 128) + 128 * 4096) * 4 == 79_036_416
    assert plan["total"] == plan["memory/weights"] + 805_306_368 + 79_036_416
    assert any("36 of 48 layers keep a recurrent state" in n for n in plan["notes"])
    assert gguf_memory_plan(summary, 65_536)["memory/recurrent_state"] == 79_036_416
    assert gguf_memory_plan(summary, 1024, n_seq=2)["memory/recurrent_state"] == 2 * 79_036_416
    assert plan["uncounted"] == ()


def test_granite_4_h_counts_and_names_its_mamba_state(tmp_path):
    """Granite-4.0-H-Tiny: 40 layers, head_count_kv 4 on layers 5, 15, 25, 35 and 0 elsewhere; ssm conv_kernel 4,
    state_size 128, group_count 1, inner_size 3,072. KV at n_ctx 4,096 in f16: 4 · 2 · 4 · 128 · 2 · 4,096 =
    33,554,432 B; state: 36 · (3 · (3,072 + 2 · 128) + 128 · 3,072) · 4 = 58,060,800 B (neither counted nor
    named before)."""
    kv = [4 if i % 10 == 5 else 0 for i in range(40)]
    scalars = {"block_count": 40, "embedding_length": 1536, "attention.head_count": 12, "context_length": 131072,
               "ssm.conv_kernel": 4, "ssm.state_size": 128, "ssm.group_count": 1, "ssm.inner_size": 3072,
               "ssm.time_step_rank": 48}  # fmt: skip
    plan = gguf_memory_plan(read_gguf(_write(tmp_path / "g4h.gguf", "granitehybrid", scalars, kv)), 4096)
    assert plan["memory/kv_cache"] == 4 * 2 * 4 * 128 * 2 * 4096 == 33_554_432
    assert plan["memory/recurrent_state"] == 36 * (3 * (3072 + 2 * 128) + 128 * 3072) * 4 == 58_060_800


def test_missing_ssm_terms_and_unknown_keys_are_named(tmp_path):
    """A hybrid without its ssm.* sizes gets a sentence instead of a silent 0; a header key under the
    architecture's prefix that no reader counts is listed (and known harmless ones, like RoPE's, are not)."""
    terms = {k: v for k, v in QWEN3_NEXT.items() if not k.startswith("ssm.")}
    extra = ("attention.indexer.head_count", "rope.dimension_count", "expert_count")
    plan = gguf_memory_plan(read_gguf(_write(tmp_path / "x.gguf", "qwen3next", terms, 2, extra)), 4096)
    assert plan["memory/recurrent_state"] == 0
    assert any("36 layers keep a recurrent state, not counted" in n and "qwen3next.ssm.state_size" in n
               for n in plan["notes"])  # fmt: skip
    assert plan["uncounted"] == ("qwen3next.attention.indexer.head_count",)
