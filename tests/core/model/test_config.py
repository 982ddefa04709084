import pytest

from core.model.config import PRESETS, GPTConfig


def test_head_dim_is_derived():
    """head_dim = n_embd // n_head."""
    assert GPTConfig(n_embd=128, n_head=4).head_dim == 32


@pytest.mark.parametrize("n_kv_head,kind", [(4, "MHA"), (2, "GQA"), (1, "MQA")])
def test_attention_kind(n_kv_head, kind):
    """Equal KV heads is MHA, one is MQA, in between is GQA."""
    assert GPTConfig(n_head=4, n_kv_head=n_kv_head).attention_kind == kind


@pytest.mark.parametrize("kwargs", [{"n_head": 4, "n_kv_head": 3}, {"n_embd": 130, "n_head": 4}, {"n_layer": 0}])
def test_invalid_shapes_raise(kwargs):
    """Heads that do not divide, or a zero size, are refused."""
    with pytest.raises(ValueError):
        GPTConfig(**kwargs)


def test_round_trip_dict():
    """to_dict/from_dict round-trips; unknown keys are named."""
    cfg = PRESETS["tiny"]
    assert GPTConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="bogus"):
        GPTConfig.from_dict({**cfg.to_dict(), "bogus": 1})
