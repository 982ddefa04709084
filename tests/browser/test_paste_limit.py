"""A paste longer than a box's limit is said on the page (issue 58): the browser drops a paste past a box's
``max_chars`` without a word, so the box lets several times its limit through and the page refuses it in a
sentence naming the limit."""

import pytest

from bench.browser import browser_page, running_app

pytestmark = pytest.mark.browser


def test_a_paste_past_the_limit_is_refused_in_words():
    """The memory page's T box takes 100,000 characters: 100,010 pasted (one input event, as a paste) reach the
    page, which says so in a sentence (before: the box kept "8" and nothing was said)."""
    with running_app() as url, browser_page() as page:
        page.goto(url + "/memory")
        box = page.get_by_role("textbox", name="T: positions")
        box.fill("1" * 100_010)
        box.press("Enter")
        page.get_by_text("This box takes at most 100,000 characters").first.wait_for(timeout=60000)
        assert len(box.input_value()) == 100_010
