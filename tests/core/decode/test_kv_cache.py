import pytest
import torch

from core.cost.counts import kv_cache_bytes, kv_cache_bytes_for
from core.decode.generate import decode_one_token, prefill
from core.decode.kv_cache import KVCache
from core.model.config import PRESETS, GPTConfig

# Ch. 30 Example 30.3: two layers, two KV heads, four coordinates per head, two bytes each.
CH30_SMALL = GPTConfig(vocab_size=16, block_size=16, n_layer=2, n_head=2, n_kv_head=2, n_embd=8, ffn_hidden=8)


@pytest.mark.parametrize("positions,expected", [(8, 512), (9, 576), (10, 640)])
def test_ch30_example_bytes_formula(positions, expected):
    """Example 30.3: 2·1·2·T·2·4·2 bytes = 512, 576, 640 for T = 8, 9, 10."""
    assert kv_cache_bytes(2, 2, 4, positions, 2)["total"] == expected


@pytest.mark.parametrize("positions,expected", [(8, 512), (9, 576), (10, 640)])
def test_ch30_example_bytes_real_tensors(positions, expected):
    """A float16 cache of Example 30.3's shape holds exactly those bytes in real tensors."""
    assert CH30_SMALL.head_dim == 4
    cache = KVCache(CH30_SMALL, dtype=torch.float16)
    for layer in range(2):
        k = torch.ones(1, 2, positions, 4, dtype=torch.float16)
        cache.update(layer, k, k)
    cache.advance(positions)
    assert cache.nbytes == expected


def test_update_returns_cached_plus_new_and_keeps_old():
    """update() appends at pos and returns all positions; earlier entries are untouched."""
    cfg = PRESETS["tiny"]
    cache = KVCache(cfg)
    a = torch.randn(1, cfg.n_kv_head, 3, cfg.head_dim)
    for layer in range(cfg.n_layer):
        cache.update(layer, a, a)
    cache.advance(3)
    b = torch.randn(1, cfg.n_kv_head, 1, cfg.head_dim)
    k, v = cache.update(0, b, -b)
    assert k.shape == (1, cfg.n_kv_head, 4, cfg.head_dim)
    assert torch.equal(k[:, :, :3], a) and torch.equal(v[:, :, 3:], -b)


def test_overflow_is_refused():
    """Writing past block_size raises a clear ValueError."""
    cfg = PRESETS["tiny"]
    cache = KVCache(cfg)
    big = torch.zeros(1, cfg.n_kv_head, cfg.block_size + 1, cfg.head_dim)
    with pytest.raises(ValueError, match="context window"):
        cache.update(0, big, big)


def test_truncate_and_reset():
    """truncate keeps a prefix; reset empties; bytes follow pos."""
    cfg = PRESETS["tiny"]
    cache = KVCache(cfg)
    cache.advance(5)
    cache.truncate(2)
    assert cache.pos == 2 and cache.nbytes == kv_cache_bytes_for(cfg, 2, 4)
    with pytest.raises(ValueError):
        cache.truncate(3)
    cache.reset()
    assert cache.pos == 0 and cache.nbytes == 0
    # Allocation is fixed: 2 · L · B · H_kv · block_size · d · 4 bytes.
    assert cache.allocated_bytes == 2 * cfg.n_layer * cfg.n_kv_head * cfg.block_size * cfg.head_dim * 4


def test_table_30_1_counts(tiny_model):
    """Table 30.1: after prefill of 8 the cache holds 8; each decode that consumes a token adds 1."""
    cache = KVCache(tiny_model.cfg)
    step = prefill(tiny_model, list(range(1, 9)), cache)
    assert cache.pos == 8
    token1 = int(step.logits.argmax())
    assert cache.pos == 8  # choosing token 1 does not cache it
    step = decode_one_token(tiny_model, token1, cache)
    assert cache.pos == 9
    decode_one_token(tiny_model, int(step.logits.argmax()), cache)
    assert cache.pos == 10


def test_exercise_2_ten_position_prompt(tiny_model):
    """Exercise 2: ten positions after prefill, eleven after consuming the new token."""
    cache = KVCache(tiny_model.cfg)
    step = prefill(tiny_model, [3] * 10, cache)
    assert cache.pos == 10
    decode_one_token(tiny_model, int(step.logits.argmax()), cache)
    assert cache.pos == 11


@pytest.mark.parametrize("dtype,b", [(torch.float32, 4), (torch.float64, 8)])
def test_model_cache_bytes_equal_formula(tiny_model, dtype, b):
    """After a real prefill the cache tensors' bytes equal M = 2·B·L·T·H_kv·d·b."""
    model = tiny_model.to(dtype)
    cfg = model.cfg
    cache = KVCache(cfg, dtype=dtype)
    prefill(model, [1, 2, 3, 4, 5, 6, 7], cache)
    assert cache.nbytes == 2 * 1 * cfg.n_layer * 7 * cfg.n_kv_head * cfg.head_dim * b


def test_a_clone_copies_the_cached_positions_and_is_independent(tiny_model):
    """A clone reads the same keys and values for the cached positions; writing the next position
    into either leaves the other's cached positions alone."""
    cache = KVCache(tiny_model.cfg)
    prefill(tiny_model, [5, 6, 7, 8], cache)
    copy = cache.clone()
    assert copy.pos == 4 and copy.capacity == cache.capacity
    for layer in range(tiny_model.cfg.n_layer):
        assert torch.equal(copy.keys(layer), cache.keys(layer)) and torch.equal(copy.values(layer), cache.values(layer))
    kept = [cache.keys(layer).clone() for layer in range(tiny_model.cfg.n_layer)]
    decode_one_token(tiny_model, 9, copy)
    decode_one_token(tiny_model, 10, copy)
    assert cache.pos == 4 and all(torch.equal(cache.keys(i), k) for i, k in enumerate(kept))
