"""Class mode in real browsers (issue 41): a teacher on the projector and two students on laptops
join, follow the teacher's steps on their own sessions, answer a predict-first question, see the
reveal, get paused and see the class end. Every wait is on what the screen shows."""

import re

import pytest
from playwright.sync_api import expect

from bench.browser import browser_page, rerun, running_app, screenshot, wait_idle

pytestmark = pytest.mark.browser

QUESTION_ABOVE_FIGURE_JS = """() => {
  const box = document.querySelector('.st-key-stage-question');
  const text = box.querySelector('[data-testid="stColumn"] [data-testid="stMarkdownContainer"]');
  return [text.getBoundingClientRect().bottom, box.querySelector('.js-plotly-plot').getBoundingClientRect().top];
}"""
STAGE_TEXT = ".st-key-stage-text, [data-testid='stCode']"
# The page's stage shows more decode steps than n (its caption below the stage).
SHOWS_MORE_STEPS = "(n) => { const m = /decode steps (\\d+)/.exec(document.body.innerText); return m && +m[1] > n; }"


def _join(page, url: str, code: str, nickname: str) -> None:
    page.goto(f"{url}/?class={code}")
    wait_idle(page)
    page.get_by_label("Nickname (optional)").fill(nickname)
    page.get_by_role("button", name="Join", exact=True).click()
    page.wait_for_function("location.search.includes('seat=')", timeout=30000)
    expect(page.get_by_text(re.compile(r"seat \d · following your teacher"))).to_be_visible(timeout=30000)


def _steps(page) -> int:
    """The decode steps the page's stage shows now (its caption below the stage)."""
    shown = page.get_by_text(re.compile(r"decode steps \d+")).first.inner_text()
    return int(re.search(r"decode steps (\d+)", shown).group(1))


def _stage_text(page) -> str:
    return page.locator("[data-testid='stCode'] code").first.inner_text()


def test_a_class_joins_follows_answers_sees_the_reveal_is_paused_and_ends():
    with running_app() as url, browser_page(1920, 1080) as teacher, browser_page() as ana, browser_page() as bo:
        teacher.goto(f"{url}/?class=new&present=1")
        teacher.wait_for_function("location.search.includes('key=')", timeout=30000)
        code = re.search(r"class=([A-Z0-9]{6})", teacher.url).group(1)
        assert "key=" not in teacher.get_by_text(f"Class {code}").first.inner_text()
        _join(ana, url, code, "<b>Ana</b>")
        _join(bo, url, code, "Bo 🙂")
        assert "key=" not in ana.url and "key=" not in bo.url  # a student's address never holds the teacher's key
        expect(teacher.get_by_text(f"Class {code} · 2 joined")).to_be_visible(timeout=30000)

        teacher.get_by_role("button", name="Prefill").click()
        expect(teacher.get_by_text(re.compile(r"decode steps 0 "))).to_be_visible(timeout=30000)
        for _ in range(3):
            # Each Step drawn before the next click (an idle page right after a click may not have started its
            # run yet, and the count read below was then a Step short of the plan the students follow).
            before = _steps(teacher)
            teacher.get_by_role("button", name="Step ▸").click()
            teacher.wait_for_function(SHOWS_MORE_STEPS, arg=before, timeout=30000)
        # The teacher's own count of steps: 3 clicks made 4 steps once in CI (streamlit replayed a click's trigger
        # while coalescing reruns; see the stop-44 note). This test is about following the teacher's step.
        k = _steps(teacher)
        for student in (ana, bo):  # each on its own session, at the teacher's step, with the same text
            expect(student.get_by_text(re.compile(rf"following your teacher · step {k}$"))).to_be_visible(timeout=30000)
            expect(student.get_by_role("button", name="Prefill")).to_have_count(0)  # the teacher leads
            # the same generated text (each width shows its own length of the prompt before it)
            expect(student.locator("[data-testid='stCode'] code").first).to_contain_text(
                _stage_text(teacher)[-40:],
                timeout=30000,  # a follower's stage draws after its class line
            )
        screenshot(ana, "class-student-following")
        # A Step's drawing lost on its way to a student (bench.class_mode: 6 of 790 follows stayed a Step behind):
        # a heatmap showing an earlier step than the class line asks for the whole figure again after 2 s.
        heatmap = ana.locator(".attn-root").first
        expect(heatmap).to_have_attribute("data-step", str(k), timeout=30000)
        heatmap.evaluate(f"el => {{ el.dataset.step = '{k - 1}'; }}")
        expect(heatmap).to_have_attribute("data-step", str(k), timeout=30000)

        with rerun(teacher):  # the run after the click (its question), not the poll's run before it
            teacher.get_by_text("Predict first").click()
        question = teacher.locator(".st-key-stage-question strong").first.inner_text()
        for student in (ana, bo):
            expect(student.locator(".st-key-class-question")).to_contain_text(question, timeout=30000)
        ana.locator(".st-key-class-question button").nth(0).click()
        bo.locator(".st-key-class-question button").nth(1).click()
        bo.locator(".st-key-class-question button").nth(2).click(force=True)  # disabled: the first answer stays
        expect(teacher.get_by_text("2 of 2 answered")).to_be_visible(timeout=30000)
        screenshot(teacher, "class-projector-count")

        with rerun(teacher):
            teacher.get_by_role("button", name="Step ▸").click()  # the reveal
        words = teacher.locator(".chart-desc", has_text="Round 1:").first
        expect(words).to_contain_text("option 1: 1, option 2: 1", timeout=30000)
        # plotly draws the class's answers after the words under them are on the page
        teacher.locator(".st-key-stage-question .js-plotly-plot .main-svg").first.wait_for(timeout=30000)
        screenshot(teacher, "class-projector-reveal")
        # The question's text (two lines on the projector) ends above the class's answers drawn under it: it ran
        # 10 px into them, cutting the descenders, while streamlit's -1rem under a markdown block applied.
        text_bottom, figure_top = teacher.evaluate(QUESTION_ABOVE_FIGURE_JS)
        assert text_bottom <= figure_top, (text_bottom, figure_top)
        for student in (ana, bo):
            expect(student.get_by_text(re.compile(r"Right!|Not this time\."))).to_be_visible(timeout=30000)

        teacher.locator('[data-testid="stExpandSidebarButton"]').click()
        teacher.get_by_role("button", name=re.compile("Pause class")).click()
        ana.wait_for_function(
            "getComputedStyle(document.querySelector('.stMain'), '::after').content.includes('Paused')", timeout=30000
        )
        screenshot(ana, "class-student-paused")
        teacher.get_by_role("button", name=re.compile("End class")).click()
        for student in (ana, bo):
            expect(student.get_by_text("The class has ended")).to_be_visible(timeout=30000)
            expect(student.get_by_role("button", name="Prefill")).to_have_count(1)  # on their own again


def test_a_phone_shows_the_heatmaps_title_and_note_whole():
    """A student answering on a phone (390 × 844): the stage's heatmap keeps its title and its "rows
    above" note inside the plot's width (at laptop width they ran off the right edge, clipped)."""
    with running_app() as url, browser_page(390, 844) as phone:
        phone.goto(url)
        wait_idle(phone)
        phone.get_by_role("button", name="Prefill").click()
        phone.locator(".attn-root .gtitle").first.wait_for(timeout=30000)
        inside = phone.evaluate(
            """() => {
              const root = document.querySelector('.attn-root').getBoundingClientRect();
              return [...document.querySelectorAll('.attn-root .gtitle, .attn-root .annotation-text')]
                .map((t) => [t.textContent, t.getBoundingClientRect().right <= root.right + 1]);
            }"""
        )
        screenshot(phone, "class-phone-heatmap")
        assert inside and all(ok for _, ok in inside), inside
        assert any("rows above" in text for text, _ in inside)  # the note is still said
