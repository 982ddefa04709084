"""Independent reference: the same random weights in Hugging Face's LlamaForCausalLM."""

import pytest
import torch

from core.decode.generate import decode_one_token, prefill
from core.decode.kv_cache import KVCache
from core.model.config import GPTConfig
from tests.conftest import make_model

transformers = pytest.importorskip("transformers")


def _hf_twin(model):
    cfg = model.cfg
    hf_cfg = transformers.LlamaConfig(
        vocab_size=cfg.vocab_size,
        hidden_size=cfg.n_embd,
        intermediate_size=cfg.ffn_hidden,
        num_hidden_layers=cfg.n_layer,
        num_attention_heads=cfg.n_head,
        num_key_value_heads=cfg.n_kv_head,
        max_position_embeddings=cfg.block_size,
        rms_norm_eps=cfg.norm_eps,
        rope_parameters={"rope_type": "default", "rope_theta": cfg.rope_theta},
        tie_word_embeddings=False,
        attn_implementation="eager",
    )
    hf = transformers.LlamaForCausalLM(hf_cfg).eval()
    state = {("lm_head.weight" if k == "lm_head.weight" else f"model.{k}"): v for k, v in model.state_dict().items()}
    missing, unexpected = hf.load_state_dict(state, strict=False)
    assert not unexpected and all("rotary" in m for m in missing)
    return hf


@pytest.mark.parametrize("n_kv_head", [2, 4, 1])
@torch.no_grad()
def test_logits_match_llama_prefill_and_cached_decode(n_kv_head):
    """float32, atol 1e-4: every prefill position and every cached decode step match Llama's."""
    cfg = GPTConfig(vocab_size=64, block_size=32, n_layer=2, n_head=4, n_kv_head=n_kv_head, n_embd=32, ffn_hidden=64)
    ours = make_model(cfg, seed=2)
    hf = _hf_twin(ours)
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
