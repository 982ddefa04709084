"""Which fields of a model's files the KV-cache readers understand, so that none is passed over in silence.

A field whose name speaks of the attention layout or of what a layer keeps (``CACHE_WORDS``: attention, kv,
head, layer, window, chunk, share, group, global/local, linear, mamba, ssm, conv, recurrent, state, index,
sink, rope …) is either

- **counted**: a reader here reads it (``COUNTED``: ``core.cost.kv_config``, ``core.cost.kv_hybrid``,
  ``core.cost.kv_dialects``, ``core.cost.shapes``; GGUF: ``core.gguf.reader`` and ``core.cost.gguf_plan``),
- **named**: a reader names it as not modelled and gives no number (``core.cost.kv_config.UNMODELLED``,
  ``core.cost.kv_hybrid.OTHER_HYBRIDS``),
- **no cache effect**: it changes arithmetic, weights or training only (``NO_CACHE_EFFECT``: dropout, biases,
  norms, multipliers, RoPE's frequencies, the feed-forward and its experts, output flags),
- or **not counted**: everything else, listed on the page, and the number that rests on it is not shown as
  sure. A field that is off (false, null, 0, an empty list or text) changes nothing and is not listed.

docs/models.md lists the fields per family and says what "not counted" means.
"""

from __future__ import annotations

import re

from core.cost.kv_config import UNMODELLED
from core.cost.kv_hybrid import DELTANET, JAMBA, OTHER_HYBRIDS

CACHE_WORDS = re.compile(
    r"attention|attn|(?:^|_)kv|head|layer|window|sliding|chunk|shar|(?:^|_)cla(?:_|$)|group|global|local|linear|"
    r"lightning|mamba|ssm|(?:^|_)conv|recurren|state|index|sink|rope"
)
COUNTED = frozenset({
    # core.cost.shapes: the terms of M = 2·B·L·T·H_kv·d·b
    "num_hidden_layers", "n_layer", "num_layers", "num_attention_heads", "n_head", "num_heads", "head_dim",
    "kv_channels", "num_key_value_heads", "num_kv_heads", "n_head_kv", "num_key_value_heads_per_layer",
    # core.cost.kv_config: MLA, windows, per-layer kinds
    "kv_lora_rank", "qk_rope_head_dim", "sliding_window", "sliding_window_pattern", "_sliding_window_pattern",
    "layer_types", "use_sliding_window", "max_window_layers", "no_rope_layers", "no_rope_layer_interval",
    "global_attn_every_n_layers",
    # core.cost.kv_hybrid: Jamba, Qwen3-Next, MiniMax
    "attn_layer_period", "attn_layer_offset", "full_attention_interval", *JAMBA, *DELTANET,
    # core.cost.kv_dialects: Gemma 4, ChatGLM / GLM-4, MiniMax, Hunyuan-Large
    "global_head_dim", "num_global_key_value_heads", "attention_k_eq_v", "multi_query_group_num",
    "multi_query_attention", "attn_type_list", "use_cla", "cla_share_factor", "per_layer_config",
})  # fmt: skip
NAMED = frozenset(UNMODELLED) | frozenset(OTHER_HYBRIDS)
# MLA's other head sizes build the heads' keys and values from the latent: the cache holds the latent only.
MLA_HEADS = frozenset({"qk_nope_head_dim", "v_head_dim", "qk_head_dim", "q_lora_rank"})
NO_CACHE_EFFECT = re.compile(
    r"dropout|pdrop|bias|norm|eps|epsilon|multiplier|scal|softcap|temperature|init|theta|rope_(?:scaling|"
    r"parameters|type|interleave|local_base_freq)|partial_rotary|expert|moe|mlp|ffn|intermediate|"
    r"output_attentions|output_hidden_states|per_layer_input|nextn_predict|topk_group|^n_group$|"
    r"bidirectional|lm_head|act$|_act_|hidden_act|dense_layers|decoder_sparse_step|parallel_attn|kernels$|dt_rank|"
    r"token_index|token_id|alpha_factor|beta_factor|mamba_chunk_size"
)


def is_off(value) -> bool:
    """A field switched off: false, null, 0, or an empty list, object or text."""
    return value is None or value is False or (isinstance(value, int | float) and value == 0) or value in ([], {}, "")


def uncounted_fields(cfg: dict, latent: bool | None = None) -> tuple[str, ...]:
    """The fields of a (language-model) ``config.json`` dict that may change its KV cache and that no reader
    here counts or names, in the config's order (at most 40, each cut to 60 characters). ``latent``: the
    config uses MLA (default: it gives ``kv_lora_rank``)."""
    latent = cfg.get("kv_lora_rank") is not None if latent is None else latent
    out = []
    for key, value in cfg.items():
        name = str(key)
        low = name.lower()
        if not CACHE_WORDS.search(low) or name in COUNTED or name in NAMED or is_off(value):
            continue
        if NO_CACHE_EFFECT.search(low) or (latent and name in MLA_HEADS):
            continue
        out.append(name[:60])
    return tuple(out[:40])


# GGUF: every key under the architecture's own prefix, after "<arch>.".
GGUF_COUNTED = frozenset({
    "block_count", "context_length", "embedding_length", "attention.head_count", "attention.head_count_kv",
    "attention.key_length", "attention.value_length", "attention.sliding_window", "full_attention_interval",
    "ssm.conv_kernel", "ssm.state_size", "ssm.group_count", "ssm.inner_size", "ssm.time_step_rank",
})  # fmt: skip
GGUF_NO_CACHE_EFFECT = re.compile(
    r"^(?:feed_forward_length|vocab_size|rope\.|attention\.layer_norm|attention\.clamp_kqv|attention\.scale|"
    r"expert_|leading_dense_block_count|logit_scale|embedding_scale|residual_scale|final_logit_softcapping|"
    r"attn_logit_softcapping|pooling_type|decoder_start_token_id|use_parallel_residual|tensor_data_layout|"
    r"ssm\.dt_b_c_rms|attention\.temperature|nextn_predict_layers|moe_|interleave_moe_layer_step|"
    r"n_deepstack_layers|swin_norm)"
)


def gguf_uncounted(architecture: str | None, keys) -> tuple[str, ...]:
    """The keys of a GGUF header under ``<architecture>.`` that no reader here counts (``GGUF_COUNTED``) and that
    are not known to leave the cache alone (``GGUF_NO_CACHE_EFFECT``), full names, in file order (at most 40)."""
    if not architecture:
        return ()
    prefix = f"{architecture}."
    out = []
    for key in keys:
        if not key.startswith(prefix):
            continue
        rest = key[len(prefix) :]
        if rest in GGUF_COUNTED or GGUF_NO_CACHE_EFFECT.search(rest):
            continue
        out.append(key[:80])
    return tuple(out[:40])
