"""Class mode follows a page's settings in real browsers (issue 54): the console at 1280 × 800, the display at
1920 × 1080 and a student's laptop, each a context of its own (its own cookies). Every wait is on what a screen
shows. (The guided lesson's walk forward and back with followers is tests/app/test_class_follow_pages.py's.)"""

import re

import pytest
from playwright.sync_api import expect

from bench.browser import browser_page, running_app, screenshot, wait_idle
from tests.browser.test_class_mode import class_on

pytestmark = pytest.mark.browser

CONTROLS = ("stButton", "stSelectbox", "stSlider", "stRadio", "stNumberInput", "stCheckbox", "stTextArea")
VISIBLE_CONTROLS_JS = """(ids) => ids
  .flatMap((id) => [...document.querySelectorAll(`[data-testid=stMain] [data-testid=${id}]`)])
  .filter((e) => e.offsetParent !== null).length"""


def test_a_laptops_ruler_moves_when_the_teacher_sets_the_scale():
    """The teacher opens the ruler and types a scale of 0.25 (the ruler's controls rerun their part of the page
    only): the student's laptop and the display show the ruler at scale 0.25; the display shows no control (its
    buttons, sliders and boxes are hidden: it follows)."""
    with (
        running_app() as url,
        browser_page(1280, 800, fresh=True) as console,
        browser_page(1920, 1080, fresh=True) as display,
        browser_page(1280, 800, fresh=True) as ana,
    ):
        code = class_on(url, console, display, (ana, "Ana"))
        console.goto(f"{url}/quantize?class={code}")
        expect(console.get_by_role("heading", name="The quantization ruler")).to_be_visible(timeout=60000)
        wait_idle(console)
        box = console.get_by_label("s, exactly")
        box.fill("0.25")
        box.press("Tab")
        for page in (console, ana, display):
            expect(page.get_by_text(re.compile(r"scale s = 0\.25")).first).to_be_visible(timeout=60000)
        expect(ana.get_by_label("s, exactly")).to_have_value(re.compile(r"^0\.25"))
        assert display.evaluate(VISIBLE_CONTROLS_JS, list(CONTROLS)) == 0
        assert ana.evaluate(VISIBLE_CONTROLS_JS, list(CONTROLS)) > 0  # the laptop keeps its own controls
        screenshot(display, "class-display-ruler-followed")
