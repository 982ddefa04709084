"""App tests for issue 37: the lesson bar's question follows the Practice stop's exercise (item 7), and the
sidebar says how to run a local checkpoint offline (item 8)."""

import html
import re

from streamlit.testing.v1 import AppTest

from bench.fresh_app import APP


def app(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def ask_line(at: AppTest) -> str:
    """The bar's question (ui/lesson/draw.py draws the bar's texts as escaped HTML in a markdown element)."""
    lines = [html.unescape(re.sub(r"<[^>]+>", "", m.value)) for m in at.markdown if 'class="lesson-text"' in m.value]
    return next(line for line in lines if line.startswith("Ask: "))


def test_the_bars_question_follows_new_numbers_on_the_practice_stop():
    """Stop 8 opens on the chapter's numbers (110, 160 and 220 ms); after New numbers the bar asks with the
    exercise's new numbers, the ones its form shows, and Chapter's numbers brings the file's question back."""
    at = app(lesson="fifteen-minutes", stop="8")
    first = ask_line(at)
    assert "110, 160 and 220 ms" in first
    next(b for b in at.button if b.label == "New numbers").click().run()
    assert not at.exception, at.exception
    now = ask_line(at)
    question = next(m.value for m in at.markdown if m.value.startswith("A request arrives"))
    assert now != first and "110, 160 and 220 ms" not in now
    assert now == "Ask: " + question.replace("**", "")
    next(b for b in at.button if b.label == "Chapter's numbers").click().run()
    assert ask_line(at) == first


def test_the_sidebar_says_how_to_add_a_checkpoint_offline():
    """The sidebar names both commands with --models-dir and says that a restart is needed."""
    at = app()
    said = " ".join(c.value for c in at.sidebar.caption)
    assert "streamlit run main.py -- --models-dir DIR" in said
    assert "inference-explainer --models-dir DIR" in said
    assert "restart" in said
