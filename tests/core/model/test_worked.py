import numpy as np

from core.model.worked import DEFAULTS, worked_example


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

    from core.model.worked import DEFAULTS, denominator, table_rows, vectors_from_rows, worked_example

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


def test_cells_are_read_as_typed_and_refusals_name_them():
    """The editor's cells are text: 1e308, 1.5e3 and 20-digit integers arrive as typed (streamlit's number cells
    read them as 1308, 1.53 and dropped the last); a decimal comma, U+2212 and other scripts' digits read;
    a word or a blank cell is named ("abc" was called an empty cell); scores past float64 are refused, not nan."""
    import math

    import pytest

    from core.model.worked import cell_number, table_rows, vectors_from_rows, worked_example

    assert [cell_number(c) for c in ("1e308", "1.5e3", "12345678901234567890", "1,5", "−2", " ٣ ", 4, 2.5)] == [
        1e308,
        1500.0,
        1.2345678901234567e19,
        1.5,
        -2.0,
        3.0,
        4.0,
        2.5,
    ]
    rows = table_rows()
    assert rows[3] == {"token": "on", "q₁": "2", "q₂": "1", "k₁": "1", "k₂": "0", "v₁": "0", "v₂": "1"}  # Ch. 19
    rows[0]["k₂"], rows[1]["v₁"] = "abc", ""
    with pytest.raises(ValueError, match=r"^the: k₂ 'abc' is not a number; cat: v₁ is empty$"):
        vectors_from_rows(rows)
    rows = table_rows()
    rows[3]["q₁"] = "1e308"  # q_on · k_the = 1e308 · 1 + 1 · (−1): finite, and the shares exact thirds
    w = worked_example(*vectors_from_rows(rows))
    assert w.scores[-1][0] == 1e308 and w.shares[-1].tolist() == pytest.approx([1 / 3, 1 / 3, 0, 1 / 3])
    rows[3]["k₁"] = "2"  # q_on · k_on = 2e308: inf, and its softmax nan
    assert math.isinf(1e308 * 2)
    with pytest.raises(ValueError, match="past float64's range"):
        worked_example(*vectors_from_rows(rows))


def test_a_thousands_separator_in_a_cell_is_read_as_one():
    """ "1,000" in a cell is one thousand, as in every answer box (the cell reader read it as 1.0 while a lone
    comma stays a decimal comma: "1,5" is 1.5); the latency editor's prompt positions read "1,000" too."""
    from core.model.worked import cell_number
    from core.serving.latency_tables import prompt_positions

    assert (cell_number("1,000"), cell_number("1,5"), cell_number("−1,000.5")) == (1000.0, 1.5, -1000.5)
    assert prompt_positions("1,000") == 1000 and prompt_positions("٨") == 8
