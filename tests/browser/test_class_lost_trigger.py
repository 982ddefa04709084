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


def test_a_pulse_whose_trigger_was_lost_is_handed_over_again():
    dropped: list[bytes] = []
    lost_until = [0.0]

    def through(ws) -> None:
        """The page's streamlit websocket, both ways, but the pulse triggers sent before ``lost_until``."""
        server = ws.connect_to_server()

        def from_page(message) -> None:
            if isinstance(message, bytes) and PULSE in message and time.monotonic() < lost_until[0]:
                dropped.append(message)
                return
            server.send(message)

        ws.on_message(from_page)
        server.on_message(ws.send)

    with (
        running_app() as url,
        browser_page(1280, 800, fresh=True) as console,
        browser_page(1920, 1080, fresh=True) as display,
        browser_page(1280, 800, fresh=True) as ana,
    ):
        ana.route_web_socket(re.compile(r"_stcore/stream"), through)
        class_on(url, console, display, (ana, "Ana"))
        wait_idle(ana)
        lost_until[0] = time.monotonic() + LOST_S
        console.get_by_role("button", name="Pause class").click()
        expect(ana.locator(".st-key-class-paused")).to_be_visible(timeout=30000)
        assert dropped  # the pause's pulse was lost, and handed over again
        console.get_by_role("button", name="Resume").click()
        expect(ana.locator(".st-key-class-paused")).to_have_count(0, timeout=30000)
