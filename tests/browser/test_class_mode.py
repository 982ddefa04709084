"""Class mode in real browsers (issue 49), each browser a context of its own (its own cookies): a teacher's console
at 1280 × 800, the projector's display at 1920 × 1080, students on a laptop and a phone. One class is rehearsed in
order through the module (open, join by the display's link, follow, predict, count, reveal, pause and resume,
release and reload, end); the other tests each open a class of their own. Every wait is on what a screen shows."""

import contextlib
import re
import sqlite3
import urllib.parse

import pytest
from playwright.sync_api import expect
from streamlit.proto.BackMsg_pb2 import BackMsg

from bench.browser import browser_page, running_app, screenshot, wait_idle
from core.classroom.plan import question_id
from core.classroom.store import open_store
from serve.addresses import is_loopback
from tests.helpers.redis_server import redis_server

pytestmark = pytest.mark.browser

SEAT_LINE = re.compile(r"seat \d+ · following your teacher")


def start(page, url: str, *, alone: bool = False, query: str = "") -> str:
    """Open a class from ``page`` (``?class=new``): the start panel's button; returns its code."""
    page.goto(f"{url}/?class=new{query}")
    form = page.get_by_test_id("stForm")
    form.get_by_role("button", name="Present alone (console and display)" if alone else "Start a class").click()
    # The code from the class bar: the address is rewritten meanwhile (a lesson link's move drops and restores its
    # parameters), so a second read of it could miss the code the first had seen.
    bar = page.locator(".st-key-class-bar")
    expect(bar).to_contain_text(re.compile(r"Class [A-Z0-9]{6}"), timeout=60000)
    return re.search(r"Class ([A-Z0-9]{6})", bar.inner_text()).group(1)


def join(page, link: str, nickname: str = "") -> None:
    page.goto(link)
    page.get_by_label("Nickname (optional)").fill(nickname)
    page.get_by_role("button", name="Join", exact=True).click()
    expect(page.get_by_text(SEAT_LINE).first).to_be_visible(timeout=60000)


def steps(page) -> int:
    """The decode steps the page's stage shows now (its caption below the stage)."""
    shown = page.get_by_text(re.compile(r"decode steps \d+")).first.inner_text()
    return int(re.search(r"decode steps (\d+)", shown).group(1))


def step(console) -> None:
    before = steps(console)
    console.get_by_role("button", name="Step ▸").click()
    console.wait_for_function(
        "(n) => { const m = /decode steps (\\d+)/.exec(document.body.innerText); return m && +m[1] > n; }",
        arg=before,
        timeout=30000,
    )


@contextlib.contextmanager
def class_browsers():
    """(the app's URL, the console at 1280 × 800, the display at 1920 × 1080, Ana's laptop at 1280 × 800, Bo's phone
    at 390 × 844): each browser a context of its own."""
    with (
        running_app() as url,
        browser_page(1280, 800, fresh=True) as console,
        browser_page(1920, 1080, fresh=True) as display,
        browser_page(1280, 800, fresh=True) as ana,
        browser_page(390, 844, fresh=True) as bo,
    ):
        yield url, console, display, ana, bo


def class_on(url: str, console, display, *students) -> str:
    """A class opened on ``console``, followed by ``display`` and joined by each ``(page, nickname)`` of
    ``students``; its code."""
    code = start(console, url)
    display.goto(f"{url}/?class={code}&view=display&present=1")
    for page, nickname in students:
        join(page, f"{url}/?class={code}", nickname)
    return code


@pytest.fixture(scope="module")
def room():
    """One class for the module's rehearsal: the console, the display, Ana on a laptop and Bo on a phone."""
    with class_browsers() as (url, console, display, ana, bo):
        code = start(console, url.replace("127.0.0.1", "localhost"))  # the teacher's own machine: localhost
        yield {"url": url, "code": code, "console": console, "display": display, "ana": ana, "bo": bo}


def test_the_display_opens_from_the_console_and_shows_a_link_students_can_reach(room):
    """The console's "Open the display" names a page with the class's code and the view only (no key); on it the
    join code's link is this machine's LAN address, never the loopback the console was opened by (a phone
    cannot reach localhost), and its QR code is drawn from the same link."""
    console, display, code = room["console"], room["display"], room["code"]
    href = console.get_by_role("link", name="Open the display").get_attribute("href")
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(href).query) == {
        "class": [code],
        "view": ["display"],
        "present": ["1"],
    }
    display.goto(f"{room['url']}/?class={code}&view=display&present=1")
    expect(display.get_by_text(re.compile(rf"Class {code} · 0 joined"))).to_be_visible(timeout=60000)
    console.get_by_text("Join code", exact=True).click()
    box = display.locator(".st-key-class-join-box")
    expect(box).to_contain_text(f"Class code: {code}", timeout=30000)
    link = box.locator("code", has_text="?class=").first.inner_text()
    host = urllib.parse.urlsplit(link).hostname
    assert not is_loopback(host) or "no network address students can reach" in box.inner_text(), link
    expect(box.get_by_role("img")).to_be_visible()
    screenshot(display, "class-display-join")
    room["link"] = link.replace(host, "127.0.0.1") if not is_loopback(host) else link  # the test's own route in
    console.get_by_text("Join code", exact=True).click()
    expect(box).to_have_count(0, timeout=30000)


def test_students_join_by_the_link_and_no_credential_is_in_any_address(room):
    """Two students join by the link: every address (console, display, students) holds the class code and nothing
    else of the class; a fresh browser opening the console's exact address gets the join form, not the console."""
    code = room["code"]
    join(room["ana"], f"{room['url']}/?class={code}", "<b>Ana</b>")
    join(room["bo"], f"{room['url']}/?class={code}", "Bo 🙂")
    expect(room["console"].locator(".st-key-class-bar")).to_contain_text("2 joined", timeout=30000)
    for name in ("console", "display", "ana", "bo"):
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(room[name].url).query)
        assert set(query) <= {"class", "view", "present"} and query["class"] == [code], (name, query)
    with browser_page(1280, 800, fresh=True) as stranger:
        stranger.goto(room["console"].url)
        expect(stranger.get_by_role("button", name="Join", exact=True)).to_be_visible(timeout=60000)
        expect(stranger.get_by_role("button", name="Pause class")).to_have_count(0)


def test_followers_take_each_step_by_push(room):
    """Prefill and three Steps on the console: both students and the display show the same step and text (their
    own models and caches), without a Prefill of their own; the display's class line names the step."""
    console = room["console"]
    console.get_by_role("button", name="Prefill").click()
    expect(console.get_by_text(re.compile(r"decode steps 0 "))).to_be_visible(timeout=60000)
    for _ in range(3):
        step(console)
    k = steps(console)
    for name in ("ana", "bo", "display"):
        page = room[name]
        expect(page.locator(".st-key-class-line")).to_contain_text(f"step {k}", timeout=30000)
        expect(page.get_by_text(re.compile(rf"decode steps {k} "))).to_be_visible(timeout=30000)
        expect(page.get_by_role("button", name="Prefill")).to_have_count(0)
    screenshot(room["display"], "class-display-following")


def test_predictions_are_counted_and_revealed_on_the_display(room):
    """Predict first: the question reaches both students and the display (its options as large chips, no
    buttons); two answers make "2 of 2 answered" on the console and the display; the reveal draws the class's
    answers on the display and tells each student right or wrong."""
    console, display = room["console"], room["display"]
    console.get_by_text("Predict first", exact=True).click()
    question = console.locator(".st-key-stage-question strong").first
    expect(question).to_be_visible(timeout=30000)
    text = question.inner_text()
    for name in ("ana", "bo", "display"):
        expect(room[name].locator(".st-key-class-question")).to_contain_text(text, timeout=30000)
    expect(display.locator(".st-key-class-question button")).to_have_count(0)
    chip = display.locator(".st-key-class-question code").first
    assert chip.bounding_box()["width"] >= 24  # "!" and "," readable from the back of the room
    room["ana"].locator(".st-key-class-question button").nth(0).click()
    room["bo"].locator(".st-key-class-question button").nth(1).click()
    for page in (console, display):
        expect(page.get_by_text("2 of 2 answered")).to_be_visible(timeout=30000)
    screenshot(display, "class-display-count")
    step(console)  # the reveal
    expect(display.locator(".st-key-class-question")).to_contain_text(
        re.compile(r"Class: \d of 2 right"), timeout=30000
    )
    display.locator(".st-key-class-question .js-plotly-plot .main-svg").first.wait_for(timeout=30000)
    screenshot(display, "class-display-reveal")
    for name in ("ana", "bo"):
        expect(room[name].get_by_text(re.compile(r"Right!|Not this time\."))).to_be_visible(timeout=30000)
    console.get_by_text("Predict first", exact=True).click()


def test_resume_takes_the_cover_away_and_answers_count_again(room):
    """Pause covers the students' pages; Resume takes the cover away at once (it stayed 12 s and more, through the
    teacher's Steps, and blocked the answer buttons), and the students can click again."""
    console, ana = room["console"], room["ana"]
    console.get_by_role("button", name="Pause class").click()
    cover = ana.locator(".st-key-class-paused")
    expect(cover).to_be_visible(timeout=30000)
    screenshot(ana, "class-student-paused")
    console.get_by_role("button", name="Resume").click()
    expect(cover).to_have_count(0, timeout=5000)
    step(console)
    expect(ana.locator(".st-key-class-line")).to_contain_text(f"step {steps(console)}", timeout=30000)


def test_a_reloaded_console_keeps_its_stage_and_a_released_student_keeps_the_step(room):
    """F5 on the console: its stage comes back at the class's step (it came back empty). Released, a student's
    reloaded page starts at the teacher's step, not step 0."""
    console, ana = room["console"], room["ana"]
    k = steps(console)
    console.reload()
    expect(console.get_by_text(re.compile(rf"decode steps {k} "))).to_be_visible(timeout=60000)
    console.get_by_role("button", name="Release").click()
    expect(room["bo"].locator(".st-key-class-line")).to_contain_text("exploring on your own", timeout=30000)
    ana.reload()
    expect(ana.get_by_text(re.compile(rf"decode steps {k} "))).to_be_visible(timeout=60000)
    console.get_by_role("button", name="Bring back").click()
    expect(ana.locator(".st-key-class-line")).to_contain_text("following your teacher", timeout=30000)


# What a 502 for the event stream does to the browser's EventSource: it is closed for good, with an error event
# (a dropped connection leaves it CONNECTING, and it reconnects by itself). Playwright's routes do not reach an
# EventSource's request, so the page's own stream is put in that state.
FAIL_THE_STREAM_JS = """() => {
  const source = window.__explainerClass.source;
  source.close();
  source.dispatchEvent(new Event('error'));
  return source.readyState;
}"""


def test_a_student_whose_event_stream_failed_still_follows(room):
    """An event stream that failed for good (a 502 from nginx while a replica restarts): the student's page opens a
    new one and takes the teacher's next Step (it stayed a Step behind, seen in the rehearsal after a replica was
    killed)."""
    console, ana = room["console"], room["ana"]
    expect(ana.locator(".st-key-class-line")).to_contain_text("following your teacher", timeout=30000)
    assert ana.evaluate(FAIL_THE_STREAM_JS) == 2  # EventSource.CLOSED
    step(console)
    expect(ana.locator(".st-key-class-line")).to_contain_text(f"step {steps(console)}", timeout=30000)


def test_end_class_tells_every_student(room):
    """End class: each student is told the class has ended and gets their own controls back; the display says so
    too and stays a display (no Prefill or Play on the projector); the console says the class ended."""
    console = room["console"]
    console.get_by_role("button", name="More").click()
    console.get_by_role("button", name="End class").click()
    for name in ("ana", "bo", "display"):
        expect(room[name].get_by_text("The class has ended")).to_be_visible(timeout=30000)
    expect(room["ana"].get_by_role("button", name="Prefill")).to_have_count(1)
    expect(room["display"].get_by_role("button", name="Prefill")).to_be_hidden()
    expect(console.get_by_text("Class ended: its seats and answers are deleted.")).to_be_visible(timeout=30000)
    screenshot(room["ana"], "class-student-ended")


def _pulse_reruns(frames: list) -> int:
    """How many of the websocket frames a page sent are reruns for a class pulse (the listener's trigger)."""
    count = 0
    for payload in frames:
        msg = BackMsg()
        msg.ParseFromString(payload)
        widgets = msg.rerun_script.widget_states.widgets if msg.WhichOneof("type") == "rerun_script" else []
        count += any('"event":"pulse"' in w.json_trigger_value for w in widgets)
    return count


def test_a_students_page_reruns_for_the_teachers_step_not_for_a_classmates_join():
    """A student's page watches the plan's version only: while a classmate joins (the console counts 2) it sends
    no rerun; the teacher's next Step sends exactly one. (Each join and each answer reran every student's stage.)"""
    with (
        running_app() as url,
        browser_page(1280, 800, fresh=True) as console,
        browser_page(1280, 800, fresh=True) as ana,
        browser_page(390, 844, fresh=True) as bo,
    ):
        frames: list = []
        ana.on("websocket", lambda ws: ws.on("framesent", lambda p: frames.append(p) if isinstance(p, bytes) else None))
        code = start(console, url)
        join(ana, f"{url}/?class={code}", "Ana")
        console.get_by_role("button", name="Prefill").click()
        expect(ana.get_by_text(re.compile(r"decode steps 0 "))).to_be_visible(timeout=60000)
        expect(console.locator(".st-key-class-bar")).to_contain_text("1 joined", timeout=30000)
        before = _pulse_reruns(frames)
        join(bo, f"{url}/?class={code}", "Bo")
        expect(console.locator(".st-key-class-bar")).to_contain_text("2 joined", timeout=30000)
        step(console)
        expect(ana.get_by_text(re.compile(r"decode steps 1 "))).to_be_visible(timeout=30000)
        assert _pulse_reruns(frames) - before == 1


def test_a_students_wrong_codes_never_block_a_classmate():
    """21 wrong codes from one student's browser: that browser is told to wait; a classmate's right code joins at
    once (they came from the same address, and the limit counted per address)."""
    with (
        running_app() as url,
        browser_page(1280, 800, fresh=True) as console,
        browser_page(1280, 800, fresh=True) as pest,
        browser_page(1280, 800, fresh=True) as classmate,
    ):
        code = start(console, url)
        pest.goto(f"{url}/?class={code}")  # the class's own link: the form, with the code to mistype
        for _ in range(21):  # the form's own route, from this browser (the first sets its cookie: 428; it counts)
            pest.request.post(f"{url}/explainer/class/join", data={"code": "ZZZZZZ"}, headers={"Origin": url})
        pest.get_by_label("Class code", exact=True).fill("ZZZZZZ")
        pest.get_by_role("button", name="Join", exact=True).click()
        expect(pest.get_by_text(re.compile(r"wait \d+ s"))).to_be_visible(timeout=30000)
        join(classmate, f"{url}/?class={code}")
        expect(classmate.get_by_text(re.compile(r"wait \d+ s"))).to_have_count(0)


def test_a_student_with_only_the_code_joins_from_the_sidebar():
    """Issue 55 item 4: on the app's first page, no link, a phone types the code read off the projector into the
    sidebar's "Join a class" box (lower case, spaced) with a nickname, and is seated from there (the join route's
    first answer, 428, set the browser cookie; the page asked again)."""
    with (
        running_app() as url,
        browser_page(1280, 800, fresh=True) as console,
        browser_page(390, 844, fresh=True) as phone,
    ):
        code = start(console, url)
        phone.goto(url)
        phone.get_by_test_id("stExpandSidebarButton").click()
        phone.get_by_label("Code on the projector").fill(f"{code[:3].lower()} {code[3:].lower()}")
        phone.get_by_label("Name for your teacher (optional)").fill("Cy")
        phone.get_by_role("button", name="Join a class").click()
        expect(phone.get_by_text(SEAT_LINE).first).to_be_visible(timeout=60000)
        expect(console.locator(".st-key-class-bar")).to_contain_text("1 joined", timeout=60000)


def test_an_unknown_code_in_the_address_is_said():
    """?class=ZZZZZZ: a sentence says no such class is running (it showed a bare join form)."""
    with running_app() as url, browser_page(1280, 800, fresh=True) as page:
        page.goto(f"{url}/?class=ZZZZZZ")
        expect(page.get_by_text("No class ZZZZZZ is running")).to_be_visible(timeout=60000)


def test_a_student_joining_on_a_lessons_first_stop_lands_on_it():
    """The console runs the guided lesson at stop 1 (the worked example): a student who joins lands on that page,
    not on the decode page saying "Press Prefill"."""
    with (
        running_app() as url,
        browser_page(1280, 800, fresh=True) as console,
        browser_page(1280, 800, fresh=True) as student,
    ):
        code = start(console, url, query="&lesson=fifteen-minutes&stop=1")
        expect(console.get_by_role("heading", name="The worked example")).to_be_visible(timeout=60000)
        join(student, f"{url}/?class={code}")
        expect(student.get_by_role("heading", name="The worked example")).to_be_visible(timeout=60000)
        expect(student.get_by_text("Press Prefill")).to_have_count(0)


def test_a_display_hides_a_stops_answer_until_the_console_reveals_it():
    """A teacher alone (console and display, no students): on the lesson's stop 2 the display shows the stage at
    step 11 without "62 positions cached" until the console's Reveal; the console shows it all along."""
    with (
        running_app() as url,
        browser_page(1280, 800, fresh=True) as console,
        browser_page(1920, 1080, fresh=True) as display,
    ):
        start(console, url, alone=True, query="&lesson=fifteen-minutes&stop=2")
        expect(console.locator(".st-key-class-bar")).to_contain_text("joining closed", timeout=30000)
        expect(console.get_by_text(re.compile(r"62 positions cached"))).to_be_visible(timeout=60000)
        display.goto(
            console.get_by_role("link", name="Open the display").get_attribute("href").replace("./", f"{url}/")
        )
        expect(display.get_by_text(re.compile(r"decode steps 11 "))).to_be_visible(timeout=60000)
        wait_idle(display)
        assert "62 positions cached" not in display.locator("body").inner_text()
        screenshot(display, "class-display-hidden-answer")
        console.get_by_role("button", name="Reveal on the display").click()
        expect(display.get_by_text(re.compile(r"62 positions cached"))).to_be_visible(timeout=30000)


def _answer_then_outage(url, console, student, stop, back, told=("Lost the connection to the class",) * 2) -> str:
    """A class with one student who answers a question; the store goes away (``stop``) while the console takes a
    Step; the pages say so in a sentence (``told``: the student's and the console's), no traceback; the store comes
    back (``back``): the student is at the console's step within 5 s and the answer given before was counted once."""
    code = start(console, url)
    join(student, f"{url}/?class={code}")
    console.get_by_text("Predict first", exact=True).click()
    console.get_by_role("button", name="Prefill").click()
    expect(student.locator(".st-key-class-question button").first).to_be_visible(timeout=60000)
    student.locator(".st-key-class-question button").first.click()
    expect(console.get_by_text("1 of 1 answered")).to_be_visible(timeout=30000)
    console.get_by_text("Predict first", exact=True).click()  # plain Steps from here
    stop()
    console.get_by_role("button", name="Step ▸").click()
    for page, said in zip((student, console), told, strict=True):
        if said:
            expect(page.get_by_text(said).first).to_be_visible(timeout=30000)
    screenshot(student, "class-store-lost")
    for page in (student, console):
        body = page.locator("body").inner_text()
        assert "Traceback" not in body and "Error" not in body and ".py" not in body, body[-500:]
    back()
    k = steps(console)
    expect(student.locator(".st-key-class-line")).to_contain_text(f"step {k}", timeout=5000)
    for page in (student, console):
        expect(page.get_by_text(re.compile("Lost the connection|not taking changes"))).to_have_count(0, timeout=5000)
    return code


def test_redis_stopped_and_started_again_loses_nothing(tmp_path):
    """Redis stopped mid-class and started again (its append-only file kept): no traceback on any page, a plain
    line on both sides while it is gone, the student back at the console's step within 5 s of its return, and the
    answer given before it went counted once (it showed a raw redis ConnectionError with the server's paths)."""
    with redis_server(data_dir=tmp_path) as redis:
        with (
            running_app(env={"EXPLAINER_CLASS_STORE": redis.url}) as url,
            browser_page(1280, 800, fresh=True) as console,
            browser_page(1280, 800, fresh=True) as student,
        ):
            code = _answer_then_outage(url, console, student, redis.stop, redis.start)
            store = open_store(redis.url)
            plan = store.plan(code)[1]
            assert store.answered(code, question_id(plan.request.uid, 1), 1) == 1  # counted once, kept


def test_a_locked_sqlite_store_is_said_and_recovers(tmp_path):
    """The SQLite file locked by another writer mid-class (``BEGIN EXCLUSIVE``), then released: no traceback; the
    console says its Steps wait (students still read the class, so they stay at the last step) and retries; the
    student is at the console's step within 5 s of the release (it raised sqlite3.OperationalError on the page)."""
    db = tmp_path / "classes.db"
    holder = {}

    def lock():
        holder["db"] = sqlite3.connect(db, isolation_level=None)
        holder["db"].execute("BEGIN EXCLUSIVE")

    def release():
        holder["db"].execute("ROLLBACK")
        holder["db"].close()

    with (
        running_app(env={"EXPLAINER_CLASS_STORE": f"sqlite:///{db}"}) as url,
        browser_page(1280, 800, fresh=True) as console,
        browser_page(1280, 800, fresh=True) as student,
    ):
        _answer_then_outage(url, console, student, lock, release, told=(None, "not taking changes"))


def test_a_second_device_becomes_a_console_by_a_one_time_code():
    """The console's "Add a device" shows a one-time code; a phone that types it under the sidebar's Class becomes a
    console of the same class (its own Pause), with no key in any address; the same code works only once."""
    with (
        running_app() as url,
        browser_page(1280, 800, fresh=True) as laptop,
        browser_page(390, 844, fresh=True) as phone,
        browser_page(390, 844, fresh=True) as other,
    ):
        code = start(laptop, url, alone=True)
        laptop.get_by_role("button", name="More").click()
        laptop.get_by_role("button", name="Add a device (a one-time code)").click()
        said = laptop.get_by_text(re.compile(r"enter \d{6} under")).first
        expect(said).to_be_visible(timeout=30000)
        pair = re.search(r"enter (\d{6}) under", said.inner_text()).group(1)
        for page in (phone, other):
            page.goto(url)
            page.get_by_test_id("stExpandSidebarButton").click()
            page.get_by_label(re.compile("one-time code")).fill(pair)
            page.get_by_role("button", name="Use this device as the console").click()
        expect(phone.locator(".st-key-class-bar")).to_contain_text(f"Class {code}", timeout=60000)
        assert urllib.parse.parse_qs(urllib.parse.urlsplit(phone.url).query) == {"class": [code]}
        expect(other.get_by_text("unknown, used or expired")).to_be_visible(timeout=30000)
        screenshot(phone, "class-phone-console")


def test_a_page_that_fails_says_so_in_a_sentence_never_a_traceback(tmp_path):
    """A fault no page expects (a plan in the store that this app cannot read, as a newer app would write it): the
    following student's page shows one sentence with a reference, never a traceback or the server's file paths
    (main.py's st.App(on_script_error=…), ui/errors.py); the server's log has the details under that reference."""
    db = tmp_path / "classes.db"
    with (
        running_app(env={"EXPLAINER_CLASS_STORE": f"sqlite:///{db}"}) as url,
        browser_page(1280, 800, fresh=True) as console,
        browser_page(1280, 800, fresh=True) as student,
    ):
        code = start(console, url)
        join(student, f"{url}/?class={code}")
        with sqlite3.connect(db) as raw:  # a plan of another schema, published behind the app's back
            raw.execute("UPDATE classes SET plan = ?, version = version + 1 WHERE code = ?", ('{"schema": 99}', code))
        said = student.get_by_text("Something went wrong on this page")
        expect(said.first).to_be_visible(timeout=30000)
        assert re.search(r"reference [0-9a-f]{8}", said.first.inner_text())
        body = student.locator("body").inner_text()
        assert "Traceback" not in body and 'File "' not in body and ".py" not in body, body[-600:]
        screenshot(student, "class-page-error")
