"""config.json fields that change which layers slide or how many KV heads a layer has, read as transformers reads
them: the windows of every layer equal the cache layers transformers' ``DynamicCache`` builds from the same config
(its config class's ``layer_types``, defaults included), and the bytes of the published configs in configs/
(gemma-3-27b-it, a DeciLM-style per-layer list, Qwen2 with max_window_layers 0) equal the keys and values
transformers' own model reads, built at the published size on the meta device."""

import copy
import json
from pathlib import Path

import pytest
import torch

from core.cost.kv_layers import layers_kv_bytes
from core.cost.shapes import parse_hf_config

transformers = pytest.importorskip("transformers")
from transformers.models.llama.modeling_llama import LlamaAttention  # noqa: E402

from tests.helpers.hf_cache import reference_cache  # noqa: E402

CONFIGS = Path(__file__).parent / "configs"
W = 5
BASE = {"num_hidden_layers": 13, "num_attention_heads": 4, "num_key_value_heads": 2, "hidden_size": 32}


def _fixture(name: str) -> dict:
    return json.loads((CONFIGS / name).read_text())


def _page_layers(cfg: dict):
    shape = parse_hf_config(json.dumps(cfg))
    assert not shape.unmodelled, shape.unmodelled
    return shape, shape.layers(shape.n_layer, shape.n_kv_head, shape.head_dim, shape.window)


def _reference_windows(cfg: dict) -> list:
    """Each layer's window in the cache transformers builds for ``cfg`` (None: the layer keeps every position)."""
    cache = transformers.DynamicCache(config=transformers.AutoConfig.for_model(**cfg))
    return [getattr(layer, "sliding_window", None) for layer in cache.layers]


WINDOW_CASES = {
    "gemma2, no layer_types": {"model_type": "gemma2", "head_dim": 8},
    "gemma3_text, no pattern": {"model_type": "gemma3_text", "head_dim": 8},
    "gemma3_text, pattern 3": {"model_type": "gemma3_text", "head_dim": 8, "sliding_window_pattern": 3},
    "gemma3_text, pattern 1": {"model_type": "gemma3_text", "head_dim": 8, "sliding_window_pattern": 1},
    "cohere2, no pattern": {"model_type": "cohere2"},
    "cohere2, pattern 3": {"model_type": "cohere2", "sliding_window_pattern": 3},
    "exaone4, no pattern": {"model_type": "exaone4"},
    "olmo3": {"model_type": "olmo3"},
    "vaultgemma": {"model_type": "vaultgemma", "head_dim": 8},
    "gpt_oss": {"model_type": "gpt_oss", "head_dim": 8},
    "afmoe, every 3rd": {"model_type": "afmoe", "global_attn_every_n_layers": 3},
    "qwen2, switch off by default": {"model_type": "qwen2"},
    "qwen2, max_window_layers 0": {"model_type": "qwen2", "use_sliding_window": True, "max_window_layers": 0},
    "qwen2, max_window_layers 5": {"model_type": "qwen2", "use_sliding_window": True, "max_window_layers": 5},
    "qwen2, default max_window_layers 28": {"model_type": "qwen2", "use_sliding_window": True, "num_hidden_layers": 30},
    "qwen2_moe, max_window_layers 7": {"model_type": "qwen2_moe", "use_sliding_window": True, "max_window_layers": 7},
    "qwen2_vl_text, max_window_layers 5": {
        "model_type": "qwen2_vl_text",
        "use_sliding_window": True,
        "max_window_layers": 5,
    },
    "qwen2_5_vl_text, switched off": {"model_type": "qwen2_5_vl_text"},
    "qwen3_moe, switched on": {"model_type": "qwen3_moe", "use_sliding_window": True, "max_window_layers": 5},
    "qwen3_moe, switched off": {"model_type": "qwen3_moe"},
    "smollm3, switched on": {"model_type": "smollm3", "use_sliding_window": True},
    "smollm3, its NoPE layers listed": {
        "model_type": "smollm3",
        "use_sliding_window": True,
        "no_rope_layers": [1, 0] * 6 + [1],
    },
    "smollm3, switched off": {"model_type": "smollm3"},
    "mistral": {"model_type": "mistral"},
    "starcoder2": {"model_type": "starcoder2"},
}


@pytest.mark.parametrize("case", WINDOW_CASES)
def test_each_layers_window_is_the_one_transformers_builds(case):
    """A config giving only sliding_window (and its family's switches): every layer's window is the one
    transformers' DynamicCache gives that layer — each family's default pattern where the config lists none
    (Gemma 3: every 6th layer global, not every layer local; Qwen2: no window unless switched on)."""
    cfg = {**BASE, "sliding_window": W, **WINDOW_CASES[case]}
    _, layers = _page_layers(cfg)
    assert [x.window for x in layers] == _reference_windows(cfg)


def test_exaone4_letter_pattern_is_its_documented_number():
    """EXAONE 4's sliding_window_pattern "LLLG" is documented by Exaone4Config as the same as 4 (its class cannot
    build the letters itself): the page reads both to the windows transformers builds for 4."""
    cfg = {**BASE, "model_type": "exaone4", "sliding_window": W}
    _, letters = _page_layers({**cfg, "sliding_window_pattern": "LLLG"})
    assert [x.window for x in letters] == _reference_windows({**cfg, "sliding_window_pattern": 4})


def test_gemma_3_27b_published_text_config_at_32k():
    """google/gemma-3-27b-it (text_config: 62 layers, sliding_window 1024, no pattern, no layer_types) at
    32,768 positions: transformers' model of that size reads 3,120,562,176 bytes of keys and values (10 global
    layers at T, 52 local at W), where every layer local gave 520,093,696; the note says which layers slide."""
    cfg = _fixture("gemma_3_27b_it.json")
    text = transformers.Gemma3Config(**cfg).text_config
    assert (text.layer_types.count("full_attention"), text.layer_types.count("sliding_attention")) == (10, 52)
    ref = reference_cache(transformers.AutoConfig.for_model(**cfg), 32_768, torch.bfloat16)
    shape, layers = _page_layers(cfg)
    assert layers_kv_bytes(layers, [32_768], shape.bytes_per_value)["total"] == ref["read"] == 3_120_562_176
    assert "every 6th layer global" in shape.terms and "Gemma3TextConfig's default" in shape.note


def _decilm(config):
    """DeciLM: Llama whose layer i has num_key_value_heads_per_layer[i] KV heads (its remote code's attention)."""
    model = transformers.LlamaForCausalLM(config)
    for i, layer in enumerate(model.model.layers):
        own = copy.deepcopy(config)
        own.num_key_value_heads = config.num_key_value_heads_per_layer[i]
        layer.self_attn = LlamaAttention(own, i)
    return model


def test_decilm_style_per_layer_kv_heads():
    """num_key_value_heads_per_layer (DeciLM): the layers' own counts, Σ = 85 heads of 32 layers; a model built
    with those per-layer heads (published size, meta device) reads the page's bytes at 9 positions, where the
    page read the config as 32-head MHA (4,194,304 B)."""
    cfg = _fixture("decilm_style_7b.json")
    shape, layers = _page_layers(cfg)
    heads = cfg["num_key_value_heads_per_layer"]
    assert shape.layer_heads == tuple(heads) and "num_key_value_heads_per_layer" in shape.note
    config = transformers.LlamaConfig(**{k: v for k, v in cfg.items() if k != "model_type"})
    config.num_key_value_heads = max(heads)
    ref = reference_cache(config, 9, torch.bfloat16, build=_decilm)
    assert layers_kv_bytes(layers, [9], 2)["total"] == ref["read"] == 9 * sum(heads) * 2 * 128 * 2
    assert ref["read"] != 9 * 32 * 32 * 2 * 128 * 2


def test_per_layer_kv_heads_zero_means_no_cache_and_bad_lists_are_named():
    """A 0 in the list is a layer without a KV cache (as the GGUF reader counts it); a list of the wrong length,
    or with a non-count, is refused naming the field."""
    cfg = {**BASE, "num_hidden_layers": 4, "num_key_value_heads_per_layer": [4, 4, 2, 0]}
    _, layers = _page_layers(cfg)
    assert layers_kv_bytes(layers, [3], 2)["total"] == 3 * (4 + 4 + 2) * 2 * 8 * 2
    for bad, said in (([4, 4, 2], "lists 3 KV-head counts for 4 layers"), ([4, 4, 2, "1"], "whole numbers from 0")):
        with pytest.raises(ValueError, match=said):
            parse_hf_config(json.dumps({**cfg, "num_key_value_heads_per_layer": bad}))


def test_qwen2_window_on_every_layer():
    """Qwen2-7B's shape with use_sliding_window true and max_window_layers 0 (Qwen2Config: every layer
    sliding_attention) at 5,000 positions: 28 layers × 4,096 positions, equal to what transformers' model of that
    size reads; the note says the window is on every layer."""
    cfg = _fixture("qwen2_7b_window_every_layer.json")
    assert set(transformers.Qwen2Config(**cfg).layer_types) == {"sliding_attention"}
    ref = reference_cache(transformers.AutoConfig.for_model(**cfg), 5_000, torch.bfloat16)
    shape, layers = _page_layers(cfg)
    assert layers_kv_bytes(layers, [5_000], 2)["total"] == ref["read"] == 28 * 4_096 * 2 * 4 * 128 * 2
    assert "max_window_layers 0: the window on every layer" in shape.note and "every layer local" in shape.terms


def test_layer_types_of_the_wrong_length_are_refused():
    """layer_types listing another number of layers than num_hidden_layers is refused naming both."""
    cfg = {**BASE, "sliding_window": W, "layer_types": ["sliding_attention", "full_attention"]}
    with pytest.raises(ValueError, match='"layer_types" lists 2 layers; num_hidden_layers is 13'):
        parse_hf_config(json.dumps(cfg))


HOSTILE = [0, -1, 1.5, "4", None, True, [], {}, [1], 10**7, 10**400, "LLLG", [[1]], [None] * 32]
FIELDS = ["attn_layer_period", "attn_layer_offset", "mamba_d_state", "layer_types", "sliding_window_pattern",
          "num_key_value_heads_per_layer", "max_window_layers", "full_attention_interval",
          "global_attn_every_n_layers"]  # fmt: skip


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("model_type", ["jamba", "qwen3_next", "gemma3_text", "qwen2", "afmoe"])
def test_hostile_values_get_a_sentence_or_a_number(field, model_type):
    """Any JSON value in a field this reader uses gives a shape or a ValueError (a sentence), nothing else."""
    cfg = {**json.loads((CONFIGS / "jamba_v0_1.json").read_text()), "model_type": model_type, "sliding_window": 8}
    cfg["use_sliding_window"] = True
    for value in HOSTILE:
        try:
            shape = parse_hf_config(json.dumps({**cfg, field: value}))
            layers = shape.layers(shape.n_layer, shape.n_kv_head, shape.head_dim, shape.window)
            assert layers_kv_bytes(layers, [100], 2)["total"] >= 0 and shape.terms
        except ValueError:
            pass


def _families_with_a_window() -> list[str]:
    """Every model_type of the installed transformers whose config class has a sliding_window field."""
    out = []
    for model_type, cls in transformers.CONFIG_MAPPING.items():
        try:
            fields = getattr(cls, "__dataclass_fields__", {})
            if "sliding_window" in fields or hasattr(cls(), "sliding_window"):
                out.append(model_type)
        except Exception:  # a class that cannot be built bare (a composite config) is tried below as is
            continue
    return sorted(out)


def test_no_family_with_a_window_is_priced_silently_wrong():
    """For every family of the installed transformers with a sliding_window (a decoder of 13 layers, W = 5, no
    layer_types): the page's windows are those of the cache transformers builds, or the config gets a sentence
    naming sliding_window / layer_types instead of a number; never another pattern."""
    checked, said = [], []
    for model_type in _families_with_a_window():
        cfg = {**BASE, "model_type": model_type, "sliding_window": W, "head_dim": 8}
        try:
            layers = transformers.DynamicCache(config=transformers.AutoConfig.for_model(**cfg)).layers
        except Exception:  # transformers refuses this bare config itself
            continue
        if len(layers) != cfg["num_hidden_layers"]:  # an encoder-decoder or multimodal wrapper: not this config
            continue
        try:
            shape = parse_hf_config(json.dumps(cfg))
        except ValueError:
            said.append(model_type)
            continue
        if shape.unmodelled:
            said.append(model_type)
            continue
        page = [x.window for x in shape.layers(shape.n_layer, shape.n_kv_head, shape.head_dim, shape.window)]
        assert page == [getattr(x, "sliding_window", None) for x in layers], model_type
        checked.append(model_type)
    assert {"gemma2", "gemma3_text", "mistral", "qwen2", "cohere2"} <= set(checked) and len(checked) > 25, checked
