"""The chapters' remaining words where their element lives (issue 58): each sentence below is the chapter's,
checked on the page that shows that element (Ch. 19's opening and closing, the worked example, Example 30.1
beside Table 30.1, "Rounding reaches the output" on the ruler, Example 30.4's case)."""

from bench.fresh_app import new_app


def _text(at) -> str:
    return "\n".join(m.value for m in (*at.markdown, *at.caption))


def test_you_ll_need_where_a_learner_starts_and_where_we_re_headed_with_the_summaries():
    """Ch. 19's "You'll need" (four items) on the decode page, the first page; "Where we're headed" under Ch. 19's
    summary."""
    text = _text(new_app("app_pages/decode.py"))
    for item in ("the loop: sample a token, append it, run the machine again",
                 "queries, keys, values; one row of scores per asker; the causal mask",
                 "the full stack — layers, heads, d_model, and where the parameters live",
                 "sampling variation, long-run frequencies, and when errors can average out"):  # fmt: skip
        assert item in text, item
    assert "fetch the few passages that belong there: retrieval and vector search" in _text(
        new_app("app_pages/summary.py")
    )


def test_the_worked_example_says_why_a_and_reads_the_shares_in_words():
    at = new_app("app_pages/worked.py")
    if any(b.label == "Reveal the shares" for b in at.button):
        at.button[0].click().run()
    text = _text(at)
    assert "written “a” rather than w because these shares are computed on the fly" in text
    assert (
        "So “on” leans hard on “cat” (0.61), gives a fifth to itself (0.22), and spares a little for “the” and "
        "“sat” (0.08 each)." in text
    )


def test_example_30_1_beside_table_30_1():
    text = _text(new_app("app_pages/cache.py"))
    assert "the prompt's positions include any required special tokens" in text
    assert "the final prompt position supplies the logits for output token 1" in text


def test_the_ruler_writes_the_sums_out_and_says_the_arithmetic_changed():
    """Ch. 19: 0.34 − 0.12 + 0.70 + 0.23 = 1.15; 0.30 − 0.10 + 0.70 + 0.20 = 1.10; 0.05, about 4.35 %."""
    at = new_app("app_pages/quantize.py")
    at.selectbox(key="quant.preset").set_value("Ch. 19: four weights, scale 0.1").run()
    text = _text(at)
    assert "0.34 − 0.12 + 0.70 + 0.23 = 1.15  \n0.30 − 0.10 + 0.70 + 0.20 = 1.10" in text
    assert "= **4.35%** of the original" in text and "Smaller storage has changed the arithmetic." in text


def test_example_30_4_says_no_input_is_a_half_way_case():
    at = new_app("app_pages/quantize.py")
    at.selectbox(key="quant.preset").set_value("Ch. 30 Table 30.2: scale 0.5").run()
    text = _text(at)
    assert "Exact half-way cases use nearest-even rounding. None of these four inputs is a half-way case." in text
    at.selectbox(key="quant.preset").set_value("Exercise 4: ties 0.75 and −0.75, then 5").run()
    assert "2 of these 3 inputs are half-way cases." in _text(at)  # 0.75 / 0.5 = 1.5 and −1.5
