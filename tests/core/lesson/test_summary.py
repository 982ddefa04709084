"""The two chapters' summaries: their own words, each point linked to pages the app has, and the lesson ends there."""

from core.lesson.pages import PAGES
from core.lesson.stops import load_shipped
from core.lesson.summary import SUMMARIES
from ui.frame import PAGES as NAVIGATION

# Copied from the chapters: Ch. 19, "What you now know"; Ch. 30, §30.7 Summary (its four sentences).
CH19 = [
    "Prefill processes the prompt; decoding extends it one token at a time.",
    "The KV cache reuses earlier keys and values at every layer.",
    "Prompt attention grows quadratically; one cached query grows linearly with context.",
    "Quantization reduces precision and storage, with measurable output error.",
    "Weights, cache, activations, and metadata all consume memory.",
]
CH30 = [
    "Prefill processes known prompt positions and supplies the first next-token logits; decode consumes chosen "
    "tokens sequentially.",
    "KV caching reuses layer-specific keys and values under matching computation conditions.",
    "TTFT and TPOT need explicit timestamps and denominators.",
    "Quantization trades representation size for bounded rounding error only within its unclipped range, and task "
    "quality must still be measured.",
]


def test_the_points_are_the_chapters_words_in_order():
    """Ch. 19's five points, then Ch. 30 §30.7's four sentences, word for word."""
    assert [[p.text for p in s.points] for s in SUMMARIES] == [CH19, CH30]


def test_every_point_links_to_pages_in_the_navigation():
    """Each point names at least one page, and every page it names is one of the app's pages (its script in
    ui/frame.py's SECTIONS); the latency point links the latency page, the quantization points the ruler."""
    scripts = {path for path, _, _ in NAVIGATION}
    for s in SUMMARIES:
        for p in s.points:
            assert p.pages and all(PAGES[name].script in scripts for name in p.pages), p
    pages = {p.text: p.pages for s in SUMMARIES for p in s.points}
    assert pages[CH30[2]] == ("latency",) and pages[CH19[3]][0] == pages[CH30[3]][0] == "quantize"


def test_the_shipped_lesson_ends_on_the_summaries_and_hands_them_out():
    """The lesson's last stop is the summary page, and its handout text carries all nine points."""
    last = load_shipped("fifteen-minutes").stops[-1]
    assert last.page == "summary" and PAGES["summary"].script == "app_pages/summary.py"
    assert all(text in last.handout for text in CH19 + CH30)
