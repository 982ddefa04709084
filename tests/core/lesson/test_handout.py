"""The handout (core.lesson.handout): one self-contained HTML file, every piece of user text escaped."""

import re

import numpy as np

from core.lesson.handout import HandoutStop, build_handout, lesson_stops
from core.lesson.stops import load_shipped
from core.practice import catalogue, exercises
from core.practice.tally import Tally
from core.quant.ruler import ruler as ruler_of
from core.viz.memory import fig_kv_variants
from core.viz.ruler import fig_ruler

HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>"


def figures() -> dict:
    """Two figures from the lesson's pages: the ruler with the outlier, the MHA/GQA/MQA bars."""
    r = ruler_of(np.array([-1.2, -0.2, 0.7, 1.8, 8.0]), 4, 0.5)
    ruler = fig_ruler(r).update_layout(title_text=HOSTILE)  # a title carrying hostile text
    gib = [4 * 2**30, 2**30, 2**27]
    bars = fig_kv_variants(["MHA", "GQA", "MQA"], gib, ["4 GiB", "1 GiB", "128 MiB"], "GQA")
    return {3: bars, 5: ruler}


def tally() -> Tally:
    t = Tally()
    ex = catalogue.make("ch30-3", 0)
    for p, text in zip(ex.parts, ["768 MiB", HOSTILE], strict=True):
        t.record(ex, p, text, exercises.check(p, text))
    ex = catalogue.make("ch19-ruler", 7)
    t.record(ex, ex.parts[1], "3, -1, 7, 2", exercises.check(ex.parts[1], "3, -1, 7, 2"))
    return t


def handout() -> str:
    stops = lesson_stops(load_shipped(), figures())
    stops[0] = HandoutStop(HOSTILE, f"**bold** and `code` and {HOSTILE}")
    return build_handout(f"Lesson {HOSTILE}", stops, tally().latest(), intro="For *you*.")


def test_user_text_is_escaped_everywhere():
    """Typed answers, titles and notes with HTML come out as text: no injected tag survives."""
    html = handout()
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<strong>bold</strong>" in html and "<code>code</code>" in html  # the subset core writes


def test_self_contained_one_plotly_bundle_no_network():
    """plotly.js is inlined once (from the installed package), every figure is drawn by it, and
    nothing is fetched: no src/href to the web, no stylesheet link, no CDN."""
    html = handout()
    assert html.count("* plotly.js v") == 1
    assert len(re.findall(r"Plotly\.newPlot\(", html)) == 2
    assert not re.search(r"<script[^>]*\bsrc\s*=", html)  # every script is inline
    markup = re.sub(r"<script.*?</script>", "", html, flags=re.S)  # plotly's own code aside
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", markup)
    assert "<link" not in markup and "@import" not in markup


def test_stops_and_attempts_are_listed():
    """Nine stops with their take-home text; the attempts with the student's answer and the right one."""
    html = handout()
    assert html.count('<section class="stop">') == 9
    assert "Llama-3-8B at 8,192 tokens: 1 GiB per request" in html
    assert "<code>768 MiB</code>" in html and "805,306,368 bytes (768 MiB = 805.31 MB)" in html
    assert "Exercise 3: fewer KV heads, more requests <span class='small'>(the chapter's numbers)</span>" in html
    assert "(numbers 7)" in html
    ruler7 = ", ".join(f"{v:g}" for v in catalogue.make("ch19-ruler", 7).params["values"]).replace("-", "−")
    assert f"<strong>{ruler7}</strong>" in html  # the question with the numbers the student had
    assert "couldn't read it" in html


def test_no_figures_no_bundle():
    """A handout without figures carries no plotly.js at all (a few kB, not 4.8 MB)."""
    html = build_handout("Only text", [HandoutStop("A", "b")], [])
    assert "plotly" not in html.lower() and len(html) < 10_000
