"""Export a model of ours as a GGUF file llama.cpp can load: llama architecture metadata, the BPE
tokenizer, and the weights as F32, F16, Q8_0 or Q4_0 (written with ``gguf.GGUFWriter``; the block
bytes are ours, ``core.gguf.blocks``, identical to ggml's).

Which tensors get which type, stated: F32 keeps everything in float32; F16 stores every matrix in
fp16 and the 1-D norm weights in float32 (as llama.cpp does); Q8_0 and Q4_0 quantize the block
projections (q, k, v, o, gate, up, down), as the "Quantizing the model" page does, and keep the
embedding, the output head and the norms in float32. So the Q4_0 file's weight bytes are exactly
``core.quant.model_weights.weight_storage_bytes(model, 4)`` (4.5 bits per projection weight).

One reordering: our attention uses Llama's rotate-half RoPE (dims i and i + head_dim/2 rotate
together, as Hugging Face stores Llama); ggml's llama architecture rotates adjacent pairs (2i,
2i + 1). Reordering the rows of W_q and W_k inside each head (row i → 2i, row i + head_dim/2 →
2i + 1) makes the same rotation act on the same pairs; q·k is unchanged because q and k get the
same order. llama.cpp's own converter does the same for Hugging Face Llama checkpoints
(``convert_hf_to_gguf.py``, ``LlamaModel.permute``), to the q and k biases too (Qwen2's q/k/v biases):
q = W x + b is reordered as a whole, so its rows of W and its entries of b move together. Other
biases (v, o, MLP) keep their order and go to llama.cpp's optional ``*.bias`` tensors.

What the llama architecture cannot hold is refused by name before anything is written
(``check_exportable``): LayerNorm, learned positions, a GELU MLP, a sliding window, RoPE scaling (we do
not write llama.cpp's ``rope_freqs``), and per-head q/k norms (Qwen3's ``q_norm``/``k_norm``: llama.cpp's
own ``qwen3`` architecture has them).
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from core.gguf.blocks import dequantize_blocks, quantize_blocks
from core.model.corpus import END
from core.model.layout import quantizable_weights
from core.model.model import GPT
from core.text import quoted

EXPORT_FORMATS = ("F32", "F16", "Q8_0", "Q4_0")
FILE_TYPES = {"F32": 0, "F16": 1, "Q4_0": 2, "Q8_0": 7}  # llama.cpp's LLAMA_FTYPE_* (general.file_type)


@dataclass(frozen=True)
class ExportedTensor:
    """One tensor as written: GGUF ``name``, our parameter name ``source``, ggml type, our
    ``shape`` (out, in) and its ``raw`` bytes (GGUF data, rows along the last axis)."""

    name: str
    source: str
    ggml_type: str
    shape: tuple[int, ...]
    raw: bytes


def rope_rows_to_ggml(w: np.ndarray, n_heads: int) -> np.ndarray:
    """Reorder W_q or W_k rows ``(n_heads · head_dim, in)``, or a q/k bias ``(n_heads · head_dim,)``,
    from rotate-half pairs to adjacent pairs inside each head: row i → 2i, row i + head_dim/2 → 2i + 1."""
    hd = w.shape[0] // n_heads
    return w.reshape(n_heads, 2, hd // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def rope_rows_from_ggml(w: np.ndarray, n_heads: int) -> np.ndarray:
    """Inverse of ``rope_rows_to_ggml``."""
    hd = w.shape[0] // n_heads
    return w.reshape(n_heads, hd // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


# GPTConfig fields the llama architecture cannot express, with the value it needs and why.
_LLAMA_ONLY = (
    ("norm", "rmsnorm", "llama.cpp's llama architecture has RMSNorm only"),
    ("positions", "rope", "llama.cpp's llama architecture has rotary positions only"),
    ("mlp", "swiglu", "llama.cpp's llama architecture has a SwiGLU MLP only"),
    ("sliding_window", None, "llama.cpp's llama architecture attends to the whole context"),
    ("rope_scaling", None, "this exporter does not write llama.cpp's rope_freqs tensor for it"),
    ("qk_norm", False, "llama.cpp's llama architecture has no per-head q/k norms (its qwen3 architecture has)"),
)


def check_exportable(model: GPT) -> None:
    """Raise ``ValueError`` naming the first ``GPTConfig`` field whose value a llama-architecture GGUF
    file cannot hold (GPT-2's LayerNorm, Mistral's sliding window, Llama 3.1's RoPE scaling, Qwen3's
    q/k norms …) and why. q/k/v, output and MLP biases are exported (see the module note)."""
    for field, allowed, why in _LLAMA_ONLY:
        value = getattr(model.cfg, field, allowed)
        if value != allowed:
            raise ValueError(f"cannot export as GGUF (llama architecture): {field} is {quoted(str(value), 40)}; {why}")


def _check_format(fmt: str) -> None:
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"export formats are {', '.join(EXPORT_FORMATS)}; got {quoted(str(fmt), 20)}")


def tensor_type(model: GPT, name: str, fmt: str) -> str:
    """The ggml type parameter ``name`` is stored in for an export as ``fmt`` (see the module note)."""
    _check_format(fmt)
    p = dict(model.named_parameters())[name]
    if fmt == "F32" or p.ndim == 1:
        return "F32"
    if fmt == "F16":
        return "F16"
    return fmt if name in quantizable_weights(model) else "F32"


def gguf_tensors(model: GPT, fmt: str) -> list[ExportedTensor]:
    """Every parameter of ``model`` as GGUF names and bytes for an export as ``fmt``."""
    import gguf

    _check_format(fmt)
    check_exportable(model)
    cfg = model.cfg
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, cfg.n_layer)
    out = []
    for source, p in model.named_parameters():
        w = p.detach().float().numpy()
        if source.endswith(("q_proj.weight", "q_proj.bias")):
            w = rope_rows_to_ggml(w, cfg.n_head)
        elif source.endswith(("k_proj.weight", "k_proj.bias")):
            w = rope_rows_to_ggml(w, cfg.n_kv_head)
        hf_name = source if source.startswith("lm_head") else "model." + source
        name = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        if name is None:  # gguf's writer said only "Duplicated tensor name None" at the second one
            raise ValueError(f"cannot export as GGUF (llama architecture): {source} has no tensor name there")
        ggml_type = tensor_type(model, source, fmt)
        out.append(ExportedTensor(name, source, ggml_type, tuple(w.shape), quantize_blocks(w, ggml_type)))
    return out


def storage_bytes(model: GPT, fmt: str) -> int:
    """Bytes of all tensor data in an export as ``fmt`` (the file is this plus the header)."""
    return sum(len(t.raw) for t in gguf_tensors(model, fmt))


def _add_tokenizer(writer, tok) -> None:
    import gguf

    vocab = tok.get_vocab(with_added_tokens=True)  # token → id
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    if [vocab[t] for t in tokens] != list(range(len(tokens))):
        raise ValueError("the tokenizer's ids are not 0 … n−1 without gaps; GGUF lists tokens by id")
    special = {t.content for t in tok.get_added_tokens_decoder().values() if t.special}
    merges = json.loads(tok.to_str())["model"]["merges"]
    writer.add_tokenizer_model("gpt2")  # byte-level BPE, GPT-2's byte alphabet
    writer.add_tokenizer_pre("gpt-2")  # GPT-2's pre-tokenizer regex (ByteLevel, use_regex)
    writer.add_token_list(tokens)
    writer.add_token_types([gguf.TokenType.CONTROL if t in special else gguf.TokenType.NORMAL for t in tokens])
    writer.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in merges])
    end = vocab[END]  # our only special token ends a document
    writer.add_bos_token_id(end)
    writer.add_eos_token_id(end)
    writer.add_add_bos_token(False)  # our prompts start without a BOS token
    writer.add_add_eos_token(False)


def write_gguf(model: GPT, tok, fmt: str, path: str | Path, name: str = "tiny-travel-gpt") -> int:
    """Write ``model`` and tokenizer ``tok`` as a llama-architecture GGUF file at ``path``;
    returns the file size in bytes. Raises ``ValueError`` for a format not in ``EXPORT_FORMATS``."""
    import gguf

    _check_format(fmt)
    check_exportable(model)  # before the file is opened: a refusal leaves nothing behind
    cfg = model.cfg
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name(name)
    w.add_context_length(cfg.block_size)
    w.add_embedding_length(cfg.n_embd)
    w.add_block_count(cfg.n_layer)
    w.add_feed_forward_length(cfg.ffn_hidden)
    w.add_head_count(cfg.n_head)
    w.add_head_count_kv(cfg.n_kv_head)
    w.add_rope_dimension_count(cfg.head_dim)
    if cfg.head_dim * cfg.n_head != cfg.n_embd:  # llama.cpp derives head_dim as n_embd / n_head unless told
        w.add_key_length(cfg.head_dim)
        w.add_value_length(cfg.head_dim)
    w.add_rope_freq_base(cfg.rope_theta)
    w.add_layer_norm_rms_eps(cfg.norm_eps)
    w.add_vocab_size(cfg.vocab_size)
    w.add_file_type(FILE_TYPES[fmt])
    w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    _add_tokenizer(w, tok)
    for t in gguf_tensors(model, fmt):
        if t.ggml_type == "F32":
            w.add_tensor(t.name, np.frombuffer(t.raw, dtype=np.float32).reshape(t.shape))
        elif t.ggml_type == "F16":
            w.add_tensor(t.name, np.frombuffer(t.raw, dtype=np.float16).reshape(t.shape))
        else:  # raw block bytes, one row of blocks per matrix row
            data = np.frombuffer(t.raw, dtype=np.uint8).reshape(t.shape[0], -1)
            w.add_tensor(t.name, data, raw_dtype=gguf.GGMLQuantizationType[t.ggml_type])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return os.path.getsize(path)


def export_gguf_bytes(model: GPT, tok, fmt: str, name: str = "tiny-travel-gpt") -> bytes:
    """The GGUF file as bytes (for a download button); written to a temporary file and removed."""
    _check_format(fmt)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.gguf"
        write_gguf(model, tok, fmt, path, name)
        return path.read_bytes()


@dataclass(frozen=True)
class ExportedFile:
    """A GGUF export as a download: ``data`` (the file), its ``file_name``, and its size split
    into the ``header_bytes`` before the tensor data (metadata, tokenizer, tensor table, alignment
    padding), the ``storage_bytes`` of the tensors (``storage_bytes``) and any ``padding_bytes``
    between tensors (0 for our models: every tensor is a multiple of the 32-byte alignment)."""

    data: bytes
    file_name: str
    header_bytes: int
    storage_bytes: int
    padding_bytes: int


def export_file(model: GPT, tok, fmt: str, name: str = "tiny-travel-gpt") -> ExportedFile:
    """``export_gguf_bytes`` with the file's size accounted for: the header ends where
    ``gguf.GGUFReader`` finds the tensor data to start. Raises ``ValueError`` like ``write_gguf``."""
    import gguf

    _check_format(fmt)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.gguf"
        write_gguf(model, tok, fmt, path, name)
        reader = gguf.GGUFReader(path)
        header = int(reader.data_offset)
        del reader  # release the memory map before the folder goes
        data = path.read_bytes()
    storage = storage_bytes(model, fmt)
    return ExportedFile(data, f"{name}-{fmt}.gguf", header, storage, len(data) - header - storage)


@torch.no_grad()
def block_quantized_model(model: GPT, fmt: str) -> GPT:
    """A copy of ``model`` whose weights are what an export as ``fmt`` stores, back in float:
    the model llama.cpp runs from that file. The original is not touched."""
    _check_format(fmt)
    q = copy.deepcopy(model)
    for name, p in q.named_parameters():
        t = tensor_type(model, name, fmt)
        w = p.detach().float().numpy()
        back = dequantize_blocks(quantize_blocks(w, t), t, w.shape)
        p.copy_(torch.from_numpy(back).to(p.dtype))
    return q.eval()
