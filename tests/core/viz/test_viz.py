import numpy as np
import pytest

from core.viz.attention import fig_attention
from core.viz.batching import fig_batch_cache
from core.viz.cost import fig_growth_shapes
from core.viz.latency import fig_timeline
from core.viz.theme import CACHED


def _att3():
    return np.array([[1.0, np.nan, np.nan], [0.25, 0.75, np.nan], [0.2, 0.3, 0.5]])


def test_attention_masked_cells_blank_not_zero():
    """Future cells become None (blank) in z; computed shares keep their values."""
    fig = fig_attention(_att3(), ["0: a", "1: b", "2: a"], new_rows=3, title="t")
    z = fig.data[0].z
    assert np.isnan(z[0][1]) and np.isnan(z[0][2]) and np.isnan(z[1][2])
    assert z[1][1] == 0.75 and z[2][2] == 0.5


def test_attention_repeated_tokens_get_distinct_rows():
    """Labels are per position, so a repeated token gives two distinct categories."""
    fig = fig_attention(_att3(), ["0: a", "1: b", "2: a"], new_rows=1, title="t")
    assert len(set(fig.data[0].y)) == 3


def test_attention_user_text_is_escaped():
    """HTML typed by a user reaches plotly escaped (shown literally, not as markup)."""
    fig = fig_attention(_att3(), ["0: <b>", "1: <img src=x onerror=alert(1)>", "2: &amp;"], 1, "t")
    assert list(fig.data[0].x) == ["0: &lt;b&gt;", "1: &lt;img src=x onerror=alert(1)&gt;", "2: &amp;amp;"]


def test_attention_dims_cached_rows_and_outlines_new():
    """After a decode step the old rows are a dimmed trace, the new row full strength and outlined."""
    fig = fig_attention(_att3(), ["0: a", "1: b", "2: c"], new_rows=1, title="t")
    old, new, numbers = fig.data
    assert old.opacity < 1 and new.opacity == 1
    assert old.z.shape == new.z.shape == (3, 3)  # each spans every row: one-row traces draw as a band
    assert np.isnan(old.z[2][0]) and old.z[1][0] == 0.25 and abs(new.z[2][0] - 0.2) < 1e-7 and np.isnan(new.z[1][0])
    [outline] = fig.layout.shapes
    assert outline.y0 == 1.5 and outline.y1 == 2.5
    # After prefill every row is new: one full-strength trace.
    fig = fig_attention(_att3(), ["0: a", "1: b", "2: c"], new_rows=3, title="t")
    assert [t.type for t in fig.data] == ["heatmap", "scatter"] and fig.data[0].opacity == 1


def test_attention_always_labels_the_newest_row():
    """With many rows only some labels show, but always the newest one."""
    labels = [f"{i}: t" for i in range(100)]
    att = np.tril(np.full((100, 100), 0.01))
    att[np.triu_indices(100, 1)] = np.nan
    fig = fig_attention(att, labels, new_rows=1, title="t")
    assert fig.layout.yaxis.tickvals[-1] == "99: t" and len(fig.layout.yaxis.tickvals) <= 41


def test_timeline_labels_never_crowd():
    """Ch. 30's four tokens (40 ms apart on a 270 ms axis) are all labelled; measured tokens 1 ms apart on a
    400 ms axis are labelled only where the previous label is at least 3.5% of the axis away."""
    from core.serving.latency import CH30_TRACE, RequestTrace

    fig = fig_timeline([CH30_TRACE], "t")
    [tokens] = [t for t in fig.data if t.type == "scatter"]
    assert list(tokens.text) == ["8", "9", "10", "11"]
    fast = RequestTrace("fast", 0, 0, tuple(float(t) for t in range(380, 400)), 50)
    slow = RequestTrace("slow", 0, 0, (100.0, 200.0), 5)
    fig = fig_timeline([slow, fast], "t")
    fast_trace = [t for t in fig.data if t.type == "scatter"][1]
    shown = [x for x, s in zip(fast_trace.x, fast_trace.text, strict=True) if s]
    assert shown == [380, 394]  # 0.035 · 399 ms = 13.97 ms: 380, then the first token ≥ 393.97


def test_timeline_without_a_prompt_length_labels_no_cache_lengths():
    """Exercise 1 gives no prompt length (0 positions): its tokens are not labelled 0, 1, 2 as if the
    cache held that many positions, and the hover says the length is not known."""
    from core.serving.latency import EXERCISE_1

    [tokens] = [t for t in fig_timeline([EXERCISE_1], "t").data if t.type == "scatter"]
    assert list(tokens.text) == ["", "", ""] and list(tokens.x) == [110.0, 160.0, 220.0]
    assert "not known" in tokens.customdata[0] and "positions" not in tokens.hovertemplate


def test_heatmap_note_follows_the_figure_font():
    """The "read from the KV cache" note has no fixed size: presenter mode's larger figure font reaches it."""
    fig = fig_attention(_att3(), ["0: a", "1: b", "2: c"], new_rows=1, title="t")
    [note] = fig.layout.annotations
    assert note.font.size is None and note.font.color == CACHED


def test_batch_cache_tells_padding_from_reserved_slots():
    """Rows of 5, 17, 9, 2 positions in a 35-slot padded block: padding to 17 (12, 0, 8, 15), then 18 reserved each."""
    fig = fig_batch_cache(["a", "b", "c", "d"], [5, 17, 9, 2], 35, "padded")
    used, padding, reserved = fig.data
    assert list(padding.x) == [12, 0, 8, 15] and list(padding.base) == [5, 17, 9, 2]
    assert list(reserved.x) == [18] * 4 and list(reserved.base) == [17] * 4
    assert len(fig_batch_cache(["a"], [5], 9, "ragged").data) == 1


@pytest.mark.parametrize("n_max", [2_000, 5_000, 10_000, 20_000])
def test_growth_marks_labels_take_different_places(n_max):
    """Every stop of the bill page's slider: each chapter point's label has a place of its own. At n = 20,000
    both the 1,000- and the 10,000-token labels once took the same spot high on the left, one hiding the other
    (a helper found it); now only the first goes there, the others sit to the upper left of their point."""
    from core.cost import bill

    fig = fig_growth_shapes(bill.growth(n_max), "per layer, per head")
    marks = [a for a in fig.layout.annotations if a.showarrow is not False]  # not the footnote
    places = [(a.ax, a.ay, a.axref, a.ayref) for a in marks]
    assert len(places) == len([x for x in (1_000, 10_000) if x <= n_max]) == len(set(places)), places


def test_attention_labels_never_closer_than_their_spacing():
    """62 rows, labels every 2nd: the newest row (61) is always labelled, and its even neighbour 60 goes
    (both drawn, "60: yuan" sat on "61: ,"); a kept key mid-way drops its neighbours the same way."""
    from core.viz.attention import tick_positions

    shown = tick_positions(62, [33])
    assert 61 in shown and 33 in shown and 60 not in shown and 32 not in shown and 34 not in shown
    assert min(b - a for a, b in zip(shown, shown[1:], strict=False)) >= 2
    assert tick_positions(12) == list(range(12))  # few rows: every one labelled


def test_the_cached_rows_note_sits_where_the_mask_leaves_the_row_blank():
    """The worked example's 4 × 4 grid (3 earlier rows): the note stood on row 1, over its 0.88 share. It sits
    on a row whose cells right of the first are all masked (blank), in two lines."""
    import numpy as np

    from core.viz.attention import fig_attention

    att = np.full((4, 4), np.nan)
    for i in range(4):
        att[i, : i + 1] = 1.0 / (i + 1)
    fig = fig_attention(att, ["0: the", "1: cat", "2: sat", "3: on"], 1, "t")
    [note] = [a for a in fig.layout.annotations if "earlier rows" in a.text]
    row = ["0: the", "1: cat", "2: sat", "3: on"].index(note.y)
    assert np.isnan(att[row, 1:]).all() and "<br>" in note.text


def test_speculative_rounds_mark_proposals_after_a_rejection_discarded():
    """k = 4: the second proposal rejected, so the last two were scored in the same pass and thrown away: marked
    "(discarded)", not "(not checked)"; the round ends with a resampled token."""
    from types import SimpleNamespace

    from core.viz.speculative import PROPOSED, speculative_rounds

    r = SimpleNamespace(
        proposed=[5, 6, 7, 8],
        accepted=[True, False],
        final_is_bonus=False,
        final_token=9,
        produced=2,
        cache_before=10,
        cache_peak=15,
        cache_after=12,
    )
    [row] = speculative_rounds([r], lambda t: f"t{t}")
    assert row[PROPOSED] == "t5 ✓ | t6 ✗ | t7 (discarded) | t8 (discarded)" and row["then"] == "resampled: t9"
    # Greedy: the replacement is the target's argmax, nothing was resampled (a teacher's review).
    [row] = speculative_rounds([r], lambda t: f"t{t}", greedy=True)
    assert row["then"] == "target's token: t9" and row["target cache: before → checked → after"] == "10 → 15 → 12"


def test_a_failed_request_label_stays_inside_the_plot():
    """ "error: no tokens" was written rightwards from the request's prefill start: a failed request
    starting last (here at 120 ms of an axis from −100 to 120 ms) had its label cut at the figure's edge."""
    from core.serving.latency import RequestTrace

    ok = RequestTrace("A", 0, 10, (50, 80, 110))
    late, early = RequestTrace("B", -100, 120, ()), RequestTrace("C", 0, 5, ())
    [label] = fig_timeline([ok, late], "t").layout.annotations
    assert (label.text, label.x, label.xanchor) == ("error: no tokens", 120, "right")
    [label] = fig_timeline([ok, early], "t").layout.annotations
    assert (label.x, label.xanchor) == (5, "left")
