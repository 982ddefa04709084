"""Serve the class in real browsers (issue 56): a student alone sends a request and watches its tokens and numbers
arrive, then the batch with simulated classmates; in a class, a student's request reaches the one engine and the
console and the display draw it, never its text. Every wait is on what a screen shows."""

import re

import pytest
from playwright.sync_api import expect

from bench.browser import browser_page, open_from_menu, running_app, screenshot, wait_idle
from tests.browser.test_class_mode import class_browsers, class_on
from ui.classroom.serve_predict import EXPLAIN, OPTIONS, TEXT

pytestmark = pytest.mark.browser

DONE = "Done: press Send again"
NUMBERS = re.compile(r"First token \(TTFT\) [\d.]+ ms · last gap [\d.]+ ms · median gap \(ITL p50\) [\d.]+ ms")


def test_a_student_alone_streams_a_request_and_sees_the_batch():
    with running_app() as url, browser_page(1280, 800, fresh=True) as page:
        page.goto(f"{url}/serve_class")
        page.get_by_label("Your prompt").fill("Once upon a time")
        page.get_by_role("button", name="Send").click()
        box = page.locator(".serve-root")
        expect(box).to_contain_text(DONE, timeout=60000)
        expect(box.locator(".serve-numbers")).to_have_text(re.compile(NUMBERS.pattern + r".* of 24 tokens"))
        assert len(box.locator(".serve-text").inner_text().strip()) > 0
        expect(page.get_by_text(re.compile(r"^Step [\d,]+: "))).to_be_visible(timeout=30000)
        page.get_by_role("button", name="Add classmates").click()
        expect(page.get_by_role("cell", name="Classmate 4", exact=True).first).to_be_visible(timeout=60000)
        screenshot(page, "serve-class-alone")
        _a_request_that_ends_while_the_page_is_elsewhere(page)


def _a_request_that_ends_while_the_page_is_elsewhere(page) -> None:
    """Send, then the ruler from the menu while the request's stream is held back; the stream is let go and the
    request ends there (the run its end asked for runs the ruler). Back on Serve the class, Send is enabled: the
    session was told of the end again (it had stayed disabled: "Send" greyed out until a reload)."""
    held = []

    def hold(route):
        held.append(route)

    page.route("**/explainer/serve/stream*", hold)
    page.get_by_role("button", name="Send").click()
    page.wait_for_function("() => window.__explainerServe && window.__explainerServe.source", timeout=60000)
    open_from_menu(page, "Quantization", "The quantization ruler")
    assert len(held) == 1
    held[0].continue_()
    page.unroute("**/explainer/serve/stream*")
    page.wait_for_function(f"() => window.__explainerServe.view?.status?.startsWith('{DONE}')", timeout=60000)
    wait_idle(page)
    open_from_menu(page, "Decode", "Serve the class")
    expect(page.get_by_role("button", name="Send")).to_be_enabled(timeout=30000)
    expect(page.locator(".serve-root")).to_contain_text(DONE)


def test_a_class_s_requests_reach_one_engine_and_the_display_shows_no_text():
    """The console opens Serve the class; the student's laptop follows; the student's request streams on the
    student's page, and the console's and the display's batch name it ("Student 1") without its text."""
    with (
        running_app() as url,
        browser_page(1280, 800, fresh=True) as console,
        browser_page(1920, 1080, fresh=True) as display,
        browser_page(1280, 800, fresh=True) as ana,
    ):
        code = class_on(url, console, display, (ana, "Ana"))
        wait_idle(console)
        console.goto(f"{url}/serve_class?class={code}")
        for page in (console, display, ana):
            expect(page.get_by_role("heading", name="Serve the class")).to_be_visible(timeout=60000)
        expect(display.get_by_role("button", name="Send")).to_have_count(0)
        secret = "Zanzibar marmalade"
        ana.get_by_label("Your prompt").fill(secret)
        ana.get_by_role("button", name="Send").click()
        expect(ana.locator(".serve-root")).to_contain_text(DONE, timeout=60000)
        for page in (console, display):
            expect(page.get_by_role("cell", name="Student 1", exact=True).first).to_be_visible(timeout=60000)
            assert secret not in page.locator("body").inner_text()
        screenshot(display, "serve-class-display")


def test_the_class_predicts_the_long_document_and_the_reveal_sends_it():
    """Predict first on Serve the class: the console asks what a long document will do to everyone's stream; a
    laptop and a phone answer; the reveal gives the answer for the engine's setting (chunked prefill on, the
    default: "slows a little") and sends the document, which the display's batch then draws."""
    with class_browsers() as (url, console, display, ana, bo):
        code = class_on(url, console, display, (ana, "Ana"), (bo, "Bo"))
        wait_idle(console)
        console.goto(f"{url}/serve_class?class={code}")
        for page in (console, display, ana, bo):
            expect(page.get_by_role("heading", name="Serve the class")).to_be_visible(timeout=60000)
        console.get_by_text("Ask the class first").click()
        console.get_by_role("button", name="Ask about a long document").click()
        for page, pick in ((ana, OPTIONS[0]), (bo, OPTIONS[1])):
            expect(page.get_by_text(TEXT)).to_be_visible(timeout=60000)
            page.get_by_role("button", name=pick).click()
        expect(console.get_by_text(re.compile(r"2 of 2 answered"))).to_be_visible(timeout=60000)
        screenshot(display, "serve-class-question-display")
        console.get_by_role("button", name="Reveal and send the document").click()
        # every page shows the reveal: the phone, and the display (each once kept the open question, in CI: a pulse
        # whose run never came is now handed over again, tests/browser/test_class_lost_trigger.py)
        expect(bo.get_by_text(EXPLAIN[True][:40])).to_be_visible(timeout=60000)
        expect(display.locator(".st-key-class-question")).to_contain_text(re.compile(r"\d of 2 right"), timeout=60000)
        expect(display.get_by_role("cell", name="Long document", exact=True).first).to_be_visible(timeout=60000)
        expect(console.get_by_text(re.compile(r"1 of 2 right"))).to_be_visible(timeout=60000)
        screenshot(console, "serve-class-question-console")
        screenshot(display, "serve-class-question-revealed")
        screenshot(bo, "serve-class-question-phone")
