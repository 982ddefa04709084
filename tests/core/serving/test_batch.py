import numpy as np
import pytest

from core.decode.generate import SamplingConfig, generate_cached
from core.serving.batch import Batch

PROMPTS = [[1, 2, 3, 4, 5, 6, 7], [9, 8], [4, 4, 4, 1], [3]]
BUDGETS = [5, 9, 3, 6]


@pytest.mark.parametrize("layout", ["padded", "ragged"])
def test_batch_equals_solo_decoding(tiny_model64, layout):
    """Every request gets exactly its solo logits (float64, 1e-12) and tokens, whatever the layout."""
    batch = Batch(tiny_model64, PROMPTS, BUDGETS, layout)
    batch.run()
    for req, prompt, budget in zip(batch.requests, PROMPTS, BUDGETS, strict=True):
        solo = generate_cached(tiny_model64, prompt, budget, SamplingConfig())
        assert req.tokens == solo.tokens
        assert max(float((a - b).abs().max()) for a, b in zip(req.logits, solo.logits, strict=True)) < 1e-12


def test_ragged_bytes_equal_sum_of_lengths(tiny_model64):
    """Ragged caches hold 2·L·H_kv·d·b·Σ lengths bytes; padding holds B·S_max and wastes the rest."""
    cfg = tiny_model64.cfg
    per_pos = 2 * cfg.n_layer * cfg.n_kv_head * cfg.head_dim * 8
    ragged, padded = Batch(tiny_model64, PROMPTS, BUDGETS, "ragged"), Batch(tiny_model64, PROMPTS, BUDGETS, "padded")
    ragged.run()
    padded.run()
    lengths = [len(p) + b - 1 for p, b in zip(PROMPTS, BUDGETS, strict=True)]  # 11, 10, 6, 6
    assert ragged.held_bytes() == ragged.payload_bytes() == per_pos * sum(lengths)
    assert padded.held_bytes() == per_pos * len(PROMPTS) * max(lengths) > padded.payload_bytes()


def test_finished_requests_leave_the_batch(tiny_model64):
    """Each step runs only the unfinished requests; the shortest budget leaves first."""
    batch = Batch(tiny_model64, PROMPTS, BUDGETS, "ragged")
    batch.prefill()
    active = [batch.step() for _ in range(3)]
    assert active[0] == [0, 1, 2, 3] and 2 not in active[2]
    assert len(batch.requests[2].tokens) == 3


def test_bad_batches_are_refused(tiny_model):
    """Empty prompts, zero budgets, mismatched lists, overflowing the window: ValueError."""
    for prompts, budgets in ([[]], [1]), ([[1]], [0]), ([[1]], [1, 2]), ([[1] * 30], [10]):
        with pytest.raises(ValueError):
            Batch(tiny_model, prompts, budgets)


def test_batch_attention_rows(tiny_model64):
    """A request's prefill attention is (n_layer, n_head, n, n) and each step adds one row."""
    batch = Batch(tiny_model64, PROMPTS, BUDGETS, "padded")
    batch.prefill()
    batch.step()
    first = batch.requests[0]
    assert first.att[0].shape[2:] == (7, 7) and first.att[1].shape[2:] == (1, 8)
    assert np.allclose(first.att[1].sum(-1), 1.0)
