"""GGUF export of the shipped model, read back with gguf's own GGUFReader (the reference)."""

import json

import gguf
import numpy as np
import pytest
import torch

from core.gguf.blocks import (
    dequantize_blocks,
    quantize_blocks,
)
from core.gguf.writer import (
    EXPORT_FORMATS,
    block_quantized_model,
    export_gguf_bytes,
    rope_rows_from_ggml,
    rope_rows_to_ggml,
    storage_bytes,
    write_gguf,
)
from core.model.layout import quantizable_weights
from core.model.rope import apply_rope, rope_tables
from core.model.shipped import ASSETS, load_model, load_shipped_tokenizer
from core.quant.model_weights import weight_storage_bytes


@pytest.fixture(scope="module")
def model():
    return load_model()


@pytest.fixture(scope="module")
def exported(model, tmp_path_factory):
    """Each export format written once: {fmt: path}."""
    tok, out = load_shipped_tokenizer(), {}
    for fmt in EXPORT_FORMATS:
        out[fmt] = tmp_path_factory.mktemp("gguf") / f"tiny-{fmt}.gguf"
        write_gguf(model, tok, fmt, out[fmt])
    return out


def _field(reader, key):
    return reader.get_field(key).contents()


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_metadata_is_llama_with_our_shape(exported, fmt):
    """llama architecture; block_count 4, heads 4, KV heads 2, context 256, n_embd 128, FFN 352, RoPE 32 / 10,000."""
    r = gguf.GGUFReader(exported[fmt])
    assert _field(r, "general.architecture") == "llama"
    expected = {
        "llama.block_count": 4,
        "llama.attention.head_count": 4,
        "llama.attention.head_count_kv": 2,
        "llama.context_length": 256,
        "llama.embedding_length": 128,
        "llama.feed_forward_length": 352,
        "llama.rope.dimension_count": 32,
        "llama.vocab_size": 1024,
    }
    assert {k: _field(r, k) for k in expected} == expected
    assert _field(r, "llama.rope.freq_base") == 10000.0
    assert _field(r, "llama.attention.layer_norm_rms_epsilon") == pytest.approx(1e-5)
    assert _field(r, "general.file_type") == gguf.LlamaFileType[{"F32": "ALL_F32"}.get(fmt, f"MOSTLY_{fmt}")]


def test_tokenizer_is_our_bpe(exported):
    """tokenizer.ggml: gpt2 BPE, 1,024 tokens in id order, tokenizer.json's 767 merges, <|endoftext|> control/EOS."""
    r = gguf.GGUFReader(exported["F32"])
    spec = json.loads((ASSETS / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = spec["model"]["vocab"]
    assert _field(r, "tokenizer.ggml.model") == "gpt2" and _field(r, "tokenizer.ggml.pre") == "gpt-2"
    assert _field(r, "tokenizer.ggml.tokens") == sorted(vocab, key=vocab.get)
    assert _field(r, "tokenizer.ggml.merges") == [" ".join(m) for m in spec["model"]["merges"]]
    types = _field(r, "tokenizer.ggml.token_type")
    assert types[0] == gguf.TokenType.CONTROL and set(types[1:]) == {gguf.TokenType.NORMAL}
    assert _field(r, "tokenizer.ggml.eos_token_id") == vocab["<|endoftext|>"] == 0
    assert _field(r, "tokenizer.ggml.add_bos_token") is False


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_every_tensor_dequantizes_to_our_values(model, exported, fmt):
    """Each of the 39 tensors, dequantized by gguf and put back in our row order, equals our stored values exactly."""
    params = {n: p.detach().numpy() for n, p in model.named_parameters()}
    quantized = set(quantizable_weights(model))
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, model.cfg.n_layer)
    ours_by_gguf = {
        names.get_name(n if n.startswith("lm_head") else "model." + n, try_suffixes=(".weight",)): n for n in params
    }
    r = gguf.GGUFReader(exported[fmt])
    assert len(r.tensors) == len(params) == 39
    q4_model = dict(block_quantized_model(model, fmt).named_parameters())
    for t in r.tensors:
        name = ours_by_gguf[t.name]
        w = params[name]
        got = gguf.quants.dequantize(t.data, t.tensor_type).reshape(w.shape)
        if name.endswith("q_proj.weight"):
            got = rope_rows_from_ggml(got, model.cfg.n_head)
        elif name.endswith("k_proj.weight"):
            got = rope_rows_from_ggml(got, model.cfg.n_kv_head)
        if fmt in ("Q8_0", "Q4_0") and name in quantized:
            assert t.tensor_type.name == fmt
            expected = dequantize_blocks(quantize_blocks(w, fmt), fmt, w.shape)
        elif fmt == "F16" and w.ndim == 2:
            expected = w.astype(np.float16).astype(np.float32)
        else:
            assert t.tensor_type.name == "F32"
            expected = w
        assert np.array_equal(got, expected), t.name
        assert np.array_equal(q4_model[name].detach().numpy(), expected), name


@pytest.mark.parametrize(
    "fmt,data_bytes",
    [
        ("F32", 1_000_576 * 4),
        # 2-D weights in fp16, the 9 norm vectors of 128 in float32
        ("F16", (1_000_576 - 9 * 128) * 2 + 9 * 128 * 4),
        ("Q8_0", 1_836_544),  # the "Quantizing the model" page's 8-bit count, fp16 scale per 32
        ("Q4_0", 1_467_904),  # … and its 4-bit count
    ],
)
def test_file_size_is_storage_plus_header(model, exported, fmt, data_bytes):
    """File size = header and metadata (GGUFReader's data offset) + our storage count, which is the model's
    bytes: 4 B per value (F32), fp16 matrices (F16), and weight_storage_bytes at 8 and 4 bits for Q8_0 and Q4_0."""
    r = gguf.GGUFReader(exported[fmt])
    assert storage_bytes(model, fmt) == data_bytes
    if fmt in ("Q8_0", "Q4_0"):
        assert data_bytes == weight_storage_bytes(model, 8 if fmt == "Q8_0" else 4, 32, 2)
    assert exported[fmt].stat().st_size == r.data_offset + data_bytes
    assert sum(int(t.n_bytes) for t in r.tensors) == data_bytes


def test_rope_row_order_turns_rotate_half_into_adjacent_pairs():
    """Rotating q with our rotate-half RoPE then reordering rows equals reordering then rotating adjacent pairs
    (ggml's llama RoPE); the inverse order restores the weights."""
    from core.model.config import GPTConfig

    cfg = GPTConfig(vocab_size=8, block_size=16, n_layer=1, n_head=2, n_kv_head=1, n_embd=16, ffn_hidden=8)
    hd, pos = cfg.head_dim, 11
    cos, sin = rope_tables(cfg, torch.float64)
    x = torch.randn(1, 1, 1, hd, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    ours = apply_rope(x, cos[pos : pos + 1], sin[pos : pos + 1])[0, 0, 0].numpy()
    xs = rope_rows_to_ggml(x[0, 0, 0].numpy()[:, None], 1)[:, 0]
    theta = pos * cfg.rope_theta ** (-np.arange(0, hd, 2) / hd)
    pairs = xs.reshape(-1, 2)
    adjacent = np.stack(
        [
            pairs[:, 0] * np.cos(theta) - pairs[:, 1] * np.sin(theta),
            pairs[:, 0] * np.sin(theta) + pairs[:, 1] * np.cos(theta),
        ],
        axis=1,
    ).ravel()
    assert np.allclose(rope_rows_to_ggml(ours[:, None], 1)[:, 0], adjacent, atol=1e-12)
    w = np.arange(4 * hd * 3, dtype=np.float32).reshape(4 * hd, 3)
    assert np.array_equal(rope_rows_from_ggml(rope_rows_to_ggml(w, 4), 4), w)


def test_export_bytes_and_refusal(model):
    """export_gguf_bytes gives a GGUF file's bytes; a format outside F32/F16/Q8_0/Q4_0 is refused."""
    tok = load_shipped_tokenizer()
    raw = export_gguf_bytes(model, tok, "Q4_0")
    assert raw[:4] == b"GGUF" and len(raw) > 1_467_904
    with pytest.raises(ValueError, match="export formats"):
        export_gguf_bytes(model, tok, "Q4_K")


def test_export_file_splits_header_and_storage(exported):
    """export_file's bytes are the written file; its header ends at GGUFReader's data offset; storage = the
    tensors' bytes as the reader finds them; nothing between tensors."""
    from core.gguf.writer import export_file

    f = export_file(load_model(), load_shipped_tokenizer(), "Q8_0")
    assert f.data == exported["Q8_0"].read_bytes() and f.file_name == "tiny-travel-gpt-Q8_0.gguf"
    r = gguf.GGUFReader(exported["Q8_0"])
    assert f.header_bytes == r.data_offset and f.storage_bytes == sum(int(t.n_bytes) for t in r.tensors)
    assert f.padding_bytes == 0 and len(f.data) == f.header_bytes + f.storage_bytes


def _llama_cpp_permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp's convert_hf_to_gguf.py ``LlamaModel.permute``, written out index by index: inside each head of
    ``hd`` rows, GGUF row 2j is Hugging Face row j and GGUF row 2j + 1 is row j + hd/2 (weights and biases alike)."""
    hd = w.shape[0] // n_head
    order = [h * hd + j + half * hd // 2 for h in range(n_head) for j in range(hd // 2) for half in (0, 1)]
    return w[order]


@pytest.fixture(scope="module")
def biased(tmp_path_factory):
    """A Qwen2-shaped model (q/k/v biases, GQA 4/2) with random weights and biases, exported as F32 and Q8_0."""
    from core.model.config import GPTConfig
    from core.model.model import GPT

    torch.manual_seed(0)
    cfg = GPTConfig(vocab_size=1024, block_size=64, n_layer=2, n_head=4, n_kv_head=2, n_embd=64, ffn_hidden=96,
                    qkv_bias=True, tie_embeddings=True)  # fmt: skip
    m = GPT(cfg).eval()
    with torch.no_grad():
        for n, p in m.named_parameters():
            if n.endswith("bias"):
                p.normal_()  # nn.Linear's init is small; these are plainly non-zero
    paths = {}
    for fmt in ("F32", "Q8_0"):
        paths[fmt] = tmp_path_factory.mktemp("biased") / f"{fmt}.gguf"
        write_gguf(m, load_shipped_tokenizer(), fmt, paths[fmt])
    return m, paths


@pytest.mark.parametrize("fmt", ["F32", "Q8_0"])
def test_qkv_biases_export_permuted_as_llama_cpp_does(biased, fmt):
    """A model with q/k/v biases exports (it failed with gguf's "Duplicated tensor name None"): read back by
    gguf.GGUFReader, attn_q.bias and attn_k.bias are llama.cpp's row permutation of ours (n_head 4 and n_kv_head 2
    heads), attn_v.bias is ours unchanged, all float32 and with the same permutation as attn_q/attn_k's weights."""
    m, paths = biased
    r = gguf.GGUFReader(paths[fmt])
    got = {t.name: t for t in r.tensors}
    params = {n: p.detach().numpy() for n, p in m.named_parameters()}
    for i in range(m.cfg.n_layer):
        a = f"layers.{i}.self_attn."
        q_b, k_b, v_b = (got[f"blk.{i}.attn_{x}.bias"] for x in "qkv")
        assert {q_b.tensor_type.name, k_b.tensor_type.name, v_b.tensor_type.name} == {"F32"}
        assert np.array_equal(q_b.data, _llama_cpp_permute(params[a + "q_proj.bias"], 4))
        assert np.array_equal(k_b.data, _llama_cpp_permute(params[a + "k_proj.bias"], 2))
        assert np.array_equal(v_b.data, params[a + "v_proj.bias"])
        if fmt == "F32":
            q_w = got[f"blk.{i}.attn_q.weight"].data.reshape(params[a + "q_proj.weight"].shape)
            assert np.array_equal(q_w, _llama_cpp_permute(params[a + "q_proj.weight"], 4))
    assert len(r.tensors) == len(params) == 1 + 2 * 12 + 1  # embedding (tied head), 12 per layer, final norm


def test_biased_q_rotated_as_ggml_equals_ours(biased):
    """q = W x + b from the exported attn_q tensors, rotated in ggml's adjacent pairs at position 7, equals our
    rotate-half rotation of our q, reordered: the biases moved with their rows (a bias left in Hugging Face order
    would rotate against the wrong partner)."""
    m, paths = biased
    r = gguf.GGUFReader(paths["F32"])
    got = {t.name: np.asarray(t.data, dtype=np.float64) for t in r.tensors}
    cfg, hd, pos = m.cfg, m.cfg.head_dim, 7
    x = np.random.default_rng(1).standard_normal(cfg.n_embd)
    attn = m.layers[1].self_attn
    w, b = attn.q_proj.weight.detach().double().numpy(), attn.q_proj.bias.detach().double().numpy()
    ours = torch.from_numpy(w @ x + b).view(1, cfg.n_head, 1, hd)
    cos, sin = rope_tables(cfg, torch.float64)
    ours = apply_rope(ours, cos[pos : pos + 1], sin[pos : pos + 1]).reshape(-1).numpy()
    q = got["blk.1.attn_q.weight"].reshape(cfg.n_head * hd, cfg.n_embd) @ x + got["blk.1.attn_q.bias"]
    theta = pos * cfg.rope_theta ** (-np.arange(0, hd, 2) / hd)
    pairs = q.reshape(cfg.n_head, hd // 2, 2)
    ggml = np.stack(
        [pairs[..., 0] * np.cos(theta) - pairs[..., 1] * np.sin(theta),
         pairs[..., 0] * np.sin(theta) + pairs[..., 1] * np.cos(theta)], axis=-1,
    ).reshape(-1)  # fmt: skip
    assert np.allclose(ggml, _llama_cpp_permute(ours, cfg.n_head), atol=1e-5)


@pytest.mark.parametrize(
    "change,field",
    [
        ({"norm": "layernorm"}, "norm"),
        ({"positions": "learned"}, "positions"),
        ({"mlp": "gelu_tanh"}, "mlp"),
        ({"sliding_window": 16}, "sliding_window"),
        ({"qk_norm": True}, "qk_norm"),  # Qwen3's per-head q/k norms: llama.cpp's qwen3 architecture, not llama
        (
            {
                "rope_scaling": {
                    "factor": 8.0,
                    "low_freq_factor": 1.0,
                    "high_freq_factor": 4.0,
                    "original_max_position_embeddings": 16,
                }
            },
            "rope_scaling",
        ),  # fmt: skip
    ],
)
def test_what_llama_cannot_hold_is_refused_by_name(change, field, tmp_path):
    """A model the llama architecture cannot express is refused naming the config field, and no file is written."""
    from core.model.config import GPTConfig
    from core.model.model import GPT

    shape = {"vocab_size": 1024, "block_size": 32, "n_layer": 1, "n_head": 2, "n_kv_head": 1, "n_embd": 32}
    cfg = GPTConfig(**shape, ffn_hidden=64, **change)
    with pytest.raises(ValueError, match=f"cannot export as GGUF.*{field}"):
        write_gguf(GPT(cfg), load_shipped_tokenizer(), "F32", tmp_path / "x.gguf")
    assert not (tmp_path / "x.gguf").exists()


def test_head_dim_apart_from_n_embd_is_written(tmp_path):
    """head_dim 32 with 4 heads over n_embd 64 (Qwen3-0.6B's kind: 16 × 128 over 1,024): the file states key and
    value lengths 32, which llama.cpp would otherwise take as n_embd / n_head = 16."""
    from core.model.config import GPTConfig
    from core.model.model import GPT

    cfg = GPTConfig(vocab_size=1024, block_size=32, n_layer=1, n_head=4, n_kv_head=2, n_embd=64, ffn_hidden=64,
                    head_dim=32)  # fmt: skip
    write_gguf(GPT(cfg), load_shipped_tokenizer(), "F32", tmp_path / "x.gguf")
    r = gguf.GGUFReader(tmp_path / "x.gguf")
    assert _field(r, "llama.attention.key_length") == _field(r, "llama.attention.value_length") == 32
