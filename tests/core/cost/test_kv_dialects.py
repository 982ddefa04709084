"""Each kind of field that last priced a cache wrongly with no word (issue 57), counted now and checked against
transformers' config and cache classes where they exist (a tiny model of the family run on CPU, or built on the
meta device by ``core.cost.kv_reference``), else against the paper's or model card's arithmetic."""

import json

import pytest

from core.cost.config_fields import uncounted_fields
from core.cost.kv_hybrid import state_bytes
from core.cost.kv_layers import layers_kv_bytes
from core.cost.kv_reference import compare, reference_cache
from core.cost.shapes import parse_hf_config

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")
TINY = {"vocab_size": 128, "intermediate_size": 64, "torch_dtype": "float32", "pad_token_id": 0}


def _ours(cfg: dict, lengths=(1,)) -> tuple[int, int, int]:
    """(KV bytes per position, KV bytes for ``lengths``, fixed state bytes) as the memory page counts them."""
    s = parse_hf_config(json.dumps(cfg))
    kv = layers_kv_bytes(s.layers(s.n_layer, s.n_kv_head, s.head_dim, s.window), list(lengths), s.bytes_per_value)
    fixed = state_bytes(s.state, s.state_layers(s.n_layer), 1, s.bytes_per_value)
    return int(kv["kv_cache/bytes_per_position"]), kv["total"], fixed


def _cpu_cache_bytes(cfg: dict, positions: int) -> int:
    """Every tensor transformers' real cache holds after a CPU forward pass over ``positions`` tokens (a tiny
    random model), whatever attribute holds it (MiniMax keeps its linear state beside the layers)."""
    torch.manual_seed(0)
    fields = {k: v for k, v in cfg.items() if k not in ("model_type", "torch_dtype")}
    config = transformers.AutoConfig.for_model(cfg["model_type"], **fields)
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    with torch.no_grad():
        cache = model(torch.randint(1, 100, (1, positions)), use_cache=True).past_key_values
    seen, total = set(), 0
    stack = [cache]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, torch.Tensor):
            total += obj.numel() * obj.element_size()
        elif isinstance(obj, list | tuple):
            stack.extend(obj)
        elif hasattr(obj, "__dict__"):
            stack.extend(v for k, v in vars(obj).items() if not k.startswith("_"))
    return total


GEMMA4 = {
    **TINY, "model_type": "gemma4_text", "num_hidden_layers": 12, "hidden_size": 64, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 16, "global_head_dim": 64, "num_global_key_value_heads": 1,
    "attention_k_eq_v": True, "sliding_window": 8, "vocab_size_per_layer_input": 128,
    "hidden_size_per_layer_input": 8,
}  # fmt: skip
MINIMAX = {
    **TINY, "model_type": "minimax", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 16, "num_local_experts": 2, "num_experts_per_tok": 1,
    "attn_type_list": [0, 1, 0, 1],
}  # fmt: skip


def test_gemma4_global_layers_use_their_own_head_size_and_kv_heads():
    """Gemma4TextConfig: layers 5 and 11 (every 6th) are full attention with global_head_dim 64 and, with
    attention_k_eq_v, 1 KV head; the 10 sliding layers keep 2 heads of 16. Per position in float32:
    10 · 2·2·16·4 + 2 · 2·1·64·4 = 2,560 + 1,024 = 3,584 B (before: every layer priced as a local one, 3,072)."""
    per_position, _, fixed = _ours(GEMMA4)
    assert per_position == 10 * 2 * 2 * 16 * 4 + 2 * 2 * 1 * 64 * 4 == 3584
    assert fixed == 0
    # transformers' real cache after 3 positions (no window filled): 3 × the bytes per position
    assert _cpu_cache_bytes(GEMMA4, 3) == 3 * per_position
    # Without global_head_dim the class's default, 512, and without attention_k_eq_v the local KV heads
    plain = {k: v for k, v in GEMMA4.items() if k not in ("global_head_dim", "attention_k_eq_v")}
    assert _ours(plain)[0] == 10 * 256 + 2 * 2 * 2 * 512 * 4 == reference_cache(plain).per_position


def test_glm_multi_query_group_num_is_the_kv_head_count():
    """ChatGLM / GLM-4 (remote code, THUDM/glm-4-9b's config): 40 layers, multi_query_group_num 2, kv_channels
    128, bfloat16: its SelfAttention caches 2 · 2 · 128 · 2 B = 1,024 B per layer and position → 40,960 B
    (read as 32-head MHA before: 655,360 B, 16× high)."""
    cfg = {
        "model_type": "chatglm", "num_layers": 40, "num_attention_heads": 32, "hidden_size": 4096,
        "kv_channels": 128, "multi_query_attention": True, "multi_query_group_num": 2, "seq_length": 131072,
        "torch_dtype": "bfloat16", "ffn_hidden_size": 13696, "add_qkv_bias": True,
    }  # fmt: skip
    shape = parse_hf_config(json.dumps(cfg))
    assert (shape.n_kv_head, shape.attention_kind, shape.context_window) == (2, "GQA", 131072)
    assert _ours(cfg)[0] == 40 * 2 * 2 * 128 * 2 == 40_960
    assert "auto_map" not in cfg and reference_cache.__doc__  # no transformers class: the model's code is the reference


def test_minimax_attn_type_list_prices_linear_layers_as_a_state():
    """MiniMax-Text-01's attn_type_list (1 softmax, 0 lightning): 2 attention layers cache 2·2·16·4 = 256 B per
    position; the 2 lightning layers keep H·d·d = 4·16·16 values each in the model's dtype (4 B) = 2,048 B,
    fixed. transformers' MiniMaxCache after 1 and 3 positions holds exactly that."""
    per_position, _, fixed = _ours(MINIMAX)
    assert (per_position, fixed) == (2 * 2 * 2 * 16 * 4, 2 * 4 * 16 * 16 * 4) == (512, 8192)
    assert _cpu_cache_bytes(MINIMAX, 1) == fixed + per_position
    assert _cpu_cache_bytes(MINIMAX, 3) == fixed + 3 * per_position
    # transformers' own spelling (layer_types) reads the same
    listed = {**MINIMAX, "layer_types": ["linear_attention", "full_attention"] * 2}
    del listed["attn_type_list"]
    assert _ours(listed)[::2] == (per_position, fixed)


def test_hunyuan_cross_layer_attention_halves_the_cache():
    """Hunyuan-Large (arXiv 2411.02265 §2.2, its config.json): 64 layers, 8 KV heads of 128, use_cla with
    cla_share_factor 2: 32 layers keep K and V, 32 · 2 · 8 · 128 · 2 B = 131,072 B per position (262,144
    before, 2× high)."""
    cfg = {
        "model_type": "hunyuan", "num_hidden_layers": 64, "num_attention_heads": 80, "num_key_value_heads": 8,
        "hidden_size": 6400, "head_dim": 128, "use_cla": True, "cla_share_factor": 2, "torch_dtype": "bfloat16",
    }  # fmt: skip
    assert _ours(cfg)[0] == 32 * 2 * 8 * 128 * 2 == 131_072
    shape = parse_hf_config(json.dumps(cfg))
    assert shape.layer_heads[:4] == (8, 0, 8, 0)
    assert _ours({**cfg, "cla_share_factor": 4})[0] == 16 * 2 * 8 * 128 * 2


@pytest.mark.parametrize("cfg", [GEMMA4, MINIMAX], ids=["gemma4", "minimax"])
def test_the_meta_device_reference_agrees_with_a_real_cpu_cache(cfg):
    """core.cost.kv_reference (built on the meta device) against the same family run on CPU: per position and
    fixed bytes equal, and the page's count agrees with both."""
    ref = reference_cache(cfg)
    assert _cpu_cache_bytes(cfg, 1) == ref.per_position + ref.fixed
    assert _cpu_cache_bytes(cfg, 2) == 2 * ref.per_position + ref.fixed
    assert compare(parse_hf_config(json.dumps(cfg)), ref).agrees


def test_a_difference_with_transformers_is_shown_layer_by_layer():
    """A config whose reading differs from transformers' (a field its class drops: Hunyuan's use_cla under
    transformers' hunyuan_v1_dense, which has no CLA) names the layers that differ."""
    cfg = {
        **TINY, "model_type": "hunyuan_v1_dense", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 16, "use_cla": True, "cla_share_factor": 2,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0},
    }  # fmt: skip
    a = compare(parse_hf_config(json.dumps(cfg)), reference_cache(cfg))
    assert not a.agrees
    assert [i for i, _, _ in a.layers] == [1, 3]
    assert all(ours == 0 and theirs == 2 * 2 * 16 * 4 for _, ours, theirs in a.layers)


def test_remote_code_and_unknown_families_are_never_built():
    with pytest.raises(ValueError, match="remote code is never run"):
        reference_cache({**MINIMAX, "auto_map": {"AutoModelForCausalLM": "modeling.Model"}})
    with pytest.raises(ValueError, match="no config class"):
        reference_cache({"model_type": "hunyuan", "num_hidden_layers": 2})
    with pytest.raises(ValueError, match="more than 256 layers"):
        reference_cache({**MINIMAX, "num_hidden_layers": 10_000, "attn_type_list": [1] * 10_000})


def test_fields_not_counted_are_named():
    """A field whose name speaks of attention or what a layer keeps, read by no reader here, is listed; a
    field known to leave the cache alone (dropout, RoPE's theta, experts) or switched off is not."""
    cfg = {
        "model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 64,
        "attention_dropout": 0.0, "rope_theta": 1e6, "num_local_experts": 8, "attention_sink_size": 4,
        "kv_compression_ratio": 4, "linear_attn_chunk": 64, "use_sliding_window": False, "swa_layers": [],
        "kv_cache_offload_layers": 0,
    }  # fmt: skip
    assert uncounted_fields(cfg) == ("attention_sink_size", "kv_compression_ratio", "linear_attn_chunk")
    assert parse_hf_config(json.dumps(cfg)).uncounted == uncounted_fields(cfg)
    # every field of transformers' own Llama, Qwen3 and DeepSeek-V3 configs is understood
    for family in ("llama", "qwen3", "deepseek_v3", "gemma3_text", "qwen3_next", "jamba", "mistral"):
        assert uncounted_fields(transformers.AutoConfig.for_model(family).to_dict()) == (), family


def test_a_config_saved_by_transformers_carries_per_layer_config():
    """Gemma4TextConfig saves the global layers' terms as per_layer_config ({"5": {"head_dim": 64,
    "num_key_value_heads": 1}, …}) and drops global_head_dim: read the same 3,584 B per position in float32, and
    a per_layer_config field that may change the cache but is not counted is named."""
    fields = {k: v for k, v in GEMMA4.items() if k not in ("model_type", "torch_dtype")}
    saved = json.loads(json.dumps(transformers.AutoConfig.for_model("gemma4_text", **fields).to_dict()))
    assert "global_head_dim" not in saved and {int(k) for k in saved["per_layer_config"]} == {5, 11}
    saved["dtype"] = "float32"
    assert _ours(saved)[0] == 3584 == reference_cache(saved).per_position
    next(iter(saved["per_layer_config"].values()))["sliding_window"] = 4
    assert parse_hf_config(json.dumps(saved)).uncounted == ("per_layer_config.sliding_window",)
