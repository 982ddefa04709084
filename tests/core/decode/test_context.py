import numpy as np
import pytest
import torch

from core.decode.context import band_matrix, run_policy
from core.decode.generate import SamplingConfig, full_forward, generate_cached
from core.decode.kv_cache import KVCache
from tests.conftest import make_model


def test_sliding_window_keeps_the_cache_at_the_window(tiny_model64):
    """With a window of 8 the cache never holds more than 8 positions, and its bytes stay flat."""
    run = run_policy(tiny_model64, [1, 2, 3, 4, 5], 20, 8, "sliding window")
    assert len(run.tokens) == 20 and max(run.cache_positions) == 8
    assert run.cache_positions[-5:] == [8] * 5 and len(set(run.cache_bytes[-5:])) == 1


def test_sliding_equals_normal_decoding_until_the_window_fills(tiny_model64):
    """Before the first eviction the sliding run is plain cached greedy decoding."""
    run = run_policy(tiny_model64, [1, 2, 3, 4, 5], 4, 8, "sliding window")
    assert run.tokens == generate_cached(tiny_model64, [1, 2, 3, 4, 5], 4, SamplingConfig()).tokens


def _slid_vs_fresh(model):
    from core.decode.generate import decode_one_token

    cache = KVCache(model.cfg, dtype=torch.float64)
    seq = [3, 1, 4, 1, 5, 9, 2, 6]
    model(torch.tensor([seq[:6]]), cache)
    cache.evict(2)
    slid = decode_one_token(model, seq[6], cache).logits
    assert cache.offset == 2 and cache.pos == 5
    return float((slid - full_forward(model, seq[2:7]).logits).abs().max())


def test_after_eviction_one_layer_equals_a_fresh_pass_over_the_window():
    """One layer: its keys depend only on token and position, and RoPE scores only on distances,
    so a slid cache equals re-running the window's tokens from position 0 (1e-9)."""
    from core.model.config import GPTConfig

    cfg = GPTConfig(vocab_size=16, block_size=16, n_layer=1, n_head=2, n_kv_head=1, n_embd=8, ffn_hidden=16)
    assert _slid_vs_fresh(make_model(cfg, seed=3, dtype=torch.float64)) < 1e-9


def test_after_eviction_deeper_layers_remember_the_evicted(tiny_model64):
    """Two layers: cached states of later layers were computed while the evicted tokens were
    visible, so a sliding window is not the same as a fresh pass over the window."""
    assert _slid_vs_fresh(tiny_model64) > 1e-3


def test_stop_and_truncate():
    """Stop halts at the window; truncation drops the oldest prompt tokens so everything fits."""
    model = make_model()
    stop = run_policy(model, list(range(1, 7)), 10, 8, "stop")
    assert max(stop.cache_positions) == 8 and len(stop.tokens) == 3 and "stopped" in stop.note
    trunc = run_policy(model, list(range(1, 20)), 5, 8, "truncate the prompt")
    # 4 prompt positions + 4 consumed outputs = 8; the 5th output is chosen, never consumed.
    assert trunc.prompt_used == list(range(16, 20)) and len(trunc.tokens) == 5 and "dropped the first 15" in trunc.note
    with pytest.raises(ValueError, match="window holds"):
        run_policy(model, list(range(1, 20)), 5, 8, "stop")


def test_band_matrix_rows_sum_to_one_and_evicted_cells_blank(tiny_model64):
    """Each query row's visible shares sum to 1; keys evicted before it are NaN."""
    run = run_policy(tiny_model64, [1, 2, 3], 10, 4, "sliding window")
    m = band_matrix(run, 0, None)
    assert m.shape == (3 + 9, 12)
    assert np.allclose(np.nansum(m, axis=1), 1.0)
    assert np.isnan(m[-1, :8]).all() and not np.isnan(m[-1, 8:]).any()


def test_stops_after_the_end_token(tiny_model64):
    """With an end token given, the run ends right after its first occurrence, token for token as plain greedy."""
    from core.decode.generate import SamplingConfig, generate_cached

    plain = generate_cached(tiny_model64, [1, 2, 3], 12, SamplingConfig()).tokens
    end = plain[4]
    run = run_policy(tiny_model64, [1, 2, 3], 12, 32, "sliding window", end_id=end)
    assert run.tokens == plain[: plain.index(end) + 1] and "end-of-text" in run.note
    assert run.end_at(end) == plain.index(end) and len(run.consumed) == 3 + len(run.tokens) - 1
