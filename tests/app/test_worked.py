"""App test of the worked-example page."""

from bench.fresh_app import new_app
from tests.helpers.app_util import heatmap_z


def test_worked_example_numbers_on_screen():
    """Scores 1,3,1,2; shares 0.0826/0.6103/0.0826/0.2245; sum 0.99; mixes [1.913, 1.000] and [1.91, 0.99]."""
    at = new_app("app_pages/worked.py")
    text = " ".join(m.value for m in at.markdown)
    for s in [
        "q_on · k_the = 2 × 1 + 1 × (−1) = **1**",
        "q_on · k_cat = 2 × 1 + 1 × 1 = **3**",
        "**0.0826**",
        "**0.6103**",
        "**0.2245**",
        "**0.99**",
        "[**1.913**, **1.000**]",
        "[**1.91**, **0.99**]",
    ]:
        assert s in text, s
    # e^1 + e^3 + e^1 + e^2 = 32.9112; rounded term by term, 2.72 + 20.09 + 2.72 + 7.39 = 32.92.
    assert any("32.9112" in c.value and "Ch. 19 writes 32.92" in c.value for c in at.caption)
    assert [round(x, 4) for x in heatmap_z(at)[3]] == [0.0826, 0.6103, 0.0826, 0.2245]


def test_scaling_toggle_changes_scores():
    """With 1/√2 scaling cat's score becomes 3/√2 ≈ 2.121."""
    at = new_app("app_pages/worked.py")
    at.toggle(key="worked.scaled").set_value(True).run()
    assert any("q_on · k_cat = (2 × 1 + 1 × 1) × 1/√2 = **2.121**" in m.value for m in at.markdown)
    # Not the chapter's scores any more: the remark is not credited to Ch. 19.
    assert not any("Ch. 19 writes" in c.value for c in at.caption)
    assert any("Rounding each term to two decimals first would give" in c.value for c in at.caption)


def test_predict_first_hides_the_shares_until_revealed():
    """With "Predict first" on, the page shows on's scores (1, 3, 1, 2) and a question, not the shares or the
    grid; "Reveal the shares" shows a_cat = 0.6103 and the grid and turns the switch off."""
    at = new_app("app_pages/worked.py")
    at.toggle(key="worked.ask_first").set_value(True).run()
    text = " ".join(m.value for m in at.markdown)
    assert "q_on · k_cat = 2 × 1 + 1 × 1 = **3**" in text and "0.6103" not in text and not at.get("plotly_chart")
    assert "which earlier word" in at.info[0].value
    next(b for b in at.button if b.label == "Reveal the shares").click().run()
    assert "**0.6103**" in " ".join(m.value for m in at.markdown) and len(at.get("plotly_chart")) == 1
    assert at.toggle(key="worked.ask_first").value is False


def test_the_arithmetic_is_on_the_page_and_follows_the_vectors():
    """Ch. 19's arithmetic beside the results, without a Check: each share as e^score / Σ (e^3 / Σ = 20.09 / 32.91 =
    0.6103), the mix slot by slot (0.08 × 0 + 0.61 × 3 + 0.08 × 1 + 0.22 × 0 = 1.91); with the 1/√d toggle the
    shares and the mix follow (e^2.121 / Σ = 8.34 / 16.51 = 0.5052; slot 1 from 0.51 × 3: 1.65)."""
    at = new_app("app_pages/worked.py")
    text = "\n".join(m.value for m in at.markdown)
    assert "a_cat = e^3 / Σ = 20.09 / 32.91 = **0.6103**" in text
    assert "o_on = 0.08 [0, 2] + 0.61 [3, 1] + 0.08 [1, 0] + 0.22 [0, 1] = [1.91, 0.99]" in text
    assert "Slot 1: 0.08 × 0 + 0.61 × 3 + 0.08 × 1 + 0.22 × 0 = **1.91**" in text
    assert "Slot 2: 0.08 × 2 + 0.61 × 1 + 0.08 × 0 + 0.22 × 1 = **0.99**" in text
    at.toggle(key="worked.scaled").set_value(True).run()
    text = "\n".join(m.value for m in at.markdown)
    assert "a_cat = e^2.121 / Σ = 8.34 / 16.51 = **0.5052**" in text
    assert "Slot 1: 0.12 × 0 + 0.51 × 3 + 0.12 × 1 + 0.25 × 0 = **1.65**" in text


def test_worked_grid_draws_the_chapters_marks():
    """Ch. 19's grid: the six masked cells are dark panels with muted em-dashes, the three cached rows
    carry the bracket 'computed in earlier steps — read from cache, never redone', the last row 'the
    only new work this step'."""
    from tests.helpers.app_util import charts

    [spec] = charts(new_app("app_pages/worked.py"))
    dark = [s for s in spec["layout"]["shapes"] if s.get("fillcolor") == "#2b2b2b"]
    assert len(dark) == 6  # 4·3/2 cells above the diagonal
    [dashes] = [t for t in spec["data"] if t.get("mode") == "text" and set(t["text"]) == {"—"}]
    assert len(dashes["text"]) == 6
    notes = [a["text"].replace("<br>", " ") for a in spec["layout"]["annotations"]]
    assert "computed in earlier steps — read from cache, never redone" in notes
    assert "<b>the only new work this step</b>" in notes
    assert any(s["type"] == "path" for s in spec["layout"]["shapes"])  # the bracket itself
