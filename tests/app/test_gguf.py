"""App tests of GGUF on the pages: a real block under the ruler, real formats on the weights page, llama.cpp's
cache types and a memory plan from a .gguf on the memory page, the GGUF download. Expected values come from the
`gguf` package (its quantizer, its block sizes, its reader) or from the model's own tensors."""

import re
import sys

import gguf
import numpy as np
import pytest

from bench.fresh_app import new_app
from core.gguf.writer import write_gguf
from core.model.config import GPTConfig
from core.model.shipped import load_model, load_shipped_tokenizer
from core.quant.model_weights import weight_storage_bytes
from tests.conftest import make_model
from tests.helpers.app_util import charts
from ui import memory_terms

MiB = 2**20
TINY = GPTConfig(vocab_size=1024, block_size=64, n_layer=1, n_head=2, n_kv_head=1, n_embd=32, ffn_hidden=64)


def _texts(at) -> str:
    return "\n".join(
        e.value for kind in ("markdown", "caption", "error", "warning", "info", "success") for e in at.get(kind)
    )


def _facts(at) -> dict[str, str]:
    """The plan's header table as {what: value}, CommonMark escapes removed (the page escapes the file's text)."""
    [table] = [t.value for t in at.table if "from the header" in t.value.columns]
    return {k: re.sub(r"\\(.)", r"\1", v) for k, v in zip(table.iloc[:, 0], table["from the header"], strict=True)}


def _reference_block(values, fmt: str) -> bytes:
    """The gguf package's bytes for the values padded with zeros to one block of 32."""
    x = np.zeros((1, 32), dtype=np.float32)
    x[0, : len(values)] = values
    return gguf.quants.quantize(x, gguf.GGMLQuantizationType[fmt]).tobytes()


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory):
    """A one-layer model (2 query heads, 1 KV head of 16, context 64) exported as F32: well under the 1 MB upload
    limit. Returns (bytes, the model)."""
    model = make_model(TINY)
    path = tmp_path_factory.mktemp("tiny") / "tiny-F32.gguf"
    write_gguf(model, load_shipped_tokenizer(), "F32", path, name="tiny")
    return path.read_bytes(), model


def test_ruler_block_bytes_equal_gguf_quantize():
    """The ruler's default values (0.34, −0.12, 0.7, 0.23 + 28 zeros) as Q4_0: the hex shown is gguf's bytes; as
    Q5_1 too (fp16 scale and min, fifth bits), and bits per weight = 8 · type size / 32 from gguf's table."""
    at = new_app("app_pages/quantize.py")
    values = [0.34, -0.12, 0.7, 0.23]
    for fmt in ("Q4_0", "Q5_1", "Q8_0"):
        at.radio(key="quant.block_format").set_value(fmt).run()
        assert not at.exception
        assert f"`{_reference_block(values, fmt).hex(' ')}`" in _texts(at), fmt
        block, type_size = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType[fmt]]
        metrics = {m.label: m.value for m in at.metric}
        assert metrics["bits per weight"] == f"{8 * type_size / block:g}" and metrics["bytes per block"] == str(
            type_size
        )


def test_ruler_block_picks_the_second_block():
    """40 values make two blocks (the second padded with 24 zeros); block 1 shows values 32…39's bytes."""
    at = new_app("app_pages/quantize.py")
    values = [round(0.1 * k - 2, 1) for k in range(40)]
    at.text_area(key="quant.values").set_value(", ".join(map(str, values))).run()
    at.number_input(key="quant.block").set_value(1).run()
    assert not at.exception
    assert f"`{_reference_block(values[32:], 'Q4_0').hex(' ')}`" in _texts(at)
    assert "24 zeros appended" in _texts(at)


def test_ruler_block_refuses_a_scale_past_fp16():
    """A value of 10⁶ needs a Q4_0 scale of 125,000 > fp16's 65,504: a message, and the ruler above stays."""
    at = new_app("app_pages/quantize.py")
    at.text_area(key="quant.values").set_value("1000000, 1").run()
    assert not at.exception
    assert any("fp16" in e.value for e in at.error) and at.get("plotly_chart")


def test_weights_page_k_quant_table_from_the_layouts():
    """Q2_K … Q6_K at 2.625, 3.4375, 4.5, 5.5, 6.5625 bits per weight = 8 · gguf's type size / 256."""
    at = new_app("app_pages/weights.py")
    [table] = [d.value for d in at.table if "sub-block scales/mins" in d.value.columns]
    got = dict(zip(table["format"], table["bits per weight"], strict=True))
    for fmt in ("Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"):
        block, type_size = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType[fmt]]
        assert float(got[fmt]) == 8 * type_size / block
    assert got["Q2_K"] == "2.625" and got["Q6_K"] == "6.5625"


def test_weights_card_reads_q2_k_and_says_where_the_bits_go():
    """“7B, Q2_K, 8K” → 2.625 bits per weight (not 2.5, not 3.125 with a second group scale); the extra 0.625 bits
    are 0.5 of sub-block scales/mins and 0.125 of fp16 scales; no group-scale toggle is offered."""
    at = new_app("app_pages/weights.py")
    at.text_input(key="weights.card").set_value("7B, Q2_K, 8K").run()
    text = _texts(at)
    assert "2.625 bits per weight" in text and "0.5 for sub-block scales/mins" in text
    assert not [t for t in at.toggle if t.key == "weights.grouped"]


def test_weights_card_reads_mxfp4_and_iq2_xxs():
    """gpt-oss's “120B, MXFP4, 128K” (refused before) bills 4.25 bits per weight, gguf's 17 bytes per 32 values:
    120e9 · 4.25 / 8 = 63.75 GB of weights, no toggle; “7B, IQ2_XXS, 8K” 66 bytes per 256 → 2.0625 bits, 1.80 GB."""
    at = new_app("app_pages/weights.py")
    for card, bits, gb in (("120B, MXFP4, 128K", "4.25", "63.75 GB"), ("7B, IQ2_XXS, 8K", "2.0625", "1.80 GB")):
        at.text_input(key="weights.card").set_value(card).run()
        assert not at.exception and not [e for e in at.error if "unknown weight format" in e.value]
        text = _texts(at)
        assert f"{bits} bits per weight" in text and f"**{gb}**" in text, card
        assert not [t for t in at.toggle if t.key == "weights.grouped"]


def test_weights_card_does_not_add_a_second_scale():
    """“7B, Q4_0, 8K” bills 4.5 bits per weight, scales already in: 7e9 · 4.5 / 8 = 3,937,500,000 B + KV
    2·32·8,192·32·128·2 = 4,294,967,296 B + 1 GB = 9.23 GB (5 bits would be 9.67 GB); “7B, Q4, 8K” with its toggle
    on reaches the same 4.5."""
    at = new_app("app_pages/weights.py")
    for card in ("7B, Q4_0, 8K", "7B, Q4, 8K"):
        at.text_input(key="weights.card").set_value(card).run()
        assert "4.5 bits per weight" in _texts(at)
        assert any("9.23 GB needed" in e.value for e in at.error), card
    assert at.toggle(key="weights.grouped").value is True


def test_weights_card_names_and_overrides_the_kv_shape():
    """“70B, Q4, 8K” assumes Llama-3-70B (80 layers, 8 KV heads, its published config), said on the page; choosing
    Llama-2-7B overrides it (32 layers, 32 KV heads)."""
    at = new_app("app_pages/weights.py")
    at.text_input(key="weights.card").set_value("70B, Q4, 8K").run()
    assert "80 layers, 8 KV heads" in _texts(at) and "Llama-3-70B" in _texts(at)
    at.selectbox(key="weights.arch").set_value("Llama-2-7B (MHA)").run()
    assert "(32 layers, 32 KV heads, head width 128)" in _texts(at)


def test_weights_page_q4_k_m_is_a_mix_with_a_typical_figure():
    """Q4_K_M is said to be a mix, mostly Q4_K blocks, with its bits per weight labelled typical."""
    at = new_app("app_pages/weights.py")
    at.text_input(key="weights.card").set_value("6.74B, Q4_K_M, 4K").run()
    text = _texts(at)
    assert "is a mix" in text and "mostly Q4_K blocks" in text and "(typical for this mix)" in text


@pytest.mark.parametrize("fmt", ["Q4_0", "F32"])
def test_export_button_names_the_file_size(fmt, tmp_path):
    """The download is header + tensor data: the header ends at gguf's data offset of the same export, the tensor
    data is the storage count (Q4_0: 4.5 bits per projection weight, `weight_storage_bytes`; F32: 4 B per value)."""
    model = load_model()
    path = tmp_path / "m.gguf"
    size = write_gguf(model, load_shipped_tokenizer(), fmt, path)
    header = gguf.GGUFReader(path).data_offset
    storage = weight_storage_bytes(model, 4) if fmt == "Q4_0" else 4 * sum(p.numel() for p in model.parameters())
    assert size == header + storage
    at = new_app("app_pages/weights.py")
    at.radio(key="weights.export_format").set_value(fmt).run()
    [button] = at.get("download_button")
    assert f"({size:,} bytes)" in button.proto.label
    assert f"**{size:,} bytes** = {header:,} B header" in _texts(at) and f"+ {storage:,} B of tensor data" in _texts(at)


def test_memory_page_q8_0_cache_reads_like_llama_cpp():
    """64 layers × 8 KV heads × 128 at 32,768 positions in q8_0: 64 · 32,768 · (1,024 / 32 blocks) · 34 B =
    2,176 MiB for K, 4,352 MiB for K + V."""
    at = new_app("app_pages/memory.py")
    at.selectbox(key="memory.preset").set_value("Llama-3-70B (GQA)").run()
    for key, value in ((memory_terms.MEMORY_L, 64), (memory_terms.MEMORY_H, 8), (memory_terms.MEMORY_D, 128)):
        at.number_input(key=key).set_value(value).run()
    at.text_input(key=memory_terms.MEMORY_T).set_value("32768").run()
    [q8] = [o for o in at.selectbox(key=memory_terms.MEMORY_B).options if o.startswith("llama.cpp q8_0")]
    at.selectbox(key=memory_terms.MEMORY_B).set_value(q8).run()
    k = 64 * 32_768 * (8 * 128 // 32) * 34
    assert k == 2176 * MiB
    text = _texts(at)
    assert "K = **2,176.00 MiB**, V = **2,176.00 MiB**, K + V = **4,352.00 MiB**" in text
    assert f"**{2 * k:,} bytes**" in text and not at.exception


def test_memory_page_q8_0_refuses_rows_that_are_not_whole_blocks():
    """The Ch. 30 two-layer example (1 KV head × 4 = 4 values a row) cannot be stored in 32-value blocks: said."""
    at = new_app("app_pages/memory.py")
    b = next(s for s in at.selectbox if s.label.startswith("b:"))
    b.set_value(next(o for o in b.options if o.startswith("llama.cpp q4_0"))).run()
    assert any("not a multiple of it" in e.value for e in at.error) and not at.exception


def test_memory_plan_from_the_apps_own_export():
    """The Q4_0 export read back: 4 layers, 2 KV heads of 32, context 256 (assets/config.json), one row per model
    tensor; n_ctx starts at the file's 256 and f16 K = 4 · 256 · 2 · 32 · 2 B = 131,072 B."""
    model = load_model()
    at = new_app("app_pages/memory.py")
    got = _facts(at)
    assert (got["layers (n_layer)"], got["KV heads (n_kv_head)"], got["head size (K / V)"]) == ("4", "2", "32 / 32")
    assert got["context length"] == "256" and got["file type (general.file_type)"] == "Q4_0"
    [tensors] = [d.value for d in at.dataframe if "tensor" in d.value.columns]
    assert len(tensors) == len(list(model.parameters()))
    assert at.number_input(key="memory.gguf_n_ctx").value == 256
    assert f"({2 * 131_072:,} bytes)" in _texts(at) and any("Fits" in s.value for s in at.success)
    at.number_input(key="memory.gguf_budget_gib").set_value(0.001).run()  # 1,073,742 bytes
    assert any("Does not fit" in e.value and "over the 1.02 MiB budget" in e.value for e in at.error)
    budget = at.number_input(key="memory.gguf_budget_gib")
    assert budget.proto.format % budget.value == "0.001"  # the box shows the budget used (it read "0.00")


def test_the_gguf_plan_speaks_one_unit():
    """Issue 37 item 11: the plan said MiB in its sentence but GB and MB in its chart, budget and verdict for the same
    quantities. Now MiB (GiB from 1 GiB on) everywhere, bytes exact: the sentence, the budget box, the bar's axis,
    legend, budget label and text alternative, and the verdict."""
    at = new_app("app_pages/memory.py")
    [plan] = [
        c for c in charts(at) if c["layout"].get("xaxis", {}).get("title", {}).get("text", "").startswith("memory")
    ]
    said = [at.number_input(key="memory.gguf_budget_gib").label, plan["layout"]["xaxis"]["title"]["text"]]
    said += [a["text"] for a in plan["layout"]["annotations"]] + [t["name"] for t in plan["data"]]
    said += [plan["layout"]["meta"]["description"], *(s.value for s in at.success)]
    said += [m.value for m in at.markdown if m.value.startswith("KV cache in")]
    assert len(said) == 8 and not [t for t in said if re.search(r"\d ?[kMG]B\b|\(GB\)|GB =", t)], said
    assert "budget 8.00 GiB" in said and "memory (GiB = 2³⁰ bytes)" in said, said
    assert all("MiB" in t or "GiB" in t for t in said), said


def test_memory_plan_from_an_uploaded_tiny_gguf(tiny_gguf):
    """An uploaded one-layer F32 export is read back: 1 layer, 1 KV head of 16, context 64, its tensors' bytes =
    4 B × the model's values; f16 K at 64 positions = 64 · 16 · 2 B = 2,048 B."""
    data, model = tiny_gguf
    assert len(data) < 2**20
    at = new_app("app_pages/memory.py")
    at.radio(key="memory.gguf_source").set_value("upload a .gguf").run()
    at.file_uploader[0].set_value(("tiny-F32.gguf", data, "application/octet-stream")).run()
    assert not at.exception
    got = _facts(at)
    assert (got["layers (n_layer)"], got["KV heads (n_kv_head)"], got["head size (K / V)"]) == ("1", "1", "16 / 16")
    assert got["tensor bytes"] == f"{4 * sum(p.numel() for p in model.parameters()):,}" and got["name"] == "tiny"
    assert at.number_input(key="memory.gguf_n_ctx").value == 64
    assert f"({2 * 2048:,} bytes)" in _texts(at)


def test_memory_plan_reads_the_operators_models_folder(tiny_gguf, tmp_path, monkeypatch):
    """`streamlit run main.py -- --models-dir DIR`: the .gguf files in DIR are listed (a text file and a hidden file
    are not) and one is read by its listed name; without the option the page says how to start the app."""
    (tmp_path / "tiny.gguf").write_bytes(tiny_gguf[0])
    (tmp_path / "notes.txt").write_text("not a model")
    (tmp_path / ".hidden.gguf").write_bytes(tiny_gguf[0])
    at = new_app("app_pages/memory.py")
    at.radio(key="memory.gguf_source").set_value("the models folder (--models-dir)").run()
    assert any("--models-dir" in i.value for i in at.info)
    monkeypatch.setattr(sys, "argv", ["app.py", "--models-dir", str(tmp_path)])
    at.run()
    assert [o.split(" (")[0] for o in at.selectbox(key="memory.gguf_file").options] == ["tiny.gguf"]
    assert _facts(at)["name"] == "tiny"
    monkeypatch.setattr(sys, "argv", ["app.py", "--models-dri", str(tmp_path)])
    at.run()
    assert any("command line" in w.value for w in at.warning) and not at.exception


def test_weights_card_refusal_quotes_the_card_literally():
    """An unreadable card is quoted in its message with its markdown escaped (shown as typed, not bold)."""
    at = new_app("app_pages/weights.py")
    at.text_input(key="weights.card").set_value("**7B**, Q9, 8K").run()
    [err] = at.error
    assert r"\*\*7B\*\*" in err.value and not at.exception
