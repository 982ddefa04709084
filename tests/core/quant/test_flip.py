"""The flip finder: the exact scale at which rounding the logits changes the greedy token."""

import numpy as np
import pytest
import torch

from core.decode import settings as decode_settings
from core.quant.flip import find_flip, flip_scale, flip_threshold, greedy_by_bits, top_two
from core.quant.quantize import greedy_after_quantizing


def brute_force_threshold(x, rounding="half_even"):
    """Reference: every scale where some logit's rounding changes is |x|/(k + ½); between two
    consecutive ones nothing changes, so test one scale in each gap, from below the margin (where
    |round(x/s)·s − x| ≤ s/2 keeps the top token on top) up to past 2·max|x| (all round to 0)."""
    x = np.asarray(x, dtype=float)
    top = int(np.argmax(x))
    margin = x[top] - np.max(np.delete(x, top))
    lo, hi = margin / 2, 2.02 * np.abs(x).max()
    points = [lo, hi]
    for v in np.abs(x[x != 0]):
        k = np.arange(0, int(v / lo) + 2)
        b = v / (k + 0.5)
        points.extend(b[(b > lo) & (b < hi)])
    points = np.unique(points)
    for left, right in zip(points[:-1], points[1:], strict=True):
        if greedy_after_quantizing(x, (left + right) / 2, rounding)[0] != top:
            return left
    return None


@pytest.mark.parametrize("seed", range(40))
def test_threshold_equals_brute_force_on_random_logits(seed):
    """On random logits of either sign, the closed-form threshold is the first scale gap where greedy changes."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 3, rng.integers(2, 14)) * (1 if seed % 3 else -1) + (2 if seed % 5 == 0 else 0)
    expected = brute_force_threshold(x)
    got = flip_threshold(x)
    assert (got is None) == (expected is None)
    if got is not None:
        assert got == pytest.approx(expected, rel=1e-12)


def test_paris_lyon_threshold():
    """[0.6, 0.7]: both share shelf 6 once 0.7/s < 6.5, i.e. above s = 0.7/6.5; just below, Lyon stays."""
    s = flip_scale([0.6, 0.7])
    assert s == pytest.approx(0.7 / 6.5, rel=1e-15)
    assert greedy_after_quantizing([0.6, 0.7], s)[0] == 0
    assert greedy_after_quantizing([0.6, 0.7], 0.7 / 6.5 * (1 - 1e-9))[0] == 1


def test_top_token_with_id_zero_never_changes():
    """Only a lower token id can win the tie, so a top token with id 0 keeps greedy at every scale."""
    assert flip_threshold([3.0, 1.0, 2.9]) is None and flip_scale([3.0, 1.0, 2.9]) is None


def test_top_two_margin():
    """Top two of [1, 5, 3, 5]: token 1 (first of the equal maxima), then 3, margin 0; of [1, 5, 3, 4.5]: 1, 3, 0.5."""
    t = top_two([1.0, 5.0, 3.0, 5.0])
    assert (t.greedy, t.runner_up, t.margin) == (1, 3, 0.0)
    t = top_two([1.0, 5.0, 3.0, 4.5])
    assert (t.greedy, t.runner_up, t.margin) == (1, 3, 0.5)


@pytest.fixture(scope="module")
def shipped_logits():
    from core.model.shipped import load_model, load_shipped_tokenizer
    from core.model.tokenizer import encode

    model, tok = load_model(), load_shipped_tokenizer()
    with torch.no_grad():
        logits, _ = model(torch.tensor([encode(tok, decode_settings.DEFAULT_PROMPT)]))
    return logits[0, -1].double().numpy()


def test_shipped_model_flip_report(shipped_logits):
    """On the shipped model's next-token logits: the threshold is the brute-force one; just above it the
    tokens on the top shelf are exactly those whose rounded logit equals the top's, greedy takes the
    lowest id and its rank is counted from the raw logits; rows above the threshold that keep the top
    token are reported as not monotone."""
    x = shipped_logits
    rows = greedy_by_bits(x)
    flip = find_flip(x, rows)
    expected = brute_force_threshold(x)
    assert flip is not None and flip.threshold == pytest.approx(expected, rel=1e-12)
    s = expected * (1 + 1e-9)
    _, xq = greedy_after_quantizing(x, s)
    assert flip.tied == tuple(np.flatnonzero(xq == xq.max()))
    assert flip.chosen == min(flip.tied) == greedy_after_quantizing(x, s)[0] != int(np.argmax(x))
    assert flip.rank == 1 + sorted(x, reverse=True).index(x[flip.chosen])
    for r in rows:
        assert r.changed == (greedy_after_quantizing(x, r.scale)[0] != int(np.argmax(x)))
    assert flip.not_monotone == tuple(r.bits for r in rows if r.scale > flip.threshold and not r.changed)
