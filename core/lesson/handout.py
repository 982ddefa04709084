"""The handout: one self-contained HTML file a student takes home — the lesson's stops (title,
the text for students, the figure as they left it) and the exercises they attempted, with their
answers and the right ones. It opens offline: the plotly.js bundled in the installed ``plotly``
package is inlined once (with the first figure); there is no other script or link.

Every piece of text is escaped (``html.escape``) before a small Markdown subset (**bold**,
`code`) is turned into tags, so typed text can never become markup.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from core.practice import catalogue
from core.practice.tally import Attempt
from core.viz.handout import figure_html

STATUS = {
    "right": "right",
    "mistake": "a known mistake",
    "wrong": "not right",
    "unreadable": "couldn't read it",
    "noted": "explained (not graded)",
}

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; max-width: 980px;
       margin: 2rem auto; padding: 0 1rem; color: #222; line-height: 1.5; }
h1 { font-size: 1.8rem; margin-bottom: .2rem; } h2 { font-size: 1.3rem; margin-top: 2.2rem; }
.intro, .small { color: #555; } section { page-break-inside: avoid; }
table { border-collapse: collapse; width: 100%; margin: .6rem 0 1.4rem; font-size: .95rem; }
th, td { border: 1px solid #ccc; padding: .35rem .5rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.right { color: #1a7f37; } td.mistake, td.wrong { color: #b35900; }
code { background: #f3f3f3; padding: 0 .2em; border-radius: 3px; white-space: pre-wrap; }
.figure { margin: .6rem 0; }
"""


@dataclass(frozen=True)
class HandoutStop:
    """One stop for the handout: its title, the text for students (Markdown subset), and the
    figure as the student left it (a plotly ``Figure``, or None)."""

    title: str
    text: str
    figure: object | None = None


def lesson_stops(lesson, figures: dict | None = None) -> list[HandoutStop]:
    """The handout stops of a ``core.lesson.stops.Lesson``: each stop's title and its ``handout`` text
    (the question when the file gives none), with ``figures[k]`` (k = stop index from 0) as the
    student left that page's main figure, or no figure."""
    figures = figures or {}
    return [HandoutStop(s.title, s.handout, figures.get(k)) for k, s in enumerate(lesson.stops)]


def inline(text: str) -> str:
    """Escape ``text``, then **bold** → <strong> and `code` → <code> (the subset core writes)."""
    out = html.escape(str(text), quote=True)
    out = re.sub(r"(`+) ?(.+?) ?\1", lambda m: f"<code>{m[2]}</code>", out)
    return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", out)


def paragraphs(text: str) -> str:
    return "".join(f"<p>{inline(p.strip())}</p>" for p in re.split(r"\n\s*\n", str(text)) if p.strip())


def build_handout(title: str, stops: list[HandoutStop], attempts: list[Attempt], intro: str = "") -> str:
    """The handout as one HTML document (str). ``attempts``: what the student checked (e.g.
    ``Tally.latest()``), grouped by exercise instance in the order first tried."""
    body = [f"<h1>{inline(title)}</h1>"]
    if intro:
        body.append(f'<div class="intro">{paragraphs(intro)}</div>')
    first = True
    for k, stop in enumerate(stops, 1):
        body.append(f'<section class="stop"><h2>{k}. {inline(stop.title)}</h2>{paragraphs(stop.text)}')
        if stop.figure is not None:
            fragment = figure_html(stop.figure, include_plotlyjs=first, div_id=f"figure-{k}")
            body.append(f'<div class="figure">{fragment}</div>')
            first = False
        body.append("</section>")
    if attempts:
        body.append("<h2>Exercises you tried</h2>")
        groups: dict[tuple, list[Attempt]] = {}
        for a in attempts:
            groups.setdefault((a.exercise, a.seed, a.title), []).append(a)
        for (ex_id, seed, ex_title), rows in groups.items():
            numbers = "the chapter's numbers" if seed == 0 else f"numbers {seed}"
            body.append(f"<h3>{inline(ex_title)} <span class='small'>({numbers})</span></h3>")
            body.append(paragraphs(catalogue.make(ex_id, seed).question))  # the numbers the student had
            body.append("<table><tr><th>part</th><th>your answer</th><th>result</th><th>right answer</th></tr>")
            for a in rows:
                verdict = STATUS.get(a.status, a.status)
                if a.status in ("mistake", "wrong", "unreadable"):
                    verdict += f": {inline(a.message)}"
                body.append(
                    f"<tr><td>{inline(a.label)}</td><td><code>{html.escape(a.typed)}</code></td>"
                    f'<td class="{html.escape(a.status)}">{verdict}</td><td>{inline(a.right)}</td></tr>'
                )
            body.append("</table>")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head>\n<body>{''.join(body)}</body></html>\n"
    )
