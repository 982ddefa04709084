import numpy as np

from core.worked import DEFAULTS, worked_example


def test_on_scores_shares_and_mix():
    """Ch. 19: scores (1, 3, 1, 2); shares 0.0826, 0.6103, 0.0826, 0.2245; mix [1.913, 1.000]."""
    w = worked_example(DEFAULTS["q"], DEFAULTS["k"], DEFAULTS["v"])
    assert w.scores[-1].tolist() == [1, 3, 1, 2]
    e = np.exp([1, 3, 1, 2])
    assert np.allclose(w.shares[-1], e / e.sum())
    assert np.round(w.shares[-1], 4).tolist() == [0.0826, 0.6103, 0.0826, 0.2245]
    assert np.round(w.outputs[-1], 3).tolist() == [1.913, 1.0]


def test_rounding_artifact():
    """Rounded to two decimals the shares sum to 0.99, and the mix from them is [1.91, 0.99]."""
    w = worked_example(DEFAULTS["q"], DEFAULTS["k"], DEFAULTS["v"])
    assert w.last_rounded_shares.tolist() == [0.08, 0.61, 0.08, 0.22]
    assert round(w.last_rounded_shares.sum(), 10) == 0.99
    assert np.round(w.last_mix_from_rounded, 10).tolist() == [1.91, 0.99]


def test_mask_and_scaling():
    """The first row sees only itself (share 1); 1/√2 scaling divides every score by √2."""
    w = worked_example(DEFAULTS["q"], DEFAULTS["k"], DEFAULTS["v"])
    ws = worked_example(DEFAULTS["q"], DEFAULTS["k"], DEFAULTS["v"], scaled=True)
    assert w.shares[0, 0] == 1 and np.isnan(w.shares[0, 1:]).all()
    assert np.allclose(ws.scores[-1], np.array([1, 3, 1, 2]) / np.sqrt(2))


def test_table_round_trip_denominator_and_empty_cells():
    """The editable table gives Ch. 19's vectors back; the denominator e + e³ + e + e² = 32.9112 adds to 32.92 term
    by term (the chapter's figure); a blank cell is named."""
    import math

    import numpy as np
    import pytest

    from core.worked import DEFAULTS, denominator, table_rows, vectors_from_rows, worked_example

    q, k, v = vectors_from_rows(table_rows())
    assert q.tolist() == DEFAULTS["q"] and k.tolist() == DEFAULTS["k"] and v.tolist() == DEFAULTS["v"]
    den = denominator(worked_example(q, k, v))
    assert den.total == pytest.approx(2 * math.e + math.e**3 + math.e**2) and den.chapters_scores
    assert den.rounded_total == pytest.approx(2.72 + 20.09 + 2.72 + 7.39)
    assert not denominator(worked_example(q, k, v, scaled=True)).chapters_scores
    assert denominator(worked_example(q * 100, k, v)).terms is None  # e^300 is not worth printing
    rows = table_rows()
    rows[3]["k₂"] = None
    with pytest.raises(ValueError, match="on: k₂"):
        vectors_from_rows(rows)
    assert np.isfinite(den.terms).all()
