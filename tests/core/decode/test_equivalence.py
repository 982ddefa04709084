"""The equivalence badge: a limit that fits the precision, and a bug that it catches."""

import torch

from core.decode import session
from core.decode.equivalence import FLOAT64_LIMIT, PER_LAYER, equivalence
from core.decode.generate import SamplingConfig, decode_one_token, full_forward, prefill
from core.decode.kv_cache import KVCache

EPS32 = torch.finfo(torch.float32).eps


def test_float32_limit_scales_with_logits_and_depth():
    """float32: 8 · n_layer · eps · max|logit| (at least 1); float64: 1e-9."""
    e = equivalence(1e-5, 20.0, torch.float32, 4)
    assert e.limit == PER_LAYER * 4 * EPS32 * 20.0 and e.equal
    assert equivalence(1e-5, 0.5, torch.float32, 4).limit == PER_LAYER * 4 * EPS32
    assert equivalence(1e-10, 50.0, torch.float64, 4).limit == FLOAT64_LIMIT


def test_the_issues_failing_cases_now_read_equal():
    """1.7e-5 and 1.1e-5 at |logit| ≈ 15–20 were called 'differs' by a fixed 1e-5; they are rounding."""
    for diff, max_logit in ((1.7e-5, 20.0), (1.1e-5, 15.0)):
        e = equivalence(diff, max_logit, torch.float32, 4)
        assert e.equal and e.text.startswith("equal within float32 rounding")


def test_real_steps_are_equal_and_a_dropped_position_differs(tiny_model):
    """Cached steps of a real model pass; dropping one cached position (a real bug) reads 'differs'."""
    sess = session.start(tiny_model, [3, 1, 4, 1, 5, 9, 2, 6], SamplingConfig())
    for _ in range(6):
        session.step(tiny_model, sess)
        e = equivalence(sess.max_diff[-1], sess.max_logit[-1], torch.float32, tiny_model.cfg.n_layer)
        assert e.equal, e.text
    ids = [3, 1, 4, 1, 5, 9, 2, 6]
    cache = KVCache(tiny_model.cfg)
    prefill(tiny_model, ids, cache)
    cache.truncate(len(ids) - 1)  # the bug: one cached position lost
    broken = decode_one_token(tiny_model, 7, cache).logits
    right = full_forward(tiny_model, ids + [7]).logits
    diff, top = float((broken - right).abs().max()), float(right.abs().max())
    e = equivalence(diff, top, torch.float32, tiny_model.cfg.n_layer)
    assert not e.equal and e.text.startswith("differs")
