"""A memory plan from a .gguf file: header and tensor table, KV cache by cache type, hostile files refused."""

import os
import struct

import gguf
import numpy as np
import pytest

from core.checkpoints.gguf_files import list_gguf_files, read_from_models_dir, read_upload
from core.cost.gguf_plan import gguf_memory_plan
from core.gguf.reader import GGUFSummary, read_gguf
from core.gguf.writer import write_gguf
from core.model.shipped import load_model, load_shipped_tokenizer

MiB = 2**20


@pytest.fixture(scope="module")
def q4_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "tiny-Q4_0.gguf"
    write_gguf(load_model(), load_shipped_tokenizer(), "Q4_0", path)
    return path


def _llama_like(path, n_layer=64, n_head=64, n_kv=8, n_embd=8192, ctx=32_768, vocab=5_000, head_count_kv=None):
    """A header-only llama file with a vocabulary longer than BULK_ARRAY and one small tensor."""
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(n_layer)
    w.add_head_count(n_head)
    w.add_head_count_kv(head_count_kv if head_count_kv is not None else n_kv)
    w.add_embedding_length(n_embd)
    w.add_context_length(ctx)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
    w.add_tokenizer_model("gpt2")
    w.add_token_list([f"t{i}" for i in range(vocab)])
    w.add_token_types([1] * vocab)
    w.add_token_merges([f"a{i} b{i}" for i in range(vocab)])
    w.add_tensor("token_embd.weight", np.zeros((4, 64), dtype=np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_summary_of_the_exported_model(q4_file):
    """The shipped Q4_0 export: llama, 4 layers, 4 heads, 2 KV heads of 32, context 256; 28 Q4_0 + 11 F32 tensors,
    1,467,904 B of weights for 1,000,576 values = 11.74 bits per weight."""
    s = read_gguf(q4_file)
    assert (s.architecture, s.file_type, s.model_name) == ("llama", "Q4_0", "tiny-travel-gpt")
    assert (s.n_layer, s.n_head, s.n_kv_head, s.head_dim_k, s.head_dim_v, s.context_length) == (4, 4, 2, 32, 32, 256)
    assert (s.n_params, s.weight_bytes) == (1_000_576, 1_467_904)
    assert s.bits_per_weight == 8 * 1_467_904 / 1_000_576
    by = s.by_type()
    assert by["Q4_0"] == {"tensors": 28, "values": 737_280, "bytes": 737_280 * 18 // 32}
    assert by["F32"]["tensors"] == 11 and s.file_bytes == os.path.getsize(q4_file)
    q = next(t for t in s.tensors if t.name == "blk.0.attn_k.weight")
    assert (q.ggml_type, q.shape, q.n_elements, q.n_bytes) == ("Q4_0", (64, 128), 8192, 8192 * 18 // 32)


def test_plan_for_the_exported_model(q4_file):
    """n_ctx 256: f16 K = 4 layers · 256 · 2 · 32 · 2 B = 131,072 B; q8_0 K = 4 · 256 · 2 blocks · 34 B = 69,632 B."""
    s = read_gguf(q4_file)
    f16 = gguf_memory_plan(s, 256, "f16", budget_bytes=2_000_000)
    assert f16["kv_cache/keys_bytes"] == 131_072 and f16["memory/weights"] == 1_467_904
    assert f16["total"] == 1_467_904 + 2 * 131_072 and f16["fits"] is True
    q8 = gguf_memory_plan(s, 256, "q8_0", budget_bytes=1_500_000)
    assert q8["kv_cache/keys_bytes"] == 69_632 and q8["fits"] is False
    assert gguf_memory_plan(s, 512, "f16")["notes"] and gguf_memory_plan(s, 512, "f16")["fits"] is None


def test_plan_for_a_70b_class_header(tmp_path):
    """64 layers × 8 KV heads × 128 (n_embd 8192 / 64 heads), 32,768 positions, q8_0: K 2,176 MiB, K+V 4,352 MiB;
    the 5,000-token vocabulary's strings are skipped, its scalar types read in bulk."""
    s = read_gguf(_llama_like(tmp_path / "big.gguf"))
    assert (s.n_layer, s.n_kv_head, s.head_dim_k, s.file_type) == (64, 8, 128, "Q4_K_M")
    plan = gguf_memory_plan(s, 32_768, "q8_0")
    assert plan["kv_cache/keys_bytes"] == 2176 * MiB and plan["memory/kv_cache"] == 4352 * MiB
    mixed = gguf_memory_plan(s, 32_768, "q8_0", "f16")
    assert mixed["kv_cache/values_bytes"] == 64 * 32_768 * 8 * 128 * 2


def test_per_layer_kv_heads(tmp_path):
    """head_count_kv as a per-layer array [8, 8, 0, 8]: the cache counts three layers' worth."""
    s = read_gguf(_llama_like(tmp_path / "h.gguf", n_layer=4, head_count_kv=[8, 8, 0, 8], vocab=10))
    assert s.n_kv_head == (8, 8, 0, 8)
    assert gguf_memory_plan(s, 100, "f16")["kv_cache/keys_bytes"] == 3 * 100 * 8 * 128 * 2


def test_plan_refuses_a_file_without_kv_terms():
    """A summary without layer or KV-head counts gets a ValueError naming what is missing."""
    s = GGUFSummary("x", 10, "mystery", None, None, None, None, None, None, None, None, (), 0, 0, 0.0)
    with pytest.raises(ValueError, match="n_layer"):
        gguf_memory_plan(s, 100)


def test_an_embedding_that_does_not_divide_into_the_heads_gives_no_head_size(tmp_path):
    """embedding_length 66 over 4 heads and no key/value length: llama.cpp refuses such a file; the summary
    read 66 // 4 = 16 and planned a cache from it. Now there is no head size, and the plan names it missing."""
    s = read_gguf(_llama_like(tmp_path / "odd.gguf", n_layer=2, n_head=4, n_kv=4, n_embd=66, ctx=64, vocab=10))
    assert (s.head_dim_k, s.head_dim_v) == (None, None)
    with pytest.raises(ValueError, match="head_dim_k"):
        gguf_memory_plan(s, 64)
    assert read_gguf(_llama_like(tmp_path / "even.gguf", 2, 4, 4, 64, 64, 10)).head_dim_k == 16


def _kv_header(key: bytes, vtype: int, payload: bytes, n_tensors=0) -> bytes:
    return (
        b"GGUF"
        + struct.pack("<IQQ", 3, n_tensors, 1)
        + struct.pack("<Q", len(key))
        + key
        + struct.pack("<I", vtype)
        + payload
    )


HOSTILE = {
    "empty": b"",
    "garbage": bytes(range(256)) * 4,
    "png": b"\x89PNG\r\n\x1a\n" + b"\x00" * 100,
    "magic only": b"GGUF",
    "version 9": b"GGUF" + struct.pack("<IQQ", 9, 0, 0),
    "a billion metadata entries": b"GGUF" + struct.pack("<IQQ", 3, 0, 10**9) + b"\x00" * 64,
    "2^60 tensors": b"GGUF" + struct.pack("<IQQ", 3, 2**60, 0) + b"\x00" * 64,
    "array of 2^60 uint8": _kv_header(b"k", 9, struct.pack("<IQ", 0, 2**60)),
    "array of 10^7 uint8 (short file)": _kv_header(b"k", 9, struct.pack("<IQ", 0, 10**7) + b"\x00" * 100),
    "array of 3·10^6 uint8 (past the cap)": _kv_header(b"k", 9, struct.pack("<IQ", 0, 3 * 10**6) + b"\x00" * 3 * 10**6),
    "array of 2^40 strings": _kv_header(b"k", 9, struct.pack("<IQ", 8, 2**40) + b"\x00" * 64),
    "string of 2^62 bytes": _kv_header(b"k", 8, struct.pack("<Q", 2**62) + b"abc"),
    "key of 2^63 bytes": b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 2**63) + b"k" * 20,
    "unknown value type": _kv_header(b"k", 77, b"\x00" * 16),
    "nested arrays": _kv_header(
        b"k", 9, struct.pack("<IQ", 9, 1) + struct.pack("<IQ", 9, 1) + struct.pack("<IQ", 9, 1)
    ),
    "bad utf-8 key": _kv_header(b"\xff\xfe", 4, struct.pack("<I", 1)),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_files_refused(tmp_path, name):
    """Empty, garbage, crafted counts and lengths, unknown types, nesting and bad UTF-8: ValueError, quickly."""
    path = tmp_path / "x.gguf"
    path.write_bytes(HOSTILE[name])
    with pytest.raises(ValueError):
        read_gguf(path)


@pytest.mark.parametrize("cut", [5, 23, 40, 300, 5_000, 29_800, 29_830, 100_000, -1])
def test_truncated_exports_refused(q4_file, tmp_path, cut):
    """The export cut anywhere (header, metadata, tensor table, tensor data, last byte) is refused with a reason."""
    data = q4_file.read_bytes()
    path = tmp_path / "cut.gguf"
    path.write_bytes(data[:cut])
    with pytest.raises(ValueError, match="truncated|corrupt|GGUF"):
        read_gguf(path)


def test_unknown_tensor_type_and_too_many_dims(q4_file, tmp_path):
    """A tensor of ggml type 99, or with 9 dimensions, is refused (the header is otherwise intact)."""
    data = bytearray(q4_file.read_bytes())
    i = data.index(b"token_embd.weight") + len("token_embd.weight")
    (n_dims,) = struct.unpack_from("<I", data, i)
    assert n_dims == 2
    bad_type = data.copy()
    struct.pack_into("<I", bad_type, i + 4 + 16, 99)
    (tmp_path / "t.gguf").write_bytes(bad_type)
    with pytest.raises(ValueError):
        read_gguf(tmp_path / "t.gguf")
    bad_dims = data.copy()
    struct.pack_into("<I", bad_dims, i, 9)
    (tmp_path / "d.gguf").write_bytes(bad_dims)
    with pytest.raises(ValueError):
        read_gguf(tmp_path / "d.gguf")


def test_models_folder_lists_only_its_own_gguf_files(q4_file, tmp_path):
    """Listed: *.gguf files and symlinks inside the folder; left out: hidden files, other extensions, folders,
    symlinks leading outside. Reading takes a listed name only; a path or an unlisted name is refused."""
    models, outside = tmp_path / "models", tmp_path / "elsewhere"
    models.mkdir()
    outside.mkdir()
    (models / "a.gguf").write_bytes(q4_file.read_bytes())
    (models / ".hidden.gguf").write_bytes(b"GGUF")
    (models / "notes.txt").write_text("x")
    (models / "dir.gguf").mkdir()
    (outside / "secret.gguf").write_bytes(q4_file.read_bytes())
    os.symlink(outside / "secret.gguf", models / "escape.gguf")
    os.symlink(models / "a.gguf", models / "alias.gguf")
    assert [f.name for f in list_gguf_files(models)] == ["a.gguf", "alias.gguf"]
    assert list_gguf_files(models)[0].size_bytes == q4_file.stat().st_size
    assert read_from_models_dir(models, "alias.gguf").n_layer == 4
    for bad in ["escape.gguf", "../elsewhere/secret.gguf", str(outside / "secret.gguf"), ".hidden.gguf", "b.gguf"]:
        with pytest.raises(ValueError, match="not a model in the models folder"):
            read_from_models_dir(models, bad)
    with pytest.raises(ValueError, match="does not exist"):
        list_gguf_files(tmp_path / "nope")


def test_uploads(q4_file):
    """An uploaded export reads like the file; over the size cap or garbage is refused."""
    data = q4_file.read_bytes()
    s = read_upload(data, "mine.gguf")
    assert s.source == "mine.gguf" and s.weight_bytes == 1_467_904
    with pytest.raises(ValueError, match="limit"):
        read_upload(data, max_bytes=1_000)
    with pytest.raises(ValueError):
        read_upload(b"not a model", "x.gguf")


def test_tensor_rows_and_facts(q4_file):
    """The page's tables: one row per tensor as GGUFReader lists them (type, bytes), facts from the header."""
    s = read_gguf(q4_file)
    r = gguf.GGUFReader(q4_file)
    rows = s.tensor_rows()
    assert [(x["tensor"], x["type"], x["bytes"]) for x in rows] == [
        (t.name, t.tensor_type.name, int(t.n_bytes)) for t in r.tensors
    ]
    q = next(x for x in rows if x["tensor"] == "blk.0.attn_q.weight")
    assert (q["shape"], q["bits per weight"]) == ("128 × 128", 4.5)
    facts = s.facts()
    assert facts["layers (n_layer)"] == "4" and facts["head size (K / V)"] == "32 / 32"
    assert facts["file bytes"] == f"{os.path.getsize(q4_file):,}"


def _with_metadata(path, add, n_tensors: int = 1):
    """A small llama file: 2 layers, 4 heads, 2 KV heads, then whatever ``add(writer)`` adds."""
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_embedding_length(64)
    add(w)
    for i in range(n_tensors):
        w.add_tensor(f"t{i}", np.zeros((1, 1), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def _short_arrays(w):
    for i in range(700):
        w.add_array(f"x.a{i}", list(range(16)))


def _nested_arrays(w):
    w.add_array("x.nest", [[1] * 1000] * 16)  # 16 arrays (read one by one) of 1,000 elements each


def _metadata_entries(w):
    for i in range(10_001):
        w.add_uint8(f"x.k{i}", 1)


HOSTILE_SMALL_FILES = {
    # a 16 kB upload claiming 10⁶ layers: the plan looped once per layer (28 s in the browser, 278 s at 10⁷)
    "million_layers": (lambda w: w.add_uint64("llama.block_count", 10**6), 1, "claims 1,000,000 layers"),
    # 2³²−1 layers as a 32-bit value: a MemoryError, shown as a traceback on the page
    "layers_2_32": (lambda w: w.add_uint32("llama.block_count", 2**32 - 1), 1, "claims 4,294,967,295 layers"),
    # 900 arrays of 1,024 bytes (under 1 MB) were read as one numpy view per element: 25 s and 600 MB
    "short_arrays": (_short_arrays, 1, "elements of short or nested arrays"),
    "nested_arrays": (_nested_arrays, 1, "elements of short or nested arrays"),
    "metadata_entries": (_metadata_entries, 1, "10,0[0-9]{2} metadata entries"),  # 60,000 took ~6 s
    "tensors": (lambda w: w.add_block_count(2), 10_001, "10,001 tensors"),  # 20,000 took ~4 s
    "arch_not_utf8": (lambda w: w.add_block_count(2), 1, "general.architecture is not UTF-8 text"),
}


@pytest.mark.parametrize("name", list(HOSTILE_SMALL_FILES))
def test_small_hostile_files_are_refused(tmp_path, name):
    """Files of at most a few hundred kB that made the reader or the plan take seconds to hours, or
    run out of memory, are refused by name; read and planned as the page does (a helper's files)."""
    add, n_tensors, words = HOSTILE_SMALL_FILES[name]
    path = _with_metadata(tmp_path / f"{name}.gguf", add, n_tensors)
    if name == "arch_not_utf8":  # the architecture's bytes made invalid UTF-8 in place
        path.write_bytes(path.read_bytes().replace(b"llama", b"ll\xc3(a", 1))
    with pytest.raises(ValueError, match=words):
        gguf_memory_plan(read_gguf(path), 4096, "f16")


def test_an_empty_gguf_names_what_is_missing_in_words(tmp_path):
    """A 24-byte version-3 file with no tensors and no metadata: the plan said "… head_dim_v for None:
    no KV plan", Python's None where the architecture goes."""
    path = tmp_path / "minimal.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 0))
    s = read_gguf(path)
    assert (s.architecture, s.n_layer, s.n_kv_head) == (None, None, None)
    with pytest.raises(ValueError) as err:
        gguf_memory_plan(s, 100)
    assert str(err.value) == (
        "the file does not give the layer count (n_layer), the KV heads (n_kv_head), the key head size "
        "(head_dim_k), the value head size (head_dim_v) for its model (the file names no architecture): "
        "no KV-cache plan"
    )


def test_a_header_claiming_one_entry_too_many_is_refused_in_the_singular(tmp_path):
    """ "it claims 1 metadata entries and 0 tensors": a 24-byte file announcing one metadata entry."""
    path = tmp_path / "one.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1))
    with pytest.raises(ValueError, match="it claims 1 metadata entry and 0 tensors$"):
        read_gguf(path)


def _sized_types():
    return [t for t in gguf.GGMLQuantizationType if t in gguf.GGML_QUANT_SIZES]


@pytest.mark.parametrize("qtype", _sized_types(), ids=lambda t: t.name)
def test_the_plan_prices_every_type_gguf_sizes(tmp_path, qtype):
    """A file holding a 3 × 512 tensor of each ggml type gguf gives a size for (IQ2_XXS, MXFP4, TQ1_0 … F64): the
    summary and the plan count 3 · 512 / block_size blocks × bytes per block, and the tensor row's bits per weight is
    8 · bytes / values from GGML_QUANT_SIZES."""
    block, type_size = gguf.GGML_QUANT_SIZES[qtype]
    rows, cols = 3, 512
    path = tmp_path / f"{qtype.name}.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(1), w.add_head_count(4), w.add_head_count_kv(2), w.add_embedding_length(256)
    w.add_tensor("blk.0.attn_q.weight", np.zeros((rows, cols // block * type_size), np.uint8), raw_dtype=qtype)
    w.write_header_to_file(), w.write_kv_data_to_file(), w.write_tensors_to_file(), w.close()
    s = read_gguf(path)
    n_bytes = rows * cols // block * type_size
    assert s.tensors[0].ggml_type == qtype.name and s.tensors[0].shape == (rows, cols)
    assert s.weight_bytes == n_bytes and s.tensor_rows()[0]["bits per weight"] == 8 * type_size / block
    assert gguf_memory_plan(s, 16)["memory/weights"] == n_bytes
