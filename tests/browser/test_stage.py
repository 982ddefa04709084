"""Real browser: the decode stage fits one screen, asks before it reveals, and a Step sends one row."""

import urllib.parse

import pytest

from bench.browser import (
    browser_page,
    heatmap_rows,
    rerun,
    running_app,
    screenshot,
    wait_app_style,
    wait_idle,
    wait_rows,
    wait_until,
)
from core.decode import settings as decode_settings
from core.model.shipped import load_shipped_tokenizer
from core.model.tokenizer import decode, encode

pytestmark = pytest.mark.browser

# The stage's parts: name → (CSS selector, text the element must contain: the first such element is measured).
LAPTOP = {
    "Prefill": ("button", "Prefill"),
    "Step": ("button", "Step"),
    "heatmap": (".attn-root", ""),
    "bars": (".bars-root", ""),
}
PRESENTER = {
    **LAPTOP,
    "Play": ("button", "Play"),
    "work counter": (".panel-counters", ""),
    "badge": (".panel-badge", ""),
    "KV bytes": (".panel-kv", ""),
}
_TOK = load_shipped_tokenizer()
# Exactly 249 tokens: one Step brings the cache to 250 of the 256-position window (no end token can
# intervene in one step).
LONG_PROMPT = decode(_TOK, encode(_TOK, (decode_settings.DEFAULT_PROMPT + " ") * 5)[:249])


@pytest.fixture(scope="module")
def url():
    with running_app() as u:
        yield u


# Names of the elements not wholly inside the viewport (or missing), with their boxes.
OUTSIDE_JS = """(boxes) => Object.entries(boxes).map(([name, [sel, text]]) => {
  const e = [...document.querySelectorAll(sel)].find((e) => e.textContent.toLowerCase().includes(text.toLowerCase()));
  const r = e && e.getBoundingClientRect(), b = r && {x: r.x, y: r.y, width: r.width, height: r.height};
  const shown = b && (b.width > 0 || b.height > 0);
  return shown && b.y >= 0 && b.x >= 0 && b.y + b.height <= innerHeight && b.x + b.width <= innerWidth
    ? null : name + ' ' + JSON.stringify(b);
}).filter((n) => n)"""


def _all_in_view(page, boxes: dict, what: str) -> None:
    """Every element of ``boxes`` wholly inside the viewport, once the stage has drawn (an auto-retrying
    assertion: the components draw after the run that sent their data)."""
    wait_until(page, OUTSIDE_JS, "out => out.length === 0", boxes, what=f"every stage element in view ({what})")


# The smallest font of the stage panel's text: the counters' labels and ratio, the badge, the KV lines.
PANEL_TEXT_PX_JS = """() => Math.min(...[...document.querySelectorAll(
  '.panel-root .metric-label, .panel-root .metric-delta, .panel-badge, .panel-kv .kv-formula, .panel-kv .kv-shelf')]
  .map(e => parseFloat(getComputedStyle(e).fontSize)))"""


def _steps(page, n: int) -> None:
    for _ in range(n):
        rows = heatmap_rows(page)
        page.keyboard.press("ArrowRight")
        wait_rows(page, rows + 1)


@pytest.mark.parametrize("width,height,query,boxes", [(1920, 1080, "present=1", PRESENTER), (1280, 800, "", LAPTOP)])
def test_the_stage_fits_one_screen_at_step_0_10_and_near_the_window(url, width, height, query, boxes):
    """After Prefill, after 10 Steps and with 250 positions cached, every stage element is in view. Before
    Prefill, with the prompt box open, the layer and head boxes show their whole choice (a teacher's review:
    "Head 0 (KV head (" at 1920 presenting, and at 1280 too) and, on a projector, the title takes one line
    (at 1280 it wraps beside the taller prompt box: the box keeps its width, test_browser_decode)."""
    with browser_page(width, height) as page:
        page.goto(f"{url}/?{query}")
        page.locator(".st-key-decode-head input").wait_for()
        wait_app_style(page)  # presenter mode's sizes
        wait_idle(page)
        wait_until(page, HEADER_FITS_JS, f"h => h.cut.length === 0 && (h.titleLines === 1 || {str(not query).lower()})")
        page.get_by_role("button", name="Prefill").first.click()
        wait_rows(page, 51)
        _all_in_view(page, boxes, "step 0")
        _steps(page, 10)
        wait_idle(page)
        _all_in_view(page, boxes, "step 10")
        if query:  # the panel's labels on a projector (body text 21 px): 15–16 px before, now at least 18
            assert page.evaluate(PANEL_TEXT_PX_JS) >= 18
        screenshot(page, f"stage-step10-{width}x{height}")
        page.goto(f"{url}/?{query}&" + urllib.parse.urlencode({"prompt": LONG_PROMPT, "step": "1"}))
        wait_rows(page, 250, timeout_ms=60000)
        wait_idle(page)
        _all_in_view(page, boxes, "near the window")
        assert page.locator(".attn-desc").inner_text().endswith("250 positions cached.")
        screenshot(page, f"stage-250-{width}x{height}")


def test_the_stage_still_fits_after_another_page_and_back(url):
    """Prefill, three Steps, the bill page from the menu, then back: the request is still there, the
    prompt box stays closed (streamlit dropped its state while the other page ran, and it came back
    open, pushing the KV line off the projected screen) and every stage element is in view."""
    with browser_page(1920, 1080) as page:
        page.goto(f"{url}/?present=1")
        page.get_by_role("button", name="Prefill").first.click()
        wait_rows(page, 51)
        _steps(page, 3)
        for section, title in (("Cost & memory", "The bill per token"), ("Decode", "Prefill & decode")):
            page.get_by_text(section, exact=True).first.click()
            page.get_by_text(title).first.click()
        wait_rows(page, 54)
        wait_idle(page)
        assert (
            page.get_by_role("textbox", name="Prompt").count() == 0
            or not page.get_by_role("textbox", name="Prompt").first.is_visible()
        )
        _all_in_view(page, PRESENTER, "back on the decode page")
        screenshot(page, "stage-back-from-another-page-1920x1080")


def test_predict_with_keys_then_reveal(url):
    """Presenter mode, predict on: P prefills and asks; 3 picks; → reveals one row with the answer
    marked; → asks the next question without adding a row."""
    with browser_page(1920, 1080) as page:
        page.goto(f"{url}/?present=1&predict=1")
        page.get_by_role("button", name="Prefill").first.wait_for()
        page.keyboard.press("p")
        page.locator(".st-key-stage\\.answer\\.0, .st-key-stage-answer-0").first.wait_for(timeout=30000)
        assert "Which token will the model choose after it?" in page.locator(".st-key-stage-question").inner_text()
        wait_rows(page, 51)
        rows = heatmap_rows(page)
        with rerun(page):
            page.keyboard.press("3")
        _all_in_view(page, PRESENTER, "asked")  # the question beside the stage: still one screen
        page.keyboard.press("ArrowRight")
        wait_rows(page, rows + 1)
        panel = page.locator(".st-key-stage-question")
        panel.get_by_text("→ asks the next question").wait_for()
        assert "Predictions so far" in panel.inner_text() and panel.locator("button:disabled").count() == 5
        wait_idle(page)
        _all_in_view(page, PRESENTER, "revealed")  # … and with the revealed answer and its explanation
        assert page.evaluate(PANEL_TEXT_PX_JS) >= 16  # the compact panel: 18 px, its smallest text 0.9 of it (was 15.3)
        screenshot(page, "stage-predict-revealed")
        page.keyboard.press("ArrowRight")
        panel.get_by_text("How many will it hold after this step?", exact=False).wait_for()
        assert heatmap_rows(page) == rows + 1
        for k in range(4):  # every other kind of question, asked and revealed, also fits the screen
            with rerun(page):
                page.keyboard.press("2")
            _all_in_view(page, PRESENTER, f"question {k} asked: {panel.inner_text()}")
            page.keyboard.press("ArrowRight")
            wait_rows(page, rows + 2 + k)
            panel.get_by_text("→ asks the next question").wait_for()
            wait_idle(page)
            _all_in_view(page, PRESENTER, f"question {k} revealed: {panel.inner_text()}")
            with rerun(page):
                page.keyboard.press("ArrowRight")


# Under a lesson's bar: the room between the bar and the screen's bottom, and the height of the stage from its
# buttons (Prefill) to the lowest of its parts — wherever the page is scrolled.
STAGE_SPAN_JS = """(sels) => {
  const bar = document.querySelector('.st-key-lesson-bar').getBoundingClientRect().bottom;
  const top = [...document.querySelectorAll('button')].find((b) => b.innerText.startsWith('Prefill'))
    .getBoundingClientRect().top;
  const bottoms = sels.map((s) => document.querySelector(s)).filter((e) => e)
    .map((e) => e.getBoundingClientRect().bottom);
  return {room: window.innerHeight - bar, span: Math.max(...bottoms) - top, found: bottoms.length};
}"""


def test_a_lesson_stop_with_predict_first_fits_a_laptop(url):
    """1280 × 800 under a lesson's bar (the decode stop, step 11), Predict first on, asked and revealed: the
    stage from its Prefill button to the heatmap's plot, the bars, the work counter, the badge and the KV line
    fits the room under the bar (with the question beside the stage the KV line ended ~90 px below the
    screen). The heatmap's two-line description under it may not."""
    parts = [".attn-plot", *[PRESENTER[k][0] for k in ("bars", "work counter", "badge", "KV bytes")]]
    with browser_page(1280, 800) as page:
        page.goto(f"{url}/?lesson=fifteen-minutes&stop=2")
        page.locator(".st-key-lesson-bar").wait_for(timeout=60000)
        wait_rows(page, 62, timeout_ms=60000)
        page.get_by_text("Predict first").first.click()
        page.locator(".st-key-stage-question button").first.wait_for(timeout=30000)
        wait_idle(page)
        fits = f"m => m.found === {len(parts)} && m.span <= m.room"
        wait_until(page, STAGE_SPAN_JS, fits, parts, what="the stage fits under the bar, asked")
        page.keyboard.press("3")
        page.locator(".st-key-stage-question").get_by_text("Your pick: 3.").wait_for(timeout=30000)
        page.keyboard.press("ArrowRight")
        wait_rows(page, 63)
        page.locator(".st-key-stage-question").get_by_text("→ asks the next question").wait_for()
        wait_idle(page)
        wait_until(page, STAGE_SPAN_JS, fits, parts, what="the stage fits under the bar, revealed")
        screenshot(page, "stage-lesson-predict-revealed-1280x800")


def _bytes_of_one_step(page) -> int:
    frames = []
    page.on("websocket", lambda ws: None)
    rows = heatmap_rows(page)
    handler = lambda f: frames.append(len(f) if f else 0)  # noqa: E731
    page.context.pages[0]  # the page's own websocket is already open: listen on it
    page._ws.on("framereceived", handler)
    with rerun(page):  # the run's last message ("finished") comes after the rest of its messages
        page.keyboard.press("ArrowRight")
    wait_rows(page, rows + 1)
    page._ws.remove_listener("framereceived", handler)
    return sum(frames)


def test_a_step_sends_one_row_bytes_grow_linearly(url):
    """Bytes received for one Step at ~56 and ~213 positions: the difference is a few bytes per
    cached position (linear), and at ~213 positions far below a tenth of the old whole-matrix
    Step (709 kB at ~200)."""
    sizes = {}
    for prompt, steps in ((decode_settings.DEFAULT_PROMPT, 4), (decode(_TOK, encode(_TOK, LONG_PROMPT)[:208]), 4)):
        with browser_page(1280, 800) as page:
            sockets = []
            page.on("websocket", lambda ws, s=sockets: s.append(ws))
            page.goto(f"{url}/?" + urllib.parse.urlencode({"prompt": prompt, "step": str(steps)}))
            page.wait_for_function(
                "() => document.querySelector('.attn-root') && document.querySelector('.attn-root').dataset.rows",
                timeout=60000,
            )
            wait_idle(page)  # the link's run has sent all its messages
            page._ws = sockets[-1]
            n = heatmap_rows(page)
            sizes[n + 1] = _bytes_of_one_step(page)
    (n1, b1), (n2, b2) = sorted(sizes.items())
    per_position = (b2 - b1) / (n2 - n1)
    assert 0 < per_position < 25, sizes  # one more share (≤ 5 characters) and one more label per position
    assert b2 < 709_000 / 10, sizes


def test_keys_work_after_clicking_the_predict_switch(url):
    """A teacher clicks "Predict first" with the mouse, then uses the keys: 1 picks, → reveals (one more
    row). The click left the focus in the switch's checkbox, where shortcut keys are ignored; the
    stage hands it to Step."""
    with browser_page(1920, 1080) as page:
        page.goto(f"{url}/?present=1")
        page.get_by_role("button", name="Prefill").first.click()
        wait_rows(page, 51)
        page.get_by_text("Predict first").first.click()
        page.locator(".st-key-stage-question button").first.wait_for(timeout=30000)
        wait_idle(page)
        rows = heatmap_rows(page)
        page.keyboard.press("1")
        page.locator(".st-key-stage-question").get_by_text("Your pick: 1.").wait_for(timeout=30000)
        page.keyboard.press("ArrowRight")
        wait_rows(page, rows + 1)
        page.locator(".st-key-stage-question").get_by_text("→ asks the next question").wait_for()


def test_keys_work_after_clicking_the_tables_switch(url):
    """The same for the *Tables* switch, which does not redraw the stage's panel: after a click on it,
    → still steps (one more row) and the two tables are below the stage."""
    with browser_page(1280, 800) as page:
        page.goto(url)
        page.get_by_role("button", name="Prefill").first.click()
        wait_rows(page, 51)
        page.get_by_text("Tables", exact=True).first.click()
        page.get_by_test_id("stDataFrame").nth(1).wait_for(timeout=30000)
        wait_idle(page)
        page.keyboard.press("ArrowRight")
        wait_rows(page, 52)


# Perpendicular distance between neighbouring x tick labels (slanted at 60°), and their font size.
TICK_ROOM_JS = """() => {
  const t = [...document.querySelectorAll('.attn-root .xtick text')];
  const xs = t.map((e) => e.getBoundingClientRect().right).sort((a, b) => a - b);
  let room = Infinity;
  for (let i = 1; i < xs.length; i++) room = Math.min(room, (xs[i] - xs[i - 1]) * Math.sin(Math.PI / 3));
  return {room, font: parseFloat(getComputedStyle(t[0]).fontSize)};
}"""


def test_key_labels_never_overlap_while_stepping(url):
    """Presenter size, 20 greedy Steps from the default prompt: every pair of neighbouring key labels
    is at least a font size apart. At step 16 the newest key (66) sits next to the most-attended one
    (65), and the two labels were drawn 10 px apart, one over the other; the newest now gives way."""
    with browser_page(1920, 1080) as page:
        page.goto(f"{url}/?present=1")
        page.get_by_role("button", name="Prefill").first.click()
        wait_rows(page, 51)
        for step in range(21):
            wait_until(page, TICK_ROOM_JS, "m => m.room >= m.font", what=f"labels a font size apart at step {step}")
            _steps(page, 1)


TEXT_LINE = "[data-testid='stHorizontalBlock']:has(.st-key-stage-step) [data-testid='stCode'] pre"


def test_the_text_line_keeps_the_chosen_token_in_view_with_the_sidebar_open(url):
    """With the sidebar open on a 1280×800 laptop the stage is ~340 px narrower and the text line no
    longer fits: its start is cut, never its end, where the chosen token «…» is (it was cut off)."""
    n = len(encode(_TOK, decode_settings.DEFAULT_PROMPT))
    with browser_page(1280, 800) as page:
        page.goto(url)
        page.get_by_test_id("stExpandSidebarButton").click()
        page.get_by_test_id("stSidebar").get_by_text("Presenter mode").wait_for(timeout=30000)
        wait_idle(page)
        # Before Prefill, the prompt box open, beside the opened sidebar (its slide-in narrows the page). With the
        # prompt box open too, the title takes a row of its own: beside it the layer box read "Layer", the head box
        # "Head 0 (KV h" and Settings "S…" (a student's laptop).
        fits = "h => h.cut.length === 0 && h.titleLines === 1 && !h.settingsCut"
        wait_until(page, HEADER_FITS_JS, fits, what="the header fits beside the open sidebar, prompt box open")
        screenshot(page, "stage-sidebar-open-prompt-open-1280x800")
        page.get_by_role("button", name="Prefill").click()
        wait_rows(page, n)
        # The heatmap's rows can arrive before the text line is drawn (CI, a loaded machine): wait for the line.
        wait_idle(page)
        page.wait_for_function(f'() => document.querySelector("{TEXT_LINE} span")', timeout=30000)
        line = page.evaluate(
            f"""() => {{ const pre = document.querySelector("{TEXT_LINE}"), box = pre.getBoundingClientRect();
            const text = pre.querySelector('span').getBoundingClientRect();
            return {{overflows: text.width > box.width, right: text.right, boxRight: box.right,
                     left: text.left, boxLeft: box.left, text: pre.textContent}}; }}"""
        )
        header = page.evaluate(HEADER_FITS_JS)
        screenshot(page, "stage-sidebar-open-1280x800")
        assert line["overflows"] and line["text"].endswith("»"), line
        assert line["right"] <= line["boxRight"] + 1 and line["left"] < line["boxLeft"], line
        # The header above it: the title on one line and the layer and head boxes showing their whole choice
        # ("Layer", "Head 0 (KV he" before, with the title wrapped to two lines).
        assert header["titleLines"] == 1 and header["cut"] == [], header


# The decode page's title: how many lines it takes; the layer and head boxes: any whose value is cut.
HEADER_FITS_JS = """() => {
  const boxes = ['decode-layer', 'decode-head'].map(k => document.querySelector('.st-key-' + k + ' input'));
  if (boxes.some(v => !v)) return {titleLines: 0, cut: ['(not drawn yet)'], settingsCut: true};  // mid-rerun: wait
  const cut = boxes.filter(v => v.scrollWidth > v.clientWidth + 1).map(v => v.value);
  const settings = [...document.querySelectorAll('[data-testid=stPopover] button p')]
    .find(p => /Setti/.test(p.textContent));
  return {titleLines: document.querySelector('h1 [data-heading-text]').getClientRects().length, cut,
          settingsCut: !settings || settings.scrollWidth > settings.clientWidth + 1};
}"""


# Predict first beside the stage: the next-token plot's height, its five label rows' spacing against the labels'
# height, and the KV line's bottom against the room under the lesson's bar (the screen without a lesson) measured
# from the stage's top (its Prefill button), wherever the page is scrolled.
BARS_ROOM_JS = """() => {
  const svg = document.querySelector('.bars-root .main-svg'), kv = document.querySelector('.panel-kv');
  const ticks = [...document.querySelectorAll('.bars-root .ytick text')].map((t) => t.getBoundingClientRect());
  const prefill = [...document.querySelectorAll('button')].find((b) => b.innerText.startsWith('Prefill'));
  if (!svg || !kv || !prefill || ticks.length < 5) return null;
  const tops = ticks.map((b) => b.top).sort((a, b) => a - b);
  const bar = document.querySelector('.st-key-lesson-bar');
  return {plot: svg.getBoundingClientRect().height, gap: Math.min(...tops.slice(1).map((t, i) => t - tops[i])),
          label: Math.max(...ticks.map((b) => b.height)),
          span: kv.getBoundingClientRect().bottom - prefill.getBoundingClientRect().top,
          room: innerHeight - (bar ? bar.getBoundingClientRect().bottom : prefill.getBoundingClientRect().top)};
}"""
BARS_FIT = "m => m !== null && m.plot >= 190 && m.gap >= 1.15 * m.label && m.span <= m.room"


@pytest.mark.parametrize("lesson", [False, True], ids=["decode page", "lesson stop"])
def test_predict_first_bars_have_room_on_the_projector(url, lesson):
    """1920 × 1080 presenting, Predict first, every kind of question asked and revealed: the five next-token bars get
    a plot of at least 190 px (150 px ran their labels into each other: rows 17 px apart for 21-px labels), each
    label a row of its own, and the KV line stays on the screen (under the lesson's bar on the decode stop)."""
    with browser_page(1920, 1080) as page:
        if lesson:
            page.goto(f"{url}/?lesson=fifteen-minutes&stop=2&present=1&teacher=1")
            page.locator(".st-key-lesson-bar").wait_for(timeout=90000)
            wait_rows(page, 62, timeout_ms=90000)
            wait_app_style(page)
            wait_idle(page)
            page.get_by_text("Predict first").first.click()
        else:
            page.goto(f"{url}/?present=1&predict=1")
            page.get_by_role("button", name="Prefill").first.wait_for(timeout=90000)
            wait_app_style(page)
            page.keyboard.press("p")
        panel = page.locator(".st-key-stage-question")
        panel.locator("button").first.wait_for(timeout=60000)
        wait_idle(page)
        for k in range(5):
            rows = heatmap_rows(page)
            with rerun(page):
                page.keyboard.press("2")
            wait_until(page, BARS_ROOM_JS, BARS_FIT, what=f"bars with room, question {k} asked: {panel.inner_text()}")
            page.keyboard.press("ArrowRight")
            wait_rows(page, rows + 1)
            panel.get_by_text("→ asks the next question").wait_for()
            wait_idle(page)
            said = panel.inner_text()
            wait_until(page, BARS_ROOM_JS, BARS_FIT, what=f"bars with room, question {k} revealed: {said}")
            if k == 1:
                screenshot(page, f"stage-predict-bars-{'lesson' if lesson else 'page'}-1920x1080")
            with rerun(page):
                page.keyboard.press("ArrowRight")
