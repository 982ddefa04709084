"""App test of the "What you now know" page: both chapters' summaries, each point with links to its pages."""

from bench.fresh_app import new_app
from core.lesson.pages import PAGES
from core.lesson.summary import SUMMARIES


def test_every_point_is_shown_with_a_link_to_each_of_its_pages():
    """Nine points in the chapters' words, and one link per page named, opening that page's address (its script's
    name; the decode page, the default, at the root), labelled with its navigation title, in the order of the
    points."""
    at = new_app("app_pages/summary.py")
    assert not at.exception
    shown = [m.value for m in at.markdown]
    links = [(link.proto.page, link.proto.label) for link in at.get("page_link")]
    want_links = []
    for s in SUMMARIES:
        for p in s.points:
            assert f"**·** {p.text}" in shown, p.text
            want_links += [("" if name == "decode" else name, PAGES[name].title) for name in p.pages]
    assert len(want_links) == 15 and links == want_links


def test_practice_ends_with_a_link_to_the_summaries():
    """A learner finishing Practice finds the summaries: the page links to the summary page, saying so."""
    at = new_app("app_pages/practice.py")
    assert not at.exception
    [link] = [(p.proto.page, p.proto.label) for p in at.get("page_link")]
    assert link[0] == "summary" and "What you now know" in link[1]
