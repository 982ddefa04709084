"""A guided lesson in class mode in real browsers (issue 54): the console at 1280 × 800 walks the shipped lesson
forward to its last stop and back to stop 1, then leaves it; the display at 1920 × 1080 and a student on a phone
follow. Each browser is a context of its own (its own cookies). Every wait is on what a screen shows."""

import re

import pytest
from playwright.sync_api import expect

from bench.browser import browser_page, heatmap_rows, running_app, screenshot, wait_idle, wait_rows
from core.lesson.pages import PAGES
from core.lesson.stops import load_shipped
from tests.browser.test_class_mode import join, start

pytestmark = pytest.mark.browser

LESSON = load_shipped("fifteen-minutes")
CONTROLS = ("stButton", "stSelectbox", "stSlider", "stRadio", "stNumberInput", "stCheckbox", "stTextArea")
VISIBLE_CONTROLS_JS = """(ids) => ids
  .flatMap((id) => [...document.querySelectorAll(`[data-testid=stMain] [data-testid=${id}]`)])
  .filter((e) => e.offsetParent !== null).length"""


ERRORS: list[str] = []


def _on_stop(page, k: int, who: str = "") -> None:
    """The page shows stop ``k`` (from 0): the bar's title and the stop's page heading (a blank page has none)."""
    stop = LESSON.stops[k]
    title = page.locator(".st-key-lesson-title").first
    heading = page.get_by_role("heading", name=PAGES[stop.page].title, exact=True).first
    try:
        expect(title).to_contain_text(f"Stop {k + 1} of {len(LESSON.stops)}", timeout=60000)
        expect(heading).to_be_visible(timeout=60000)
    except AssertionError:  # what the page shows instead (a blank page, another page, a sentence)
        screenshot(page, f"class-lesson-{who}-stop-{k + 1}")
        shows = page.locator("body").inner_text()[:1500]
        raise AssertionError(f"{who} at stop {k + 1} shows: {shows!r}; errors: {ERRORS[-8:]}") from None


def test_a_class_follows_a_guided_lesson_to_its_last_stop_back_to_the_first_and_out():
    """Forward through all nine stops and back with ←: after each move the display and the phone show the
    console's stop on its page (no blank page, no page error) and, on the decode page, a heatmap with the console's
    rows; the display shows no control on any stop; at the
    last stop an F5 keeps the display in the class; leaving the lesson takes its bar off the followers' pages."""
    with (
        running_app() as url,
        browser_page(1280, 800, fresh=True) as console,
        browser_page(1920, 1080, fresh=True) as display,
        browser_page(390, 844, fresh=True) as phone,
    ):
        errors = ERRORS
        for name, page in (("console", console), ("display", display), ("phone", phone)):
            page.on("pageerror", lambda err, name=name: errors.append(f"{name}: {err}"))
            page.on("console", lambda m, name=name: errors.append(f"{name}: {m.text}") if m.type == "error" else None)
        code = start(console, url, query="&lesson=fifteen-minutes&stop=1")
        display.goto(f"{url}/?class={code}&view=display&present=1")
        join(phone, f"{url}/?class={code}", "Bo")
        n = len(LESSON.stops)
        for i, k in enumerate([*range(n), *range(n - 2, -1, -1)]):
            if i:  # stop 1 is where the class opened; every later stop is a move of the console's
                forward = k > int(re.search(r"Stop (\d+)", console.locator(".st-key-lesson-title").inner_text())[1]) - 1
                for page in (console, display, phone):  # every screen has drawn the stop: the class looked at it
                    wait_idle(page)
                key = "PageDown" if forward else "PageUp"  # the bar's → / ← (a second, unnamed button is their badge)
                console.get_by_role("button", name=f"Shortcut {key}").click()
            for name, page in (("console", console), ("display", display), ("phone", phone)):
                _on_stop(page, k, name)
            assert display.evaluate(VISIBLE_CONTROLS_JS, list(CONTROLS)) == 0, k
            if LESSON.stops[k].page == "decode":  # every follower's heatmap has the console's rows (they had shrunk)
                # the console's own stage first at the stop's step: read earlier, its heatmap may not be drawn yet
                step = LESSON.stops[k].settings.get("step", 0)
                expect(console.get_by_text(re.compile(rf"decode steps {step} ·")).first).to_be_visible(timeout=60000)
                wait_rows(console, 1)
                rows = heatmap_rows(console)
                for page in (display, phone):
                    wait_rows(page, rows)
                    assert heatmap_rows(page) == rows, (k, heatmap_rows(page), rows)
            if k == n - 1:
                screenshot(display, "class-lesson-last-stop")
                display.reload()
                expect(display.get_by_text(re.compile(rf"Class {code} · \d+ joined"))).to_be_visible(timeout=60000)
                _on_stop(display, k, "display after F5")
        wait_idle(console)
        console.locator(".st-key-lesson-leave").get_by_role("button", name="close icon").click()
        for page in (display, phone):
            expect(page.locator(".st-key-lesson-title")).to_have_count(0, timeout=60000)
        assert not [e for e in errors if "delta path" in e.lower()], errors
