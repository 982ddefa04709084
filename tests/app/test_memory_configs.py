"""The memory page on today's published configs (tests/core/cost/configs/), pasted as a user would: each priced
as transformers' own cache holds it (the byte figures below are those its model reads, tests/core/cost/
test_kv_hybrid.py and test_kv_config.py), a hybrid's fixed state beside its KV cache, in numbers and a figure."""

import json
from pathlib import Path

from bench.fresh_app import new_app
from tests.helpers.app_util import charts
from ui import memory_sections, memory_terms

CONFIGS = Path(__file__).parents[1] / "core" / "cost" / "configs"


def _pasted(name: str, lengths: str):
    at = new_app("app_pages/memory.py")
    at.selectbox(key=memory_terms.MEMORY_PRESET).set_value("From a config.json (paste or upload)").run()
    at.text_area(key=memory_sections.MEMORY_PASTED).set_value((CONFIGS / name).read_text()).run()
    at.text_input(key=memory_terms.MEMORY_T).set_value(lengths).run()
    assert not at.exception and not at.error and not at.warning, [e.value for e in (*at.error, *at.warning)]
    return at


def _title(fig: dict) -> str:
    return fig["layout"].get("title", {}).get("text", "")


def _text(at) -> str:
    return "\n".join(m.value for m in (*at.markdown, *at.caption))


def test_jamba_counts_its_4_attention_layers_and_shows_the_mamba_state():
    """Jamba-v0.1 at 5 positions: M over L_attn = 4 layers (81,920 B, not 32 layers' 655,360), S = 28 Mamba
    layers' state (16,515,072 B), M + S; the figure draws the KV line growing and the state flat."""
    at = _pasted("jamba_v0_1.json", "5")
    text = _text(at)
    assert "M = 2 · B · L_attn · T · H_kv · d · b = 2 · 1 · 4 · 5 · 8 · 128 · 2 = **81,920 bytes**" in text
    assert "attention on 4 of 32 layers (4, 12, 20, 28); the other 28 are Mamba layers" in text
    assert "= **16,515,072 bytes**, the same at every T" in text
    assert "M + S = 81,920 + 16,515,072 = **16,596,992 bytes**" in text
    [fig] = [c for c in charts(at) if _title(c).startswith("The cache grows with T")]
    kv, flat = fig["data"][0], fig["data"][1]
    assert kv["y"][0] == 0 and kv["y"][-1] > kv["y"][0] and len(set(flat["y"])) == 1 and flat["y"][0] == 16_515_072
    assert "equal at T = 1,008" in json.dumps(fig["layout"]["annotations"])


def test_qwen3_next_counts_its_12_attention_layers():
    """Qwen3-Next-80B-A3B at 5 positions: 12 attention layers (122,880 B, not 48 layers' 491,520) and 36 Gated
    DeltaNet layers' state (77,856,768 B)."""
    text = _text(_pasted("qwen3_next_80b_a3b_instruct.json", "5"))
    assert "2 · 1 · 12 · 5 · 2 · 256 · 2 = **122,880 bytes**" in text
    assert "the other 36 are Gated DeltaNet layers" in text and "= **77,856,768 bytes**, the same at every T" in text


def test_gemma_3_27b_slides_five_layers_of_six():
    """gemma-3-27b-it's text_config at 32,768 positions: 3,120,562,176 B (10 global, 52 local layers), not
    520,093,696 (every layer local); the caption says which layers slide."""
    text = _text(_pasted("gemma_3_27b_it.json", "32768"))
    assert "**3,120,562,176 bytes**" in text and "every 6th layer global, the others local" in text


def test_decilm_style_per_layer_heads_and_its_own_bar():
    """num_key_value_heads_per_layer: Σ 85 heads over 32 layers at one position, 43,520 B (not 32-head MHA's
    524,288), the caption giving the counts per layer; the sharing chart adds the model's own bar, as listed,
    beside MHA/GQA/MQA of one count each."""
    at = _pasted("decilm_style_7b.json", "1")
    assert (
        "Σ_ℓ H_kv,ℓ·d_ℓ · Σ min(T, W_ℓ) · b = 2 · (11 · 512 · 1 + 20 · 256 · 1 + 1 · 128 · 1) · 2 = **43,520 bytes**"
        in (_text(at))
    )
    text = _text(at)
    assert "1 to 4 KV heads per layer" in text and "11 layers with 4, 20 layers with 2, 1 layer with 1" in text
    [fig] = [c for c in charts(at) if _title(c) == "Same model, different KV-head sharing"]
    bars = dict(zip(fig["data"][0]["x"], fig["data"][0]["y"], strict=True))
    assert bars["as listed (1–4 per layer)"] == 43_520 and bars["MHA (32 KV heads)"] == 32 * 2 * 32 * 128 * 2
    assert len(set(bars.values())) == len(bars)


def test_qwen2_window_on_every_layer_is_priced():
    """Qwen2 with max_window_layers 0 at 5,000 positions: every layer keeps min(T, 4,096), 234,881,024 B."""
    text = _text(_pasted("qwen2_7b_window_every_layer.json", "5000"))
    assert "**234,881,024 bytes**" in text and "every layer local" in text


def test_hybrid_preset_typed_over_keeps_its_state_layers():
    """The Jamba preset with L typed as 16: the period rule gives 2 attention layers (4, 12) and 14 Mamba layers."""
    at = new_app("app_pages/memory.py")
    at.selectbox(key=memory_terms.MEMORY_PRESET).set_value("Jamba-v0.1 (4 attention + 28 Mamba layers)").run()
    at.text_input(key=memory_terms.MEMORY_T).set_value("1").run()
    at.number_input(key=memory_terms.MEMORY_L).set_value(16).run()
    text = _text(at)
    assert at.selectbox(key=memory_terms.MEMORY_PRESET).value == memory_terms.MEMORY_CUSTOM and not at.exception
    assert "attention on 2 of 16 layers (4, 12); the other 14 are Mamba layers" in text
    assert "**8,192 bytes**" in text and "1 · 14 · (32,768 · 2 + 131,072 · 4)" in text


def _paste(text: str, lengths: str = "1000"):
    at = new_app("app_pages/memory.py")
    at.selectbox(key=memory_terms.MEMORY_PRESET).set_value("From a config.json (paste or upload)").run()
    at.text_area(key=memory_sections.MEMORY_PASTED).set_value(text).run()
    at.text_input(key=memory_terms.MEMORY_T).set_value(lengths).run()
    assert not at.exception
    return at


def test_a_field_not_counted_is_named_and_the_number_gets_no_headline():
    """A field that may change the cache and that no reader here counts (issue 57): named in a warning, the
    number printed as not sure, no headline metric; transformers has no class for the model_type, so it stays."""
    cfg = {"model_type": "newlm", "num_hidden_layers": 2, "num_attention_heads": 2, "hidden_size": 8,
           "torch_dtype": "float16", "attention_sink_size": 4, "rope_theta": 10000.0}  # fmt: skip
    at = _paste(json.dumps(cfg), "8")
    [warning] = [w.value for w in at.warning if "Not counted" in w.value]
    assert "`attention_sink_size`" in warning and "rope_theta" not in warning
    assert not at.metric[1:]  # only B, the request count: no byte headline
    assert any("512 bytes" in m.value for m in at.markdown)  # 2·1·8·2·2·2 B, the formula still shown
    assert any("(not sure)" in m.value for m in at.markdown)
    assert any("no config class" in c.value for c in at.caption)


def test_transformers_own_cache_agrees_with_a_gemma4_config():
    """Gemma 4's global layers (their own head size and KV heads) priced as transformers' Gemma4 cache holds them:
    the page says so, and the headline stands. 12 layers: 10 local · 2·2·16·2 B + 2 global · 2·1·64·2 B = 1,792
    B per position in bfloat16; 1,000 positions (past the window of 8 the local layers keep 8)."""
    cfg = {
        "model_type": "gemma4_text", "num_hidden_layers": 12, "hidden_size": 64, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 16, "global_head_dim": 64, "num_global_key_value_heads": 1,
        "attention_k_eq_v": True, "sliding_window": 8, "vocab_size": 128, "intermediate_size": 64,
        "vocab_size_per_layer_input": 128, "hidden_size_per_layer_input": 8, "torch_dtype": "bfloat16",
        "pad_token_id": 0,
    }  # fmt: skip
    at = _paste(json.dumps(cfg))
    [ok] = [s.value for s in at.success if "transformers" in s.value]
    assert "transformers' own cache agrees: 1,792 B per position and 0 B fixed" in ok
    assert not at.warning
    expected = 10 * 8 * 2 * 2 * 16 * 2 + 2 * 1000 * 2 * 1 * 64 * 2
    line = f"= 2 · (10 · 32 · min(1,000; 8) + 2 · 64 · 1,000) · 2 = **{expected:,} bytes**"
    assert any(line in m.value for m in at.markdown), [m.value for m in at.markdown]
    headline = ["Binary units (KiB = 1,024 B)", "Decimal units (kB = 1,000 B)", "Per position"]
    assert [m.label for m in at.metric][1:] == headline
