"""Hybrid models read from their published config.json (Jamba-v0.1, Qwen3-Next-80B-A3B; fixtures in configs/):
the attention layers counted as transformers' config classes place them, and the KV cache and the other layers'
fixed state equal the cache tensors transformers' own model holds, for the published sizes (built on the meta
device) and for tiny models computing on real tensors."""

import json
from pathlib import Path

import pytest
import torch

from core.cost.kv_hybrid import crossing, growth, state_bytes
from core.cost.kv_layers import layers_kv_bytes
from core.cost.kv_shape import HYBRID_PRESETS
from core.cost.shapes import parse_hf_config

transformers = pytest.importorskip("transformers")
from tests.helpers.hf_cache import reference_cache  # noqa: E402  (needs transformers)

CONFIGS = Path(__file__).parent / "configs"
PUBLISHED = {"jamba": "jamba_v0_1.json", "qwen3_next": "qwen3_next_80b_a3b_instruct.json"}
BASE = {"vocab_size": 64, "hidden_size": 32, "intermediate_size": 64, "num_attention_heads": 4}
TINY = {
    "jamba": {**BASE, "model_type": "jamba", "num_hidden_layers": 5, "num_key_value_heads": 2,
              "attn_layer_period": 3, "attn_layer_offset": 1, "num_experts": 2, "mamba_d_state": 8,
              "mamba_d_conv": 3, "mamba_expand": 2},
    "qwen3_next": {**BASE, "model_type": "qwen3_next", "num_hidden_layers": 5, "num_key_value_heads": 2,
                   "head_dim": 8, "full_attention_interval": 2, "linear_conv_kernel_dim": 3,
                   "linear_key_head_dim": 8, "linear_value_head_dim": 4, "linear_num_key_heads": 2,
                   "linear_num_value_heads": 4, "moe_intermediate_size": 16, "shared_expert_intermediate_size": 16,
                   "num_experts": 2, "num_experts_per_tok": 1},
}  # fmt: skip


def published(family: str) -> dict:
    return json.loads((CONFIGS / PUBLISHED[family]).read_text())


def _page(cfg: dict, lengths, dtype: str | None = None) -> tuple[int, int, object]:
    """(KV bytes, state bytes, shape) the memory page gives ``cfg`` at ``lengths``, b from the config."""
    shape = parse_hf_config(json.dumps({**cfg, **({"torch_dtype": dtype} if dtype else {})}))
    assert not shape.unmodelled, shape.unmodelled
    layers = shape.layers(shape.n_layer, shape.n_kv_head, shape.head_dim, shape.window)
    kv = layers_kv_bytes(layers, lengths, shape.bytes_per_value)["total"]
    return kv, state_bytes(shape.state, shape.state_layers(shape.n_layer), len(lengths), shape.bytes_per_value), shape


@pytest.mark.parametrize("family", PUBLISHED)
def test_published_hybrid_attention_layers_are_transformers(family):
    """Jamba-v0.1 (attn_layer_period 8, offset 4) and Qwen3-Next (full_attention_interval 4, no layer_types):
    the layers that keep a KV cache are those transformers' config class marks full_attention (4 of 32; 12 of
    48), where the page counted all 32 and all 48."""
    cfg = published(family)
    reference = transformers.AutoConfig.for_model(**cfg).layer_types
    shape = parse_hf_config(json.dumps(cfg))
    assert shape.state is not None
    attends = [i for i, t in enumerate(reference) if t == "full_attention"]
    assert len(attends) == {"jamba": 4, "qwen3_next": 12}[family]
    assert shape.layer_words(shape.n_layer).startswith(f"attention on {len(attends)} of {len(reference)} layers")
    assert shape.state_layers(shape.n_layer) == len(reference) - len(attends)
    kv, _, _ = _page(cfg, [1])
    heads, d = cfg["num_key_value_heads"], cfg.get("head_dim", cfg["hidden_size"] // cfg["num_attention_heads"])
    assert kv == len(attends) * 2 * heads * d * 2 == {"jamba": 16_384, "qwen3_next": 24_576}[family]


@pytest.mark.parametrize("family", PUBLISHED)
def test_published_hybrid_bytes_equal_transformers_cache(family):
    """The published config's model built by transformers (meta device, bfloat16), 5 positions: its attention
    layers' keys and values and its Mamba / Gated DeltaNet layers' conv and recurrent states equal the page's
    M and S (Jamba: 81,920 B and 16,515,072 B; Qwen3-Next: 122,880 B and 77,856,768 B)."""
    cfg = published(family)
    ref = reference_cache(transformers.AutoConfig.for_model(**cfg), 5, torch.bfloat16)
    kv, state, _ = _page(cfg, [5])
    assert (kv, state) == (ref["read"], ref["state"])
    assert (kv, state) == {"jamba": (81_920, 16_515_072), "qwen3_next": (122_880, 77_856_768)}[family]


def test_qwen3_next_with_transformers_layer_types_reads_the_same():
    """Qwen3-Next as transformers writes it back (layer_types listed, 36 linear_attention): the same bytes as
    from full_attention_interval, where the page refused it as "not modelled"."""
    cfg = published("qwen3_next")
    written = transformers.Qwen3NextConfig(**cfg).to_dict()
    assert written["layer_types"].count("linear_attention") == 36
    assert _page(written, [7])[:2] == _page(cfg, [7])[:2]


@pytest.mark.parametrize("family", TINY)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_tiny_hybrid_real_tensors(family, dtype):
    """Tiny models computing on real tensors, 2 requests at T = 3 and T = 9: the KV bytes read and the states
    held equal the page's; the state is the same at both T (conv in the model's dtype, recurrent in float32)."""
    config = lambda: transformers.AutoConfig.for_model(**TINY[family])  # noqa: E731
    name = {torch.float32: "float32", torch.bfloat16: "bfloat16"}[dtype]
    states = set()
    for T in (3, 9):
        ref = reference_cache(config(), T, dtype, device="cpu", batch=2)
        kv, state, _ = _page(TINY[family], [T, T], name)
        assert (kv, state) == (ref["read"], ref["state"])
        states.add(state)
    assert len(states) == 1


def test_jamba_fields_left_out_take_jambaconfigs_defaults():
    """A Jamba config without attn_layer_period/offset or mamba_* fields: JambaConfig's defaults (8, 4; expand 2,
    d_conv 4, d_state 16), said in the note; an offset not below the period is refused as JambaConfig refuses it."""
    cfg = {k: v for k, v in published("jamba").items() if not k.startswith(("attn_layer", "mamba_"))}
    reference = transformers.JambaConfig(**cfg)
    kv, state, shape = _page(cfg, [5])
    assert (kv, state) == _page(published("jamba"), [5])[:2]
    assert shape.state_layers(32) == reference.layer_types.count("linear_attention")
    assert "attn_layer_period not given: JambaConfig's default 8" in shape.note
    with pytest.raises(Exception, match="must be smaller than attention layer period"):
        transformers.JambaConfig(**{**cfg, "attn_layer_period": 4, "attn_layer_offset": 4})
    with pytest.raises(ValueError, match='"attn_layer_offset" 4 must be smaller than "attn_layer_period" 4'):
        parse_hf_config(json.dumps({**cfg, "attn_layer_period": 4, "attn_layer_offset": 4}))


@pytest.mark.parametrize(
    "model_type,field",
    [
        ("bamba", "attn_layer_indices"),
        ("granitemoehybrid", "layer_types linear_attention"),
        ("nemotron_h", "layers_block_type"),
        ("lfm2", "full_attn_idxs"),
    ],
)
def test_other_hybrids_are_named_not_priced(model_type, field):
    """Hybrids whose state is not sized here (their config as transformers' class writes it) get a sentence
    naming the field, never a number."""
    cfg = transformers.AutoConfig.for_model(model_type).to_dict()
    if model_type == "bamba":
        cfg["attn_layer_indices"] = [1, 3]
    if model_type == "nemotron_h":  # its class derives the count from the pattern; published configs give it
        cfg["num_hidden_layers"] = len(cfg["layers_block_type"])
    shape = parse_hf_config(json.dumps(cfg))
    assert any(u.startswith(field) for u in shape.unmodelled), shape.unmodelled


def test_the_cache_passes_the_state_where_the_reference_says():
    """Jamba-v0.1, one request: its 28 Mamba layers' state (16,515,072 B) equals the KV cache of its 4 attention
    layers at T = 16,515,072 / 16,384 = 1,008 (both from transformers' cache above); the figure's points draw
    the KV line to T and the flat state."""
    shape = HYBRID_PRESETS["Jamba-v0.1 (4 attention + 28 Mamba layers)"]
    layers = shape.layers(32, 8, 128, None)
    per_request = state_bytes(shape.state, shape.state_layers(32), 1, 2)
    assert per_request == 16_515_072 and crossing(layers, per_request, 2) == 16_515_072 // 16_384 == 1_008
    series = growth(layers, per_request, 4096, 2)
    assert series["T"] == [0, 1_008, 4_096] and series["kv"] == [0, 16_515_072, 4_096 * 16_384]
    assert series["state"] == [16_515_072] * 3
