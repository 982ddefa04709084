"""A class pulse whose run never came is handed over again (issue 56: a student's page once kept the long document's
open question after the reveal, and no later pulse came to move it). The student's websocket is routed through
Playwright, which drops every pulse trigger the page sends in the 4 s after the teacher's Pause (longer than the
listener's HOLD_MS, so that the last pulse's trigger is lost too): the page must still show the Pause, from the
same pulse handed over again once no run came (``frontend/class_events.js``)."""

import re
import time

import pytest
from playwright.sync_api import expect

from bench.browser import browser_page, running_app, wait_idle
from tests.browser.test_class_mode import class_on

pytestmark = pytest.mark.browser

PULSE = b'"event":"pulse"'  # a class listener's trigger, as its component sends it (JSON inside the BackMsg)
LOST_S = 4.0  # every pulse trigger sent this long after the Pause is lost (> HOLD_MS, 3 s)


class Losing:
    """A page's streamlit websocket routed through Playwright (``page.route_web_socket(..., losing.route)``), both
    ways, but every pulse trigger the page sends before ``until`` (a ``time.monotonic()``) is dropped."""

    def __init__(self) -> None:
        self.until, self.dropped = 0.0, []

    def route(self, ws) -> None:
        server = ws.connect_to_server()

        def from_page(message) -> None:
            if isinstance(message, bytes) and PULSE in message and time.monotonic() < self.until:
                self.dropped.append(message)
                return
            server.send(message)

        ws.on_message(from_page)
        server.on_message(ws.send)


def test_a_pulse_whose_trigger_was_lost_is_handed_over_again():
    losing = Losing()
    with (
        running_app() as url,
        browser_page(1280, 800, fresh=True) as console,
        browser_page(1920, 1080, fresh=True) as display,
        browser_page(1280, 800, fresh=True) as ana,
    ):
        ana.route_web_socket(re.compile(r"_stcore/stream"), losing.route)
        class_on(url, console, display, (ana, "Ana"))
        wait_idle(ana)
        losing.until = time.monotonic() + LOST_S
        console.get_by_role("button", name="Pause class").click()
        expect(ana.locator(".st-key-class-paused")).to_be_visible(timeout=30000)
        assert losing.dropped  # the pause's pulse was lost, and handed over again
        console.get_by_role("button", name="Resume").click()
        expect(ana.locator(".st-key-class-paused")).to_have_count(0, timeout=30000)


def test_an_engine_pulse_whose_trigger_was_lost_is_sent_again():
    """Serve the class alone: every engine pulse's trigger in the 4 s after Send is lost (the request ends within
    them, and an idle engine sends no more): the batch still shows the engine's step (it had stayed on "served
    nothing yet", in CI), from the last pulse sent again (``frontend/serve_pulse.js``)."""
    losing = Losing()
    with running_app() as url, browser_page(1280, 800, fresh=True) as page:
        page.route_web_socket(re.compile(r"_stcore/stream"), losing.route)
        page.goto(f"{url}/serve_class")
        page.get_by_label("Your prompt").fill("Once upon a time")
        wait_idle(page)
        losing.until = time.monotonic() + LOST_S
        page.get_by_role("button", name="Send").click()
        expect(page.locator(".serve-root")).to_contain_text("Done", timeout=60000)
        expect(page.get_by_text(re.compile(r"^Step [\d,]+: "))).to_be_visible(timeout=30000)
        assert losing.dropped
