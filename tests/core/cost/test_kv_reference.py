"""The page's KV bytes against the cache tensors transformers 5.x really holds, for tiny random models
of each family it builds (not against our own arithmetic)."""

import json

import pytest
import torch

from core.cost.kv_layers import layers_kv_bytes
from core.cost.kv_shape import MODERN_PRESETS
from core.cost.shapes import parse_hf_config, parse_model_card
from core.cost.weight_bytes import card_budget

transformers = pytest.importorskip("transformers")
BASE = {"vocab_size": 64, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 4}
W = 5  # the tiny models' window


def _page_bytes(cfg: dict, lengths, b=4) -> int:
    shape = parse_hf_config(json.dumps({**cfg, "torch_dtype": "float32"}))
    layers = shape.layers(shape.n_layer, shape.n_kv_head, shape.head_dim, shape.window)
    return layers_kv_bytes(layers, lengths, b)["total"]


def _step_bytes(config, T: int) -> tuple[int, int]:
    """Prefill T − 1 random tokens, then one decode step: the bytes of the K/V each layer's attention read
    in that step (what must be held while the T-th position is computed), and the bytes held after it."""
    torch.manual_seed(0)
    config._attn_implementation = "eager"
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    read = []
    ids = torch.randint(0, 64, (1, T))
    with torch.no_grad():
        cache = model(ids[:, :-1], use_cache=True).past_key_values
        for layer in cache.layers:
            original = layer.update

            def update(k, v, *a, _orig=original, **kw):
                out = _orig(k, v, *a, **kw)
                read.append(sum(t.numel() * t.element_size() for t in out))
                return out

            layer.update = update
        model(ids[:, -1:], past_key_values=cache, use_cache=True)
    held = sum(t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values))
    return sum(read), held


FAMILIES = {
    "llama": {**BASE, "model_type": "llama", "num_attention_heads": 4, "num_key_value_heads": 2},
    "mistral": {
        **BASE,
        "model_type": "mistral",
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "sliding_window": W,
    },
    "qwen2": {
        **BASE,
        "model_type": "qwen2",
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "sliding_window": W,
        "use_sliding_window": True,
        "max_window_layers": 2,
    },
    "gemma2": {
        **BASE,
        "model_type": "gemma2",
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 8,
        "sliding_window": W,
    },
    "gemma3_text": {
        **BASE,
        "model_type": "gemma3_text",
        "num_attention_heads": 4,
        "num_key_value_heads": 1,
        "head_dim": 8,
        "sliding_window": W,
        "sliding_window_pattern": 3,
    },
    "deepseek_v3": {
        **BASE,
        "model_type": "deepseek_v3",
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "kv_lora_rank": 16,
        "q_lora_rank": 24,
        "qk_rope_head_dim": 8,
        "qk_nope_head_dim": 8,
        "v_head_dim": 8,
        "moe_intermediate_size": 16,
        "n_routed_experts": 4,
        "num_experts_per_tok": 2,
        "n_group": 1,
        "topk_group": 1,
        "first_k_dense_replace": 1,
    },
}


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("T", [3, W, 12])
def test_page_bytes_equal_the_reference_cache(family, T):
    """Within and past the window: the page's bytes for the config equal the K/V transformers' attention reads
    in the step that computes position T (local layers min(T, W), global T; MLA: latent + RoPE key)."""
    cfg = FAMILIES[family]
    config = transformers.AutoConfig.for_model(**cfg)
    read, held = _step_bytes(config, T)
    assert _page_bytes(json.loads(config.to_json_string()), [T]) == read
    assert _page_bytes(cfg, [T]) == read
    if family in ("llama", "deepseek_v3"):  # no window: what is held afterwards is what was read
        assert held == read


@pytest.mark.parametrize("family", ["mistral", "gemma2", "gemma3_text", "deepseek_v3"])
def test_weights_page_card_plan_equals_the_reference_cache(family):
    """The weights page's card plan ("…, F32, 12": 12 positions, past the tiny window of 5) prices the KV cache
    of the config's shape as transformers' attention holds it: windows and MLA, not the uniform formula."""
    cfg = FAMILIES[family]
    read, _ = _step_bytes(transformers.AutoConfig.for_model(**cfg), 12)
    shape = parse_hf_config(json.dumps({**cfg, "torch_dtype": "float32"}))
    bill = card_budget(parse_model_card("1M, F32, 12"), shape, False, 4, 1, 0, 1)
    assert bill.plan["memory/kv_cache"] == read
    assert f"{read:,} bytes" in bill.kv_formula


def test_falcon_new_decoder_architecture_counts_num_kv_heads():
    """Falcon with new_decoder_architecture (multi_query true as saved): transformers builds num_kv_heads
    distinct K/V heads (its fused QKV weight) and caches each repeated for its query group; the page counts
    the distinct heads, as vLLM and llama.cpp store them."""
    cfg = {
        "model_type": "falcon",
        "vocab_size": 64,
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_kv_heads": 2,
        "new_decoder_architecture": True,
        "multi_query": True,
    }
    config = transformers.AutoConfig.for_model(**cfg)
    read, _ = _step_bytes(config, 6)
    model = transformers.AutoModelForCausalLM.from_config(config)
    attn = model.transformer.h[0].self_attention
    assert attn.num_kv_heads == 2 and attn.query_key_value.out_features == (4 + 2 * 2) * 8
    group = config.num_attention_heads // attn.num_kv_heads
    assert _page_bytes(json.loads(config.to_json_string()), [6]) == read // group


def test_falcon_40b_public_config():
    """tiiuae/falcon-40b's config as FalconConfig.save_pretrained writes it: 8 KV heads, not MQA's 1:
    60 · 2 · 2,048 · 8 · 64 · 2 B = 251,658,240 B."""
    cfg = {
        "num_hidden_layers": 60,
        "num_attention_heads": 128,
        "num_kv_heads": 8,
        "hidden_size": 8192,
        "multi_query": True,
        "new_decoder_architecture": True,
        "torch_dtype": "bfloat16",
    }
    shape = parse_hf_config(json.dumps(cfg))
    assert shape.n_kv_head == 8
    assert layers_kv_bytes(shape.layers(60, 8, 64, None), [2048], 2)["total"] == 251_658_240


def test_modern_presets_known_values():
    """DeepSeek-V3: 61·(512 + 64)·2 = 70,272 B per token; Gemma-2-9B at 8,192: 21 global layers × 8,192 +
    21 local × 4,096 positions · 2 · 8 · 256 · 2 B; q8_0 is 34 B and q4_0 18 B per 32 values."""
    ds = MODERN_PRESETS["DeepSeek-V3 (MLA)"]
    assert layers_kv_bytes(ds.layers(61, 128, 128, None), [1], 2)["total"] == 70_272
    g = MODERN_PRESETS["Gemma-2-9B (every 2nd layer local, W = 4,096)"]
    got = layers_kv_bytes(g.layers(42, 8, 256, 4096), [8192], 2)["total"]
    assert got == (21 * 8192 + 21 * 4096) * 2 * 8 * 256 * 2 == 2_113_929_216
    llama = MODERN_PRESETS["Llama-3-8B (GQA, 8 KV heads)"].layers(32, 8, 128, None)
    assert layers_kv_bytes(llama, [8192], cache_type="q8_0")["total"] == 32 * 8192 * 2 * (1024 // 32) * 34
    assert layers_kv_bytes(llama, [8192], cache_type="q4_0")["total"] == 32 * 8192 * 2 * (1024 // 32) * 18


def test_unmodelled_fields_are_named():
    """Cross-layer KV sharing and linear-attention layer types are named, not priced silently."""
    cfg = {
        "num_hidden_layers": 4,
        "num_attention_heads": 4,
        "hidden_size": 32,
        "num_kv_shared_layers": 2,
        "layer_types": ["linear_attention", "full_attention", "linear_attention", "full_attention"],
    }
    shape = parse_hf_config(json.dumps(cfg))
    text = " ".join(shape.unmodelled)
    assert "num_kv_shared_layers" in text and "linear_attention" in text


def test_a_million_layers_count_like_six():
    """Gemma 2's rule (every 2nd layer global) on 10⁶ layers counts like the same rule on 6 layers scaled by
    10⁶ / 6 … exactly: half the layers hold min(T, W) positions, half hold T. 10⁶ layers, H_kv = 2, d = 4,
    W = 3, one request of T = 10 positions at 2 bytes: 2·2·4·2 = 32 bytes a position a layer, so
    32 · (500,000 · 3 + 500,000 · 10) = 208,000,000 bytes; and every layer of a kind is one object."""
    from core.cost.kv_layers import build_layers, layer_counts

    layers = build_layers(10**6, 2, 4, window=3, rule="every 2")
    counts = layer_counts(layers)
    assert sorted((c.window or 0, n) for c, n in counts.items()) == [(0, 500_000), (3, 500_000)]
    assert len({id(c) for c in layers}) == 2
    assert layers_kv_bytes(layers, [10], 2)["total"] == 32 * (500_000 * 3 + 500_000 * 10) == 208_000_000
