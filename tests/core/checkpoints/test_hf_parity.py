"""Independent reference: the same random weights in Hugging Face's LlamaForCausalLM."""

import pytest
import torch

from core.decode.generate import decode_one_token, prefill
from core.decode.kv_cache import KVCache
from core.model.config import GPTConfig
from tests.conftest import make_model
from tests.helpers.hf_cache import hf_twin, llama_twin

transformers = pytest.importorskip("transformers")


@pytest.mark.parametrize("n_kv_head", [2, 4, 1])
@torch.no_grad()
def test_logits_match_llama_prefill_and_cached_decode(n_kv_head):
    """float32, atol 1e-4: every prefill position and every cached decode step match Llama's."""
    cfg = GPTConfig(vocab_size=64, block_size=32, n_layer=2, n_head=4, n_kv_head=n_kv_head, n_embd=32, ffn_hidden=64)
    ours = make_model(cfg, seed=2)
    hf = llama_twin(ours)
    prompt = [3, 17, 42, 17, 8, 60]
    out = hf(torch.tensor([prompt]), use_cache=True)
    our_logits, _ = ours(torch.tensor([prompt]))
    assert torch.allclose(out.logits, our_logits, atol=1e-4, rtol=0)

    cache = KVCache(cfg)
    step = prefill(ours, prompt, cache)
    past = out.past_key_values
    for _ in range(10):
        token = int(step.logits.argmax())
        assert token == int(out.logits[0, -1].argmax())
        out = hf(torch.tensor([[token]]), past_key_values=past, use_cache=True)
        past = out.past_key_values
        step = decode_one_token(ours, token, cache)
        assert torch.allclose(step.logits, out.logits[0, -1], atol=1e-4, rtol=0)
    assert cache.pos == len(prompt) + 10


def _qwen3_twin(model):
    """transformers' Qwen3ForCausalLM with our model's weights (its q_norm/k_norm included)."""
    return hf_twin(model, transformers.Qwen3Config, transformers.Qwen3ForCausalLM, head_dim=model.cfg.head_dim)


@torch.no_grad()
def test_logits_match_qwen3_prefill_and_cached_decode():
    """Qwen3 (per-head q/k RMSNorm before RoPE, head_dim 16 ≠ n_embd / n_head = 8), float32 atol 1e-4: every
    prefill position and 10 cached decode steps match transformers' Qwen3ForCausalLM with the same weights."""
    cfg = GPTConfig(vocab_size=64, block_size=32, n_layer=2, n_head=4, n_kv_head=2, n_embd=32, ffn_hidden=64,
                    head_dim=16, qk_norm=True, norm_eps=1e-6)  # fmt: skip
    ours = make_model(cfg, seed=3)
    with torch.no_grad():  # norm weights away from 1, so a norm applied to the wrong heads would show
        for block in ours.layers:
            block.self_attn.q_norm.weight.normal_(1, 0.3)
            block.self_attn.k_norm.weight.normal_(1, 0.3)
    hf = _qwen3_twin(ours)
    prompt = [3, 17, 42, 17, 8, 60]
    out = hf(torch.tensor([prompt]), use_cache=True)
    assert torch.allclose(out.logits, ours(torch.tensor([prompt]))[0], atol=1e-4, rtol=0)
    cache = KVCache(cfg)
    step, past = prefill(ours, prompt, cache), out.past_key_values
    for _ in range(10):
        token = int(step.logits.argmax())
        out = hf(torch.tensor([[token]]), past_key_values=past, use_cache=True)
        past = out.past_key_values
        step = decode_one_token(ours, token, cache)
        assert torch.allclose(step.logits, out.logits[0, -1], atol=1e-4, rtol=0)


# Qwen/Qwen3-0.6B's published config.json (the fields it sets; its head_dim 128 is 2 × hidden_size / heads).
QWEN3_0_6B = {
    "architectures": ["Qwen3ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu", "hidden_size": 1024,
    "initializer_range": 0.02, "intermediate_size": 3072, "max_position_embeddings": 40960, "max_window_layers": 28,
    "model_type": "qwen3", "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 8,
    "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 1000000, "sliding_window": None,
    "tie_word_embeddings": True, "torch_dtype": "bfloat16", "use_cache": True, "use_sliding_window": False,
    "vocab_size": 151936,
}  # fmt: skip


@pytest.mark.parametrize("drop_head_dim", [False, True])
def test_qwen3_published_config_reads_as_transformers_builds_it(drop_head_dim):
    """Qwen3-0.6B's config.json: our config's shape and parameter count equal transformers' Qwen3ForCausalLM built
    from the same dict (596,049,920 parameters, 0.44 B outside the embedding, as its model card says); without a
    head_dim key both take Qwen3Config's default of 128, not hidden_size / heads = 64."""
    from core.checkpoints.families import config_from_hf
    from core.cost.counts import params

    hf_dict = {k: v for k, v in QWEN3_0_6B.items() if not (drop_head_dim and k == "head_dim")}
    cfg, context = config_from_hf(hf_dict)
    with torch.device("meta"):
        hf = transformers.Qwen3ForCausalLM(transformers.Qwen3Config(**hf_dict))
    c = hf.config
    assert (cfg.n_layer, cfg.n_head, cfg.n_kv_head, cfg.head_dim, cfg.n_embd, cfg.ffn_hidden) == (
        c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads, c.head_dim, c.hidden_size,
        c.intermediate_size)  # fmt: skip
    assert cfg.head_dim == 128 and cfg.qk_norm and not cfg.qkv_bias and cfg.tie_embeddings and context == 40960
    assert cfg.rope_theta == c.rope_parameters["rope_theta"] == 1e6 and cfg.norm_eps == c.rms_norm_eps
    assert params(cfg)["total"] == hf.num_parameters() == 596_049_920
