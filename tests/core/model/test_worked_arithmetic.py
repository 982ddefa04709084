"""Ch. 19's worked arithmetic written out as the chapter writes it: on's four scores as products, each share as
e^score over the sum, the value mix slot by slot (the chapter's own lines, from "Two speeds, one model")."""

import numpy as np

from core.model.worked import DEFAULTS, denominator, worked_example
from core.model.worked_arithmetic import mix_lines, number, score_lines, share_lines

Q, K, V = (np.array(DEFAULTS[x]) for x in "qkv")


def _plain(lines: list[str]) -> list[str]:
    return [line.replace("**", "") for line in lines]


def test_on_s_four_scores_are_the_chapters_products():
    """ "q_on · k_the = 2 × 1 + 1 × (−1) = 1; … k_cat = 2 × 1 + 1 × 1 = 3; … k_sat = 2 × 0 + 1 × 1 = 1; … k_on =
    2 × 1 + 1 × 0 = 2" (Ch. 19, worked example: on's four scores)."""
    w = worked_example(Q, K, V)
    assert _plain(score_lines(Q[-1], K, w.scores[-1], w.scale)) == [
        "q_on · k_the = 2 × 1 + 1 × (−1) = 1",
        "q_on · k_cat = 2 × 1 + 1 × 1 = 3",
        "q_on · k_sat = 2 × 0 + 1 × 1 = 1",
        "q_on · k_on = 2 × 1 + 1 × 0 = 2",
    ]


def test_the_scaled_scores_show_the_factor():
    """With the usual 1/√d (d = 2): (2 × 1 + 1 × 1) × 1/√2 = 3/√2 = 2.121."""
    w = worked_example(Q, K, V, scaled=True)
    assert _plain(score_lines(Q[-1], K, w.scores[-1], w.scale))[1] == "q_on · k_cat = (2 × 1 + 1 × 1) × 1/√2 = 2.121"
    assert round(3 / np.sqrt(2), 3) == 2.121


def test_each_share_is_e_to_its_score_over_the_sum():
    """softmax(1, 3, 1, 2) = (2.72, 20.09, 2.72, 7.39) / Σ: e^1 = 2.72, e^3 = 20.09, e^2 = 7.39 (Ch. 19), Σ =
    e + e³ + e + e² = 32.91 exactly (the chapter's 32.92 adds the rounded terms), shares 0.0826, 0.6103, 0.0826,
    0.2245."""
    w = worked_example(Q, K, V)
    lines = _plain(share_lines(w.shares[-1], w.scores[-1], denominator(w)))
    assert lines == [
        "a_the = e^1 / Σ = 2.72 / 32.91 = 0.0826",
        "a_cat = e^3 / Σ = 20.09 / 32.91 = 0.6103",
        "a_sat = e^1 / Σ = 2.72 / 32.91 = 0.0826",
        "a_on = e^2 / Σ = 7.39 / 32.91 = 0.2245",
    ]
    assert round(2 * np.e + np.e**3 + np.e**2, 2) == 32.91


def test_the_value_mix_slot_by_slot_is_the_chapters():
    """ "o_on = 0.08 [0, 2] + 0.61 [3, 1] + 0.08 [1, 0] + 0.22 [0, 1] = [1.91, 0.99]"; "Slot 1: 0.08 × 0 + 0.61 × 3
    + 0.08 × 1 + 0.22 × 0 = 1.91"; "Slot 2: 0.08 × 2 + 0.61 × 1 + 0.08 × 0 + 0.22 × 1 = 0.99" (Ch. 19)."""
    w = worked_example(Q, K, V)
    assert _plain(mix_lines(w.last_rounded_shares, V, w.last_mix_from_rounded, 2)) == [
        "o_on = 0.08 [0, 2] + 0.61 [3, 1] + 0.08 [1, 0] + 0.22 [0, 1] = [1.91, 0.99]",
        "Slot 1: 0.08 × 0 + 0.61 × 3 + 0.08 × 1 + 0.22 × 0 = 1.91",
        "Slot 2: 0.08 × 2 + 0.61 × 1 + 0.08 × 0 + 0.22 × 1 = 0.99",
    ]


def test_edited_vectors_are_written_as_edited():
    """An edited q_on = [−1.5, 2]: each product shows the typed factors, negatives in parentheses, and the score
    −1.5 × 1 + 2 × (−1) = −3.5."""
    q = Q.copy()
    q[-1] = [-1.5, 2]
    w = worked_example(q, K, V)
    assert _plain(score_lines(q[-1], K, w.scores[-1], w.scale))[0] == "q_on · k_the = (−1.5) × 1 + 2 × (−1) = −3.5"
    assert number(-0.0) == "0" and number(2.5e-7) == "2.5e−07"
