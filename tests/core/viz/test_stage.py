"""The decode stage's payloads for the browser: one full drawing, then one row per Step."""

import json

import numpy as np

from core.decode import session, session_view
from core.decode.generate import SamplingConfig
from core.text import show_spaces
from core.viz import stage


def _sess(model, n=6, steps=3):
    sess = session.start(model, list(range(1, n + 1)), SamplingConfig())
    for _ in range(steps):
        session.step(model, sess)
    return sess


def test_full_payload_is_the_lower_triangle_of_the_session(tiny_model):
    """Row i of a full drawing holds the i+1 shares query i gave keys 0..i, × 10,000 and rounded."""
    sess = _sess(tiny_model)
    att = session_view.attention_matrix(sess, 1, 2)
    labels = [f"{i}: t{i}" for i in range(att.shape[0])]
    p = stage.heatmap_full(att, labels, 1, "t", "f", stage.StageStyle(), "d")
    assert [len(r) for r in p["rows"]] == list(range(1, att.shape[0] + 1))
    for i, row in enumerate(p["rows"]):
        assert np.allclose(np.array(row) / stage.SCALE, att[i, : i + 1], atol=0.5 / stage.SCALE)
    assert p["focus"] == int(np.nanargmax(att[-1]))


def test_a_step_sends_one_row_and_its_size_grows_linearly(tiny_model):
    """A row payload carries T numbers; its JSON grows by a few bytes per cached position, while a full
    drawing grows with T² (bytes measured with json.dumps, as the component sends them)."""
    sizes_row, sizes_full = [], []
    for n in (4, 8, 16):
        sess = _sess(tiny_model, n=n, steps=1)
        att = session_view.attention_matrix(sess, 0, None)
        labels = [f"{i}: t" for i in range(att.shape[0])]
        row = stage.heatmap_row(att[-1], labels, "t", "f", stage.StageStyle(), "d")
        assert row["kind"] == "row" and len(row["row"]) == att.shape[0] and row["base"] == att.shape[0] - 1
        sizes_row.append(len(json.dumps(row)))
        sizes_full.append(len(json.dumps(stage.heatmap_full(att, labels, 1, "t", "f", stage.StageStyle(), "d"))))
    assert sizes_row[2] - sizes_row[1] < 2 * (sizes_row[1] - sizes_row[0]) + 40  # ~linear
    assert sizes_full[2] - sizes_full[1] > 2.5 * (sizes_full[1] - sizes_full[0])  # superlinear


def test_description_names_the_most_attended_position():
    """The text alternative says where the newest row looks most, with the share and the cache size."""
    row = np.array([0.01, 0.977, 0.003, 0.01])
    labels = ["0: The", "1: Mira", "2: is", "3: ␣Mira"]
    text = stage.describe("Layer 2, head 3, step 11", row, labels)
    assert text == (
        "Layer 2, head 3, step 11: the newest row (3 ‘␣Mira’) puts 0.98 of its attention on position 1 ‘Mira’; "
        "4 positions cached."
    )


def test_leading_and_trailing_spaces_are_visible():
    """' yuan' and 'yuan' must not look alike on the bars."""
    assert show_spaces(" yuan") == "␣yuan" and show_spaces("yuan") == "yuan"
    assert show_spaces("  a ") == "␣␣a␣" and show_spaces(" ") == "␣"


def test_next_token_bars_mark_the_chosen_one():
    """The chosen token is marked; probabilities as given; spaces visible."""
    rows = [(5, " yuan", 0.6), (7, "yuan", 0.3), (9, ".", 0.1)]
    p = stage.next_token_bars(rows, 7, "Next token", stage.StageStyle())
    assert p["tokens"] == ["␣yuan", "yuan", "."] and p["chosen"] == [False, True, False]
    assert p["probs"] == [0.6, 0.3, 0.1] and "␣yuan 60.0%" in p["desc"]


def test_the_badge_says_when_the_check_last_ran():
    """Right after Prefill: nothing to compare; a checked step: its verdict; a later unchecked step:
    the verdict of the step it was checked at, and how often checks run."""
    import torch

    from core.decode.equivalence import equivalence

    eq = equivalence(1e-6, 10.0, torch.float32, 4)
    assert stage.badge_text(None, None, 0, 10)[0] == "info"
    assert stage.badge_text(eq, 3, 3, 10) == ("ok", f"✓ Cached vs recomputed logits: {eq.text}")
    state, text = stage.badge_text(eq, 3, 7, 10)
    assert state == "ok" and text.endswith("(checked at step 3; every 10 steps on this model)")
    busy = stage.badge_text(eq, 3, 7, 10, "busy")[1]
    assert busy.endswith("(checked at step 3; every 10 steps while the server is busy)")
