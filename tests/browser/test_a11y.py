"""Real browser: every page in its typical state, at 1280×800 and at 1920×1080 in presenter mode: it draws without an
exception, every figure fits the screen under the top bar, and axe-core (WCAG 2.0/2.1 A and AA rules) finds no
serious or critical violation. In presenter mode each figure page, as it arrives (nothing clicked, nothing
scrolled), shows its main figure with its caption wholly on the first screen (issue 37: the figure started at 1,301
px on the worked example, 2,767 on weights; the ruler's axis was off the screen). Saves a screenshot of each under
test-artifacts/ (look at them). One server for the module; in each layout the pages that start from their defaults
are reached through the top bar's menus inside one browser page (streamlit's in-app navigation: a rerun in the same
session, no page load); the decode stage, Predict first and the lesson stop each come from a page load of their
own."""

import re

import pytest

from bench.browser import (
    browser_page,
    rerun,
    running_app,
    screenshot,
    wait_app_style,
    wait_idle,
    wait_rows,
    wait_still,
)
from core.decode import settings as decode_settings
from core.model.shipped import load_shipped_tokenizer
from core.model.tokenizer import encode
from tests.helpers import axe_util
from ui.frame import SECTIONS

pytestmark = pytest.mark.browser

N_PROMPT = len(encode(load_shipped_tokenizer(), decode_settings.DEFAULT_PROMPT))


def _charts(n: int):
    return lambda page: page.wait_for_function(
        f"() => document.querySelectorAll('.js-plotly-plot').length >= {n}", timeout=60000
    )


def _decode(page) -> None:
    """After Prefill and three Steps (the stage's usual state in class)."""
    page.get_by_role("button", name="Prefill").click()
    wait_rows(page, N_PROMPT)
    for i in range(1, 4):
        page.get_by_role("button", name="Step ▸").click()
        wait_rows(page, N_PROMPT + i)


def _predict_revealed(page) -> None:
    """Predict first: Prefill asks, 3 picks, → reveals (the five answers stay on screen, disabled)."""
    page.get_by_role("button", name="Prefill").click()
    page.locator(".st-key-stage-question button").first.wait_for(timeout=30000)
    wait_rows(page, N_PROMPT)
    page.keyboard.press("3")
    page.locator(".st-key-stage-question").get_by_text("Your pick: 3.").wait_for(timeout=30000)
    page.keyboard.press("ArrowRight")
    page.get_by_text("→ asks the next question").wait_for(timeout=30000)


def _lesson_stop(page) -> None:
    """Lesson mode, teacher view, on the stop that prefills and decodes to step 11: the bar over the stage."""
    page.locator(".st-key-lesson-bar").wait_for(timeout=60000)
    wait_rows(page, N_PROMPT + 11, timeout_ms=60000)


def _click_then_charts(*buttons: str, charts: int = 1):
    def act(page) -> None:
        for name in buttons:
            with rerun(page):  # the next button only once this one's run has ended
                page.get_by_role("button", name=name).first.click()
        _charts(charts)(page)

    return act


def _practice(page) -> None:
    """Exercise 1 with one answer checked (the named mistake: TTFT from the start of prefill), so a
    feedback badge is on screen."""
    box = page.get_by_role("textbox", name="TTFT")  # by name: the sidebar has text boxes too (a class's code)
    box.fill("110 ms")
    page.get_by_role("button", name="Check").click()
    page.get_by_text("Known mistakes met").wait_for(timeout=30000)


def _sidebar(page) -> None:
    """The worked example with the sidebar open (presenter toggle, model card)."""
    _charts(1)(page)
    page.get_by_test_id("stExpandSidebarButton").click()
    page.get_by_test_id("stSidebar").get_by_text("Presenter mode").wait_for(timeout=30000)


def _serve(page) -> None:
    """Serve the class: a request sent, streamed to its end, and the room's batch drawn."""
    page.get_by_role("button", name="Send").click()
    page.locator(".serve-root").get_by_text("Done: press Send again").wait_for(timeout=60000)
    page.get_by_role("cell", name="Student 1", exact=True).first.wait_for(timeout=60000)


# page (path and parameters) → how to bring it into the state a class sees (each page's default preset)
PAGES = {
    "": _decode,
    "?predict=1": _predict_revealed,
    "worked": _sidebar,
    "context": _charts(2),
    "cache": _charts(1),
    "see_it_move": _charts(1),
    "latency": _charts(1),
    "batching": _click_then_charts("Prefill the batch", "Step ▸ (one pass)"),
    "speculative": _click_then_charts("Start (prefill the target)", "Round ▸", charts=0),
    "paged": _click_then_charts("Step ▸ (one pass)", charts=2),
    "serve_class": _serve,
    "cost": _charts(2),
    "memory": _charts(1),
    "speed": _charts(2),
    "weights": _charts(1),
    "quantize": _charts(2),
    "quant_model": _charts(2),
    "practice": _practice,
    "summary": lambda page: page.get_by_role("link", name="Latency on a timeline").wait_for(timeout=60000),
    "?lesson=fifteen-minutes&stop=2&teacher=1": _lesson_stop,
}


# The visits, each list one browser page's session: its first entry a page load, the rest reached through the top
# bar's menus (a page load costs Chromium ~4 s of CPU and the server a new session; a menu click, one rerun). A page
# reached so is in the state a fresh load shows it in: the pages before it in the list change only their own
# widgets (each action above is on its own page's keys; the stage's Prefill draws the default prompt's rows, which
# ``_decode`` waits for), and presenter mode stays on (``ui.present``). The worked example comes last: it opens the
# sidebar, which stays open. Predict first (``?predict=1``) and the lesson (``?lesson=…``) each get a session of
# their own: their mode is the session's (the question mode, the lesson bar), as in a student's fresh tab.
VISITS = (
    (
        "context",
        "cache",
        "see_it_move",
        "latency",
        "batching",
        "speculative",
        "paged",
        "serve_class",
        "cost",
        "memory",
        "speed",
        "weights",
        "quantize",
        "quant_model",
        "practice",
        "summary",
        "",
        "worked",
    ),
    ("?predict=1",),
    ("?lesson=fifteen-minutes&stop=2&teacher=1",),
)
assert sorted(w for visit in VISITS for w in visit) == sorted(PAGES)  # every page, once
MENU = {  # page → (its menu in the top bar, its entry there: also the page's heading); the decode page is at "/"
    ("" if path == "app_pages/decode.py" else path.removeprefix("app_pages/").removesuffix(".py")): (section, title)
    for section, pages in SECTIONS.items()
    for path, title, _ in pages
}


def _open(page, url: str, where: str, present: bool) -> None:
    """A page load of ``where`` (path and parameters), in presenter mode if ``present``."""
    path, _, params = where.partition("?")
    page.goto(f"{url}/{path}?" + "&".join(p for p in (params, "present=1" if present else "") if p))
    page.locator("h1").first.wait_for(timeout=60000)


# The pages whose first figure and its caption presenter mode puts on the first screen.
FIRST_SCREEN = {
    "worked", "context", "cache", "see_it_move", "latency", "batching", "speculative", "paged", "cost", "memory",
    "weights", "speed", "quantize", "quant_model",
}  # fmt: skip
FIGURE = "[data-testid=stMain] .js-plotly-plot"
BOXES_JS = f"""() => {{
  const fig = document.querySelector('{FIGURE}');
  const cap = [...document.querySelectorAll('.chart-desc')]
    .find((c) => fig.compareDocumentPosition(c) & Node.DOCUMENT_POSITION_FOLLOWING);
  const box = (e) => {{ const r = e.getBoundingClientRect(); return [Math.round(r.top), Math.round(r.bottom)]; }};
  return {{figure: box(fig), caption: cap ? box(cap) : null, scrolled: document.querySelector('[data-testid=stMain]')
    .scrollTop, bar: document.querySelector('header').getBoundingClientRect().bottom, screen: window.innerHeight}};
}}"""


def _off_the_first_screen(page, where: str) -> str | None:
    """The page as it arrives in presenter mode: what of its first figure and that figure's caption lies outside
    the screen under the top bar (None: both wholly on it)."""
    page.locator(FIGURE).first.wait_for(timeout=120000)
    page.locator(".chart-desc").first.wait_for(timeout=60000)
    wait_app_style(page)
    wait_idle(page, 120000)
    boxes = wait_still(page, BOXES_JS)  # the figure drawn and the columns laid out
    fig, cap, bar, screen = boxes["figure"], boxes["caption"], boxes["bar"], boxes["screen"]
    if cap is None or fig[0] < bar - 1 or fig[1] > screen or cap[1] > screen:
        return f"{where}: {boxes}"
    return None


def _navigate(page, where: str) -> None:
    """To ``where`` through the top bar, its menu then its entry (one rerun of the session, no page load); waits
    for the run that drew the new page and for its heading."""
    section, title = MENU[where]
    page.get_by_test_id("stTopNavSection").filter(has_text=re.compile(f"^{re.escape(section)}$")).click()
    with rerun(page):  # the entry's click asks the server for the new page's run
        page.get_by_test_id("stTopNavDropdownLink").filter(has=page.get_by_text(title, exact=True)).click()
    page.get_by_role("heading", level=1, name=title, exact=True).wait_for(timeout=60000)
    assert page.url.split("?")[0].endswith(f"/{where}"), (where, page.url)


@pytest.fixture(scope="module")
def url():
    axe_util.axe_path()  # fail at once, with the install line, when axe-core is missing
    with running_app() as u:
        yield u


def _faint_disabled_text(page) -> list[str]:
    """Disabled controls' text below 4.5:1 (3:1 if large) against what is behind it."""
    faint = []
    for t in axe_util.disabled_text(page):
        ratio = axe_util.contrast(t["fg"], t["bg"], t["opacity"])
        if ratio < (3 if axe_util.large(t["px"], t["bold"]) else 4.5):
            faint.append(f"disabled {t['text']!r}: {t['fg']} on {t['bg']} = {ratio:.2f}:1")
    return faint


def _tallest_figure_and_room(page, height: int) -> tuple[float, float]:
    """The tallest plotly figure's height and the screen's height under the top bar, in CSS px."""
    room = height - page.locator("header").first.bounding_box()["height"]
    tallest = page.evaluate(
        "() => Math.max(0, ...[...document.querySelectorAll('.js-plotly-plot')]"
        ".map(e => e.getBoundingClientRect().height))"
    )
    return tallest, room


@pytest.mark.parametrize("width,height,present", [(1280, 800, False), (1920, 1080, True)])
def test_every_page_fits_and_has_no_serious_wcag_violation(url, width, height, present):
    """Every page in its typical state: no exception; every figure fits the screen under the top bar (the
    context page's 130-row heatmap was 900 px, 1,125 in presenter mode); axe-core finds no serious or
    critical WCAG 2.0/2.1 A/AA violation, and the text of disabled controls (which axe skips) reaches 4.5:1."""
    found, faint, tall, off = {}, [], [], []
    with browser_page(width, height) as page:
        for visit in VISITS:
            _open(page, url, visit[0], present)
            for i, where in enumerate(visit):
                path, _, params = where.partition("?")
                if i:
                    _navigate(page, where)
                if present and where in FIRST_SCREEN:
                    off += filter(None, [_off_the_first_screen(page, where)])
                PAGES[where](page)
                wait_app_style(page)  # its contrast fixes and presenter sizes are what is checked
                wait_idle(page)  # act waited for the state's elements: now for the end of the run that drew them
                assert page.get_by_test_id("stException").count() == 0, where
                assert ("present=1" in page.url) == present, (where, page.url)  # the layout meant is the one checked
                name = f"{where or 'decode'} {width}x{height}"
                shot = f"page-{path or 'decode'}{'-' + params.split('=')[0] if params else ''}-{width}x{height}"
                screenshot(page, shot)
                tallest, room = _tallest_figure_and_room(page, height)
                if tallest > room:
                    tall.append(f"{name}: a {tallest:.0f} px figure under {room:.0f} px of screen")
                vs = [v for v in axe_util.violations(page) if v["impact"] in axe_util.BLOCKING]
                faint += [f"{name}: {f}" for f in _faint_disabled_text(page)]
                if vs:
                    found[name] = vs
        assert not off, "figure or caption off the first screen in presenter mode:\n" + "\n".join(off)
        assert not tall, "\n".join(tall)
        assert not found, "axe-core found serious/critical WCAG violations:\n" + axe_util.listing(found)
        assert not faint, "\n".join(faint)
