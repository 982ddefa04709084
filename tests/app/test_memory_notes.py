"""App test of the memory page's caption under M: what the formula leaves out, in Ch. 30's words."""

from bench.fresh_app import new_app


def test_the_formula_says_what_m_leaves_out():
    """Under M: it does not include weights, logits or workspace (§30.4); query-head count is not an extra factor
    (Exercise 3's answer)."""
    captions = " ".join(c.value for c in new_app("app_pages/memory.py").caption)
    assert "does not include weights, logits or workspace" in captions
    assert "Query-head count is not an extra factor (Exercise 3)" in captions
