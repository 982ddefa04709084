"""Real browser: a presenter's clicker (PageDown / PageUp, → / ←) moves the lesson and steps the decode
stage whatever control was touched last (issue 37, item 1), no press is lost while a stop's page is still
running (item 2), and an opened speaker note closes when the stop changes (item 3)."""

import re

import pytest
from playwright.sync_api import expect

from bench.browser import browser_page, heatmap_rows, rerun, running_app, settled, wait_rows
from core.lesson.stops import load_shipped

pytestmark = pytest.mark.browser

LESSON = load_shipped("fifteen-minutes")
IDLE = '[data-test-script-state="notRunning"]'
TIMEOUT = 90000


@pytest.fixture(scope="module")
def url():
    with running_app() as u:
        yield u


def idle(page) -> None:
    """Until the page's script has ended (the app element says so)."""
    expect(page.locator(IDLE)).to_have_count(1, timeout=TIMEOUT)


def at_stop(page, k: int) -> None:
    """Stop ``k`` (from 1) in the bar, the bar shown (it shows once the clicker's keys work: on a fresh tab that
    can be seconds after the page's run has ended) and the page's run ended."""
    title = page.locator(".st-key-lesson-title")
    expect(title).to_contain_text(f"Stop {k} of {len(LESSON.stops)}", timeout=TIMEOUT)
    expect(title).to_be_visible(timeout=TIMEOUT)
    idle(page)


def open_stop(page, url: str, k: int, present: bool = False) -> None:
    page.goto(f"{url}/?lesson=fifteen-minutes&stop={k}" + ("&present=1&teacher=1" if present else "&teacher=1"))
    at_stop(page, k)
    page.mouse.wheel(0, 1)  # the teacher takes the page: the stop's scroll to its figure stops (lesson_scroll.js)


# ---- touching each kind of control, as a teacher would with the mouse ------------------------------


def touch_selectbox(page, scope):
    box, options = scope.locator('[data-testid="stSelectbox"]').first, page.get_by_role("option")
    for _ in range(3):  # a click while the stop's page still scrolls into place can land before the list opens
        box.click()
        try:
            expect(options.first).to_be_visible(timeout=10000)
            break
        except AssertionError:
            page.keyboard.press("Escape")
    options.nth(1).click()


def touch_slider(page, scope):
    thumb = scope.locator('[data-testid="stSlider"] input[type=range]').first.locator("xpath=../..")  # the thumb
    thumb.scroll_into_view_if_needed()
    box = thumb.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2 + 40, box["y"] + box["height"] / 2, steps=4)
    page.mouse.up()


def touch_radio(page, scope):
    radio = scope.locator('[data-testid="stRadio"]').first
    radio.locator("label").filter(has_not=page.locator("input:checked")).first.click()


def touch_number(page, scope):
    box = scope.locator('[data-testid="stNumberInput"] input').first
    box.click()
    value = box.input_value()
    box.fill(str(int(float(value.replace(",", ""))) + 1))
    box.press("Enter")


def touch_toggle(page, scope):
    scope.locator('[data-testid="stCheckbox"] label, [data-testid="stToggle"] label').first.click()


def touch_text(page, scope):
    box = scope.locator('[data-testid="stTextInput"] input').first
    box.click()
    box.press("End")
    box.type(" ")
    box.press("Enter")


TOUCH = {
    "selectbox": touch_selectbox,
    "slider": touch_slider,
    "radio": touch_radio,
    "number box": touch_number,
    "toggle": touch_toggle,
    "text box": touch_text,
}

# The stop each kind is touched on (its page has one) in the shipped lesson: never the decode stop, where
# → is Step (the plain decode page below has them all).
LESSON_STOP = {"selectbox": 5, "slider": 6, "radio": 7, "number box": 3, "toggle": 6, "text box": 5}


def main(page):
    return page.locator('[data-testid="stMain"]')


@pytest.mark.parametrize("kind", list(TOUCH))
def test_clicker_moves_the_lesson_after_a_control_is_touched(url, kind):
    """Touch the control, PageDown: the next stop; PageUp: back; touch it again, →: the next stop."""
    k = LESSON_STOP[kind]
    with browser_page(1280, 800) as page:
        open_stop(page, url, k)
        TOUCH[kind](page, main(page))
        idle(page)
        page.keyboard.press("PageDown")
        at_stop(page, k + 1)
        page.keyboard.press("PageUp")
        at_stop(page, k)
        page.mouse.wheel(0, 1)
        TOUCH[kind](page, main(page))
        idle(page)
        page.keyboard.press("ArrowRight")
        at_stop(page, k + 1)


SELECT_STOPS = [6]  # the ruler's stop, where the press was lost (the test above touches a select box on stop 5)


def test_clicker_moves_the_lesson_after_each_select_box_of_the_ruler_stop(url):
    """Issue 58, item 6 (PageDown stayed on stop 6 after a select box was touched): on the ruler's stop each select
    box in turn — an option chosen, then PageDown: the next stop; PageUp: back (one is outside the ruler's fragment,
    the chapters' case, and one inside, ties)."""
    touched = {}
    with browser_page(1280, 800) as page:
        for k in SELECT_STOPS:
            open_stop(page, url, k)
            boxes = main(page).locator('[data-testid="stSelectbox"]')
            touched[k] = 0
            for i in range(boxes.count()):
                box = boxes.nth(i)
                if box.locator("input").is_disabled():
                    continue
                touched[k] += 1
                box.scroll_into_view_if_needed()
                touch_selectbox(page, box.locator("xpath=.."))
                idle(page)
                page.keyboard.press("PageDown")
                try:
                    at_stop(page, k + 1)
                except AssertionError as err:
                    raise AssertionError(f"PageDown stayed on stop {k} after its select box {i + 1}") from err
                page.keyboard.press("PageUp")
                at_stop(page, k)
                page.mouse.wheel(0, 1)
    assert touched[6] >= 2, touched  # the ruler's stop: the chapters' cases and ties


def settings(page):
    """The decode page's Settings panel, opened (it may still be open from the last touch)."""
    panel = page.locator('[data-testid="stPopoverBody"]')
    if not panel.is_visible():
        page.get_by_role("button", name="Settings").click()
    expect(panel).to_be_visible(timeout=TIMEOUT)
    return panel


# On the decode page: where each kind of control is (the prompt box is a text area: Escape hands it back).
DECODE_SCOPE = {
    "selectbox": main,
    "slider": settings,
    "radio": settings,
    "number box": settings,
    "toggle": main,
}


def test_clicker_steps_the_decode_page_after_each_kind_of_control_is_touched(url):
    """Plain decode page, prefilled once: for each kind of control in turn, touch it, PageDown steps; touch it
    again, → steps (one page for the five kinds: a page load and a Prefill cost Chromium ~6 s of CPU each)."""
    with browser_page(1280, 800) as page:
        page.goto(url)
        prefill = page.get_by_role("button", name="Prefill")
        expect(prefill).to_be_visible(timeout=TIMEOUT)  # a fresh server's first page imports torch
        prefill.click()
        page.wait_for_function("() => !!document.querySelector('.attn-root[data-rows]')", timeout=TIMEOUT)
        idle(page)
        for kind, scope in DECODE_SCOPE.items():
            for key in ("PageDown", "ArrowRight"):
                rows = heatmap_rows(page)
                TOUCH[kind](page, scope(page))
                idle(page)
                page.keyboard.press(key)
                try:
                    wait_rows(page, rows + 1, timeout_ms=TIMEOUT)
                except Exception as err:
                    raise AssertionError(f"{key} did not step after the {kind} was touched") from err
                idle(page)


def prompt(page):
    """The decode page's prompt box (a text area), its expander opened (it closes while a request runs)."""
    box = page.get_by_role("textbox", name="Prompt")
    if not box.is_visible():
        with rerun(page):
            page.locator("summary").filter(has_text="Prompt").first.click()  # not "Two speeds… this prompt's…"
    expect(box).to_be_visible(timeout=TIMEOUT)
    return box


def type_in_prompt(page, rows: int) -> None:
    """Type in the prompt box as a teacher would: the keys stay with the box (letters, → and ← move the caret; none
    steps the stage or prefills). The caller commits the text."""
    page.wait_for_function("() => window.__clickerQueue() === 0", timeout=TIMEOUT)  # the last press is done
    box = prompt(page)
    box.click()
    box.press("Control+End")  # the end of the text (End: of its line)
    sent = page.evaluate("() => window.__wsSent")
    box.press_sequentially(" pk")
    for key in ("ArrowLeft", "ArrowRight", "ArrowRight"):
        box.press(key)
    settled(page)
    assert page.evaluate("() => window.__wsSent") == sent  # no key sent a Step (nor P, K) to the server
    assert page.evaluate("() => window.__clickerQueue()") == 0  # nor queued one
    assert heatmap_rows(page) == rows
    assert box.input_value().endswith(" pk")


# How a teacher ends typing in the prompt box: Ctrl+Enter applies a text area's text (streamlit's "Press Ctrl+Enter
# to apply"; a plain Enter is a new line), Escape leaves the box (its text applied as it leaves).
COMMIT = {"Ctrl+Enter": "Control+Enter", "Escape": "Escape"}


@pytest.mark.parametrize("commit", list(COMMIT))
def test_clicker_steps_the_decode_page_after_typing_in_the_prompt(url, commit):
    """Plain decode page, prefilled: type in the prompt box (→ and PageDown stay with the box), commit it, and →
    steps; type again, commit, and PageDown steps (the clicker's "next" on this page)."""
    with browser_page(1280, 800) as page:
        page.goto(url)
        prefill = page.get_by_role("button", name="Prefill")
        expect(prefill).to_be_visible(timeout=TIMEOUT)
        prefill.click()
        page.wait_for_function("() => !!document.querySelector('.attn-root[data-rows]')", timeout=TIMEOUT)
        idle(page)
        for key in ("ArrowRight", "PageDown"):
            rows = heatmap_rows(page)
            type_in_prompt(page, rows)
            with rerun(page):
                page.keyboard.press(COMMIT[commit])  # the new text reaches the server
            page.keyboard.press(key)
            wait_rows(page, rows + 1, timeout_ms=TIMEOUT)
            idle(page)
        assert page.get_by_role("textbox", name="Prompt").input_value().endswith(" pk pk")


@pytest.mark.parametrize("commit", list(COMMIT))
def test_clicker_after_typing_in_the_prompt_on_the_lesson_decode_stop(url, commit):
    """Lesson mode, the decode stop: type in the prompt box, commit it, and → steps (the stop stays); type again,
    commit, and PageDown goes to the next stop; back on the decode stop, ← goes back a stop (it did nothing there, so
    an arrow-key clicker could not go back)."""
    k = next(i for i, s in enumerate(LESSON.stops, 1) if s.page == "decode")
    with browser_page(1280, 800) as page:
        open_stop(page, url, k)
        page.wait_for_function("() => !!document.querySelector('.attn-root[data-rows]')", timeout=TIMEOUT)
        rows = heatmap_rows(page)
        type_in_prompt(page, rows)
        with rerun(page):
            page.keyboard.press(COMMIT[commit])
        page.keyboard.press("ArrowRight")
        wait_rows(page, rows + 1, timeout_ms=TIMEOUT)
        at_stop(page, k)
        type_in_prompt(page, rows + 1)
        with rerun(page):
            page.keyboard.press(COMMIT[commit])
        page.keyboard.press("PageDown")
        at_stop(page, k + 1)
        page.keyboard.press("PageUp")
        at_stop(page, k)
        page.keyboard.press("ArrowLeft")
        at_stop(page, k - 1)


def test_a_press_as_soon_as_the_bar_appears_is_not_lost(url):
    """At 1920×1080 presenting: PageDown once as soon as stop 3's bar appears (its page still running) opens
    stop 4; PageDown once as soon as stop 4's bar appears opens stop 5."""
    with browser_page(1920, 1080) as page:
        page.goto(f"{url}/?lesson=fifteen-minutes&stop=3&present=1")
        title = page.locator(".st-key-lesson-title")
        expect(title).to_contain_text("Stop 3 of 9", timeout=TIMEOUT)
        expect(title).to_be_visible(timeout=TIMEOUT)
        page.keyboard.press("PageDown")
        expect(title).to_contain_text("Stop 4 of 9", timeout=TIMEOUT)
        expect(title).to_be_visible(timeout=TIMEOUT)
        page.keyboard.press("PageDown")
        expect(title).to_contain_text("Stop 5 of 9", timeout=TIMEOUT)
        page.wait_for_function("() => window.__clickerQueue() === 0", timeout=TIMEOUT)  # every press done
        idle(page)
        expect(title).to_contain_text("Stop 5 of 9")  # and no further: each press moved once


def test_quick_presses_each_move_one_stop(url):
    """Two PageDowns in quick succession from stop 1 go two stops on (through the decode stop, whose page
    prefills and replays 11 steps meanwhile); a PageDown the moment stop 3's title shows, its page still
    running, goes one more; PageUp one back; and nothing moves after that."""
    with browser_page(1920, 1080) as page:
        page.goto(f"{url}/?lesson=fifteen-minutes&stop=1&present=1&teacher=1")
        title = page.locator(".st-key-lesson-title")
        at_stop(page, 1)
        page.keyboard.press("PageDown")
        page.keyboard.press("PageDown")
        expect(title).to_contain_text("Stop 3 of 9", timeout=TIMEOUT)
        page.keyboard.press("PageDown")
        expect(title).to_contain_text("Stop 4 of 9", timeout=TIMEOUT)
        page.keyboard.press("PageUp")
        at_stop(page, 3)
        page.wait_for_function("() => window.__clickerQueue() === 0", timeout=TIMEOUT)  # every press done
        idle(page)
        expect(title).to_contain_text("Stop 3 of 9")


def test_an_open_note_closes_when_the_stop_changes(url):
    """Teacher view at 1920×1080: the note opened on stop 3 shows its text; after PageDown, stop 4's note
    (its answers: 1 GiB, 4 GiB) is nowhere on screen until the teacher opens it there."""
    with browser_page(1920, 1080) as page:
        open_stop(page, url, 3, present=True)
        page.get_by_role("button", name=re.compile("Note")).click()
        expect(page.get_by_text(LESSON.stops[2].note[:40])).to_be_visible(timeout=TIMEOUT)
        page.keyboard.press("PageDown")
        at_stop(page, 4)
        expect(page.get_by_text(LESSON.stops[3].note[:40])).to_have_count(0)
        expect(page.get_by_text(LESSON.stops[2].note[:40])).to_have_count(0)
        page.get_by_role("button", name=re.compile("Note")).click()
        expect(page.get_by_text(LESSON.stops[3].note[:40])).to_be_visible(timeout=TIMEOUT)
