"""What transformers' own cache holds for a config: the reference the memory page's bytes are tested against.

A model of the published size is built on PyTorch's ``meta`` device (shapes and dtypes, no memory and no
arithmetic), so a 27B or 80B config runs its real forward code: its ``DynamicCache`` layers (keys/values,
and a hybrid's conv and recurrent states) come out with the shapes and dtypes transformers gives them.
Tiny models run the same code on real tensors (``device="cpu"``) to show the meta run is no special case.
"""

import torch
import transformers


def _state_bytes(cache) -> int:
    """Bytes of every conv and recurrent state a hybrid's cache layers hold."""
    return sum(
        t.numel() * t.element_size()
        for layer in cache.layers
        for name in ("conv_states", "recurrent_states")
        for t in (getattr(layer, name, None) or {}).values()
        if t is not None
    )


def reference_cache(config, T: int, dtype=torch.float32, device="meta", batch: int = 1, build=None) -> dict:
    """Prefill ``batch`` requests of T − 1 positions, then one decode step. Returns ``"read"`` (bytes of the
    keys and values each attention layer read in that step: what must be held while position T is computed),
    ``"held"`` (keys and values held afterwards) and ``"state"`` (conv and recurrent states afterwards).
    ``build(config)``: the model, where the config class alone does not make it (default: the auto class)."""
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    with torch.device(device):
        model = (build or transformers.AutoModelForCausalLM.from_config)(config).to(dtype).eval()
    ids = torch.randint(0, 8, (batch, T), device=device) if device != "meta" else torch.zeros((batch, T), device=device)
    ids = ids.long()
    read = []
    with torch.no_grad():
        cache = model(ids[:, :-1], use_cache=True, logits_to_keep=1).past_key_values
        for layer in cache.layers:
            if not hasattr(layer, "update"):
                continue
            original = layer.update

            def update(k, v, *a, _orig=original, **kw):
                out = _orig(k, v, *a, **kw)
                read.append(sum(t.numel() * t.element_size() for t in out))
                return out

            layer.update = update
        model(ids[:, -1:], past_key_values=cache, use_cache=True, logits_to_keep=1)
    held = sum(
        t.numel() * t.element_size()
        for layer in cache.layers
        for t in (getattr(layer, "keys", None), getattr(layer, "values", None))
        if isinstance(t, torch.Tensor)
    )
    return {"read": sum(read), "held": held, "state": _state_bytes(cache)}


def llama_twin(model):
    """transformers' LlamaForCausalLM (eager attention) holding ``model``'s weights: an independent reference for
    its logits and its cache's keys and values, in ``model``'s dtype."""
    return hf_twin(model, transformers.LlamaConfig, transformers.LlamaForCausalLM)


def hf_twin(model, config_class, model_class, **fields):
    """transformers' ``model_class`` (eager attention, a config of ``config_class`` built here from ``model``'s
    config plus ``fields``) holding ``model``'s weights, in ``model``'s dtype (float64 stays float64)."""
    cfg = model.cfg
    hf_cfg = config_class(
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
        **fields,
    )
    hf = model_class(hf_cfg).to(model.dtype).eval()
    state = {("lm_head.weight" if k == "lm_head.weight" else f"model.{k}"): v for k, v in model.state_dict().items()}
    missing, unexpected = hf.load_state_dict(state, strict=False)
    assert not unexpected and all("rotary" in m for m in missing)
    return hf
