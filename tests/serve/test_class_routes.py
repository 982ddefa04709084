"""Class mode's HTTP routes on a real server (``streamlit run main.py``): credentials only in HttpOnly, SameSite
cookies (never in a body or an address), wrong codes counted per browser so no student can block a classmate, the
seat cap and closed joining, the teacher password, and the event stream's pulse (issue 49)."""

import http.cookiejar
import json
import re
import time
import urllib.error
import urllib.request

import pytest

from bench.browser import running_app
from serve import nginx as class_nginx
from serve import replicas
from serve.class_routes import BROWSER, SEAT, TEACHER


class Browser:
    """One browser: its own cookie jar, POSTing JSON to the app's class routes (``ROUTES``: their folder)."""

    ROUTES = "explainer/class"

    def __init__(self, base: str):
        self.base, self.jar = base, http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.headers = {}

    def post(self, route: str, body: dict | None = None, again_after_428: bool = True) -> tuple[int, dict]:
        """POST as the app's page does (``frontend/class_post.js``: once more after a 428, which set the browser
        cookie a seat needs)."""
        status, answer = self._post(route, body)
        if status == 428 and again_after_428:
            status, answer = self._post(route, body)
        return status, answer

    def _post(self, route: str, body: dict | None) -> tuple[int, dict]:
        req = urllib.request.Request(
            f"{self.base}/{self.ROUTES}/{route}",
            data=json.dumps(body or {}).encode(),
            headers={"Content-Type": "application/json", "Origin": self.base},  # as the app's own page sends it
            method="POST",
        )
        try:
            with self.opener.open(req, timeout=30) as r:
                self.headers = dict(r.headers)
                self.set_cookies = r.headers.get_all("Set-Cookie") or []
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            self.headers_of_refusal = e.headers
            self.set_cookies = e.headers.get_all("Set-Cookie") or []
            return e.code, json.loads(e.read())

    def cookie(self, name: str) -> str | None:
        return next((c.value for c in self.jar if c.name == name), None)


def _set_cookie(browser: Browser, name: str) -> str:
    [header] = [h for h in browser.set_cookies if h.startswith(name + "=")]
    return header


@pytest.fixture(scope="module")
def base():
    with running_app() as url:
        yield url


def test_opening_a_class_sets_an_httponly_cookie_and_shows_no_key(base):
    """Open answers the class code only; the teacher's key is in an HttpOnly, SameSite=Lax cookie for the whole app,
    written nowhere else."""
    teacher = Browser(base)
    status, body = teacher.post("open")
    assert status == 200 and set(body) == {"code"} and len(body["code"]) == 6
    header = _set_cookie(teacher, TEACHER).lower()
    assert "httponly" in header and "samesite=lax" in header and "path=/" in header
    code, key = teacher.cookie(TEACHER).split(".", 1)
    assert code == body["code"] and len(key) >= 20 and key not in json.dumps(body)


def test_wrong_codes_from_one_browser_never_delay_a_classmates_join(base):
    """200 wrong codes from one browser: it is refused ("wait …", 429) but a classmate's join with the right code
    takes well under a second. The same browser's right code waits too (at most a minute): a guesser over its limit
    must not learn which code is right (issue 55 item 3)."""
    teacher = Browser(base)
    code = teacher.post("open")[1]["code"]
    pest = Browser(base)
    statuses = [pest.post("join", {"code": "ZZZZZZ" if i % 2 else "ABCDEF"})[0] for i in range(200)]
    assert statuses[0] == 404 and statuses[-1] == 429 and pest.cookie(BROWSER)
    classmate = Browser(base)
    started = time.monotonic()
    status, body = classmate.post("join", {"code": code, "nickname": "Ana"})
    assert status == 200 and body["seat"] == 1 and time.monotonic() - started < 1.0
    assert "httponly" in _set_cookie(classmate, SEAT).lower() and classmate.cookie(SEAT).startswith(code + ".")
    _limited(pest, *pest.post("join", {"code": code.lower()}), "class codes")


def test_the_seat_cap_and_closed_joining_refuse_with_a_sentence(base):
    """A class opened with 1 seat takes one student and refuses the next ("full"); a class opened for a teacher
    alone (joining closed) refuses every join with a sentence, and sets no seat cookie."""
    small = Browser(base).post("open", {"seats": 1})[1]["code"]
    assert Browser(base).post("join", {"code": small})[0] == 200
    late = Browser(base)
    status, body = late.post("join", {"code": small})
    assert status == 409 and "full" in body["error"] and late.cookie(SEAT) is None
    alone = Browser(base).post("open", {"joining": False})[1]["code"]
    status, body = Browser(base).post("join", {"code": alone})
    assert status == 409 and "closed joining" in body["error"]


def _limited(browser: Browser, status: int, body: dict, what: str) -> int:
    """The wait a 429 says, checked against its Retry-After header (whole seconds, at most a minute)."""
    assert status == 429, (status, body)
    wait = int(browser.headers_of_refusal["Retry-After"])
    assert 1 <= wait <= 60 and f"Too many wrong {what}: wait {wait} s and try again." == body["error"]
    return wait


def test_a_teacher_password_guards_opening_classes_and_guessing_it_or_a_code_is_limited_without_cookies():
    """A server started with a teacher password opens a class only for that password (403 otherwise). Guessing is
    limited (issue 55 item 3): 5 wrong passwords a minute per browser, 30 on the replica in all (a guesser changing
    cookies every try), then 429 with the wait, at most a minute, even for the right password; wrong class codes:
    20 a minute per browser and 100 in all (from browsers each under its own limit), then 429."""
    with running_app(env={"EXPLAINER_TEACHER_PASSWORD": "s3cret"}) as url:
        assert Browser(url).post("open")[0] == 403
        teacher = Browser(url)
        assert teacher.post("open", {"password": "s3cret"})[0] == 200 and teacher.cookie(TEACHER)
        code = teacher.post("open", {"password": "s3cret"})[1]["code"]
        one = Browser(url)
        assert [one.post("open", {"password": f"w{i}"})[0] for i in range(5)] == [403] * 5
        _limited(one, *one.post("open", {"password": "s3cret"}), "teacher passwords")
        fresh = [Browser(url).post("open", {"password": f"x{i}"})[0] for i in range(24)]  # 1 + 5 + 24 = 30
        assert fresh == [403] * 24
        late = Browser(url)
        _limited(late, *late.post("open", {"password": "s3cret"}), "teacher passwords")
        wrong = "".join(c for c in "ABCDEFGHJKMNPQRS" if c not in code)[:6]
        assert [one.post("join", {"code": wrong})[0] for _ in range(20)] == [404] * 20
        _limited(one, *one.post("join", {"code": wrong}), "class codes")
        others = [Browser(url) for _ in range(5)]  # 20 + 5 × 16 = 100 in all, each browser under its own 20
        assert [b.post("join", {"code": wrong})[0] for b in others for _ in range(16)] == [404] * 80
        late = Browser(url)
        _limited(late, *late.post("join", {"code": code}), "class codes")  # no oracle: the right code waits too


def test_a_nickname_or_code_over_its_limit_is_refused_in_a_sentence(base):
    """Nobody is seated without the name they typed (issue 55 item 6): a nickname over 40 characters is refused
    with its length, a 10,000-character code is refused as not a code (it had read 'No open class has the code
    “”'), and no seat cookie is set."""
    code = Browser(base).post("open")[1]["code"]
    student = Browser(base)
    status, body = student.post("join", {"code": code, "nickname": "<b>" + "x" * 66 + "</b>"})
    assert status == 400 and body["error"] == "A nickname is at most 40 characters (this one is 73 characters)."
    status, body = student.post("join", {"code": "K" * 3000})
    assert status == 400 and body["error"].startswith("A class code is six letters and digits")
    assert student.cookie(SEAT) is None
    assert student.post("join", {"code": code, "nickname": " " + "n" * 40 + " "})[0] == 200


def _events(base: str, code: str):
    """The class's event stream: a generator of its pulses (dicts)."""
    r = urllib.request.urlopen(f"{base}/explainer/class/events?code={code}", timeout=30)
    assert r.headers["Content-Type"].startswith("text/event-stream")
    for raw in r:
        line = raw.decode().strip()
        if line.startswith("data: "):
            yield json.loads(line[6:])


def test_the_event_stream_pushes_each_change_with_no_secret(base):
    """The stream's first pulse is the class as it is (version 0, nobody joined); a join arrives as a new pulse
    within a second; pulses carry versions and counts only."""
    code = Browser(base).post("open")[1]["code"]
    stream = _events(base, code)
    first = next(stream)
    assert (first["version"], first["students"], first["answered"], first["question"]) == (0, 0, 0, None)
    started = time.monotonic()
    assert Browser(base).post("join", {"code": code})[0] == 200
    second = next(stream)
    assert second["students"] == 1 and time.monotonic() - started < 1.0
    assert set(second) <= {"version", "students", "answered", "question", "round"}


def test_leaving_clears_both_cookies(base):
    """Leave expires the teacher's and the seat cookie (a shared laptop keeps no class)."""
    teacher = Browser(base)
    teacher.post("open")
    assert teacher.cookie(TEACHER)
    assert teacher.post("leave")[0] == 200
    assert teacher.cookie(TEACHER) is None and teacher.cookie(SEAT) is None


def test_nginx_logs_carry_no_key_and_no_seat_token(tmp_path):
    """Through the class server (nginx before two replicas): a class opened, a student joined and the event stream
    read; nginx's access log names the requests and the affinity cookie only, never the teacher's key or a seat
    token (they lived in addresses, and every reload wrote them into this log)."""
    with replicas.class_server(2, port=class_nginx.free_port()) as server:
        teacher, student = Browser(server.url), Browser(server.url)
        code = teacher.post("open")[1]["code"]
        assert student.post("join", {"code": code, "nickname": "Ana"})[0] == 200
        events = _events(server.url, code)
        assert next(events)["students"] == 1
        secrets_ = [teacher.cookie(TEACHER).split(".", 1)[1], student.cookie(SEAT).split(".", 1)[1]]
        logged = (server.prefix / "access.log").read_text()
        assert "POST /explainer/class/open" in logged and "POST /explainer/class/join" in logged
        assert not [s for s in secrets_ if s in logged]


def test_pairing_codes_cannot_be_guessed():
    """A one-time pairing code (6 digits) is not left to guessing: after 10 wrong codes in a minute a browser is
    refused (429), and a guesser that changes its cookie on every try meets the replica's overall limit of 60 wrong
    codes a minute (pairing then waits a minute; joining and the class go on)."""
    with running_app(fresh=True) as base:  # its own server: the overall limit must not reach other tests
        teacher = Browser(base)
        code = teacher.post("open")[1]["code"]
        guesser = Browser(base)
        assert [guesser.post("pair", {"pair": f"{i:06d}"})[0] for i in range(10)] == [404] * 10
        _limited(guesser, *guesser.post("pair", {"pair": "000123"}), "pairing codes")
        assert guesser.cookie(TEACHER) is None
        fresh = [Browser(base).post("pair", {"pair": f"{i:06d}"})[0] for i in range(60)]  # a new cookie each time
        assert fresh[:50] == [404] * 50 and fresh[-1] == 429
        assert Browser(base).post("join", {"code": code})[0] == 200  # the class still takes students


def test_seats_go_to_browsers_not_scripts():
    """Issue 55 item 2, on a server of its own (its new-seat allowance untouched): 40 joins without the browser
    cookie seat nobody (each 428, the cookie offered) and cost the class nothing; a script keeping its cookie takes
    one seat however often it joins; a class of 40 browsers from this one address, each joining as its page does,
    is all seated within 10 s; a script making new browsers past that pace (60 seats at once, then one every 5 s)
    gets a handful more and is told to wait, while a seated browser coming back still gets its seat."""
    with running_app(fresh=True) as url:
        teacher = Browser(url)
        code = teacher.post("open")[1]["code"]
        scripted = [Browser(url).post("join", {"code": code}, again_after_428=False) for _ in range(40)]
        assert {status for status, _ in scripted} == {428}
        assert scripted[0][1]["error"].startswith("This browser has no cookie from the class's page yet")
        keeper = Browser(url)
        assert {keeper.post("join", {"code": code})[1]["seat"] for _ in range(30)} == {1}
        started = time.monotonic()
        seated = [Browser(url).post("join", {"code": code, "nickname": f"s{i}"}) for i in range(40)]
        assert [status for status, _ in seated] == [200] * 40 and time.monotonic() - started < 10
        assert sorted(answer["seat"] for _, answer in seated) == list(range(2, 42))
        script = [Browser(url).post("join", {"code": code}) for _ in range(40)]
        statuses = [s for s, _ in script]
        assert 19 <= statuses.count(200) <= 19 + 3 and statuses[-1] == 429  # 60 - 41 left, and a refill or so
        assert re.fullmatch(
            r"Too many new students are joining at once: wait \d+ s and try again\.", script[-1][1]["error"]
        )
        assert keeper.post("join", {"code": code}) == (200, {"code": code, "seat": 1})
        assert teacher.post("open")[0] == 200  # nothing else waits
