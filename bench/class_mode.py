"""Class mode (issue 41) through a class server: a teacher and N students join, follow, answer and
survive a replica's death, measured in one run.

    python -m bench.class_mode [--replicas 4] [--students 40] [--steps 20] [--questions 5]
                               [--store redis://127.0.0.1:PORT/0] [--quick]

Starts ``--replicas`` app replicas behind nginx (``serve.class_server``) sharing one class store (a
fresh SQLite file by default, or ``--store`` URL: a running Redis, which this bench does not start).
This process opens the class directly through that store (``open_class``: the code and the teacher
key; a teacher would press *Start a class*) and then speaks only streamlit's websocket protocol
through nginx, one light client per browser tab (``Tab``), the teacher's included: each tab takes
its affinity cookie from a first plain request as a browser does, sends what a browser sends (the
join form's two text boxes with its submit button, button triggers with their fragment id, the
*Predict first* toggle; every value it set goes again with each later rerun, as the frontend sends
every widget's value) and keeps the browser's fragment timers: a ``ForwardMsg.auto_rerun``
(interval, fragment id; sent each time a ``st.fragment(run_every=…)`` is drawn) starts a timer
that sends ``rerun_script`` for that fragment with ``is_auto_rerun`` every interval, whatever the
server is doing, until a ``stop_auto_rerun`` names it, as streamlit's frontend does
(``handleAutoRerun``: ``setInterval(sendUpdateWidgetsMessage(fragmentId, true))``).

The lesson: the teacher's tab opens ``?class=CODE&key=KEY&present=1`` (the projector; presenter mode
also keeps the sidebar's roster of who answered off the projector) and prefills; the students open
``?class=CODE`` over ``--ramp`` seconds and join through the form (a nickname each); the teacher
takes ``--steps`` Steps, ``--questions`` of them asked first (the *Predict first* toggle on: the
question opens; → reveals it and takes the Step; the toggle off again). Each student answers a
question 0.5–6 s after its buttons appear, a random option; every 4th student double-clicks
(the same button twice, 50 ms apart). After Step ``--kill-after`` (default: half the Steps) one
replica that does not hold the teacher is killed (SIGKILL; ``serve`` starts it again): its
students' websockets close, and each reconnects through nginx as streamlit's frontend does (the
health URL with its old cookie, which nginx rewrites to a live replica; a websocket asking to
resume its old session; a rerun with its own ``?class=…&seat=…`` address), while the teacher keeps
stepping (plain Steps only) until they are all back at the teacher's step.

Measured: join (send *Join* → the seat line), following (the teacher's click for Step k → the
follower's stage reports ``decode steps k``; p50/p95 over followers × Steps), answering (every
answer sent within 10 s of the question; the store's ``tally``, ``answered`` and each seat's
``my_answer`` against what was sent: every answer counted exactly once; the last answer sent → the
teacher's strip showing "N of N answered", p50/p95 over the questions), and the kill (its students
back at the teacher's step with their seat and, by ``my_answer``, their answers; the others'
following while they were away). A page's exception element, a timeout or a wrong count is an
error: the process exits 1 after printing. Traffic goes to 127.0.0.1 only.
``--quick`` (tests/bench/test_class_mode_quick.py): 2 replicas, 6 students joining over 1 s, 3 Steps,
1 question (before Step 2), the kill after Step 2.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import inspect
import os
import random
import re
import shutil
import signal
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.procs import cpu_seconds
from bench.stats import p50_p95
from core.classroom.store import ENV_URL, open_store

COOKIE = "class_replica"
TIMEOUT_S = 60  # a wait that runs over this is an error
ANSWER_WITHIN_S = 10  # the goal: every student answers within 10 s of the question
ANSWER_DELAY_S = (0.5, 6.0)  # a student reads the question and picks, this long after it appears
THINK_S = 0.5  # the teacher's pause after every follower shows a Step
STEPS = re.compile(r"decode steps (\d+)")
SEAT = re.compile(r"Class (\w+) · seat (\d+) · ([a-z ]+?)(?: · step (\d+))?$")
LOST = "restarted your session"  # ui.frame.note_lost_session's warning
COUNT = re.compile(r"\*\*(\d+) of (\d+) answered\*\*")


def now() -> float:
    return time.perf_counter()


def health_cookie(base: str, cookie: str | None) -> str | None:
    """GET the health URL with this browser's cookie (as streamlit's frontend does before it opens a
    websocket) and return the affinity cookie nginx sets, or ``cookie`` when it sets none. OSError
    while nothing answers."""
    req = urllib.request.Request(base + "/_stcore/health", headers={"Cookie": cookie} if cookie else {})
    with urllib.request.urlopen(req, timeout=10) as r:
        cookies = [c.split(";")[0] for c in r.headers.get_all("Set-Cookie") or []]
    return next((c for c in cookies if c.startswith(COOKIE + "=")), cookie)


@dataclass
class Tab:
    """One browser tab, at the protocol level: a reader task takes every ForwardMsg as it arrives
    (nothing is drawn), fragment timers send auto-reruns, and a closed websocket is reopened as the
    frontend does. What the page shows is kept as it arrives: the decode stage's step (``shown``,
    with the time of each change), the class strip's seat line and the teacher's count."""

    name: str
    base: str  # http://127.0.0.1:PORT of nginx
    query: str  # the address's query string; the server rewrites it (page_info_changed)
    cookie: str | None = None
    ws: object = None
    session_id: str = ""
    page_hash: str = ""
    buttons: dict = field(default_factory=dict)  # label -> (widget id, fragment id, disabled)
    picks: dict = field(default_factory=dict)  # (question id, round) -> [(widget id, fragment id, disabled)]
    inputs: dict = field(default_factory=dict)  # text input label -> widget id
    toggles: dict = field(default_factory=dict)  # toggle label -> (widget id, fragment id)
    shown: list = field(default_factory=list)  # [(time, decode steps)] each time the stage's step changed
    seat: int | None = None
    strip_step: int | None = None  # the step a student's class line names (the plan's)
    early: list = field(default_factory=list)  # times a run ended early for a rerun (a poll saw news)
    count: list = field(default_factory=list)  # [(time, answered, students)] from the teacher's strip
    full_runs: int = 0  # full script runs finished
    exceptions: list = field(default_factory=list)
    alerts: list = field(default_factory=list)  # st.info/warning/error texts, as drawn
    values: dict = field(default_factory=dict)  # widget id -> setter of a value this tab set (text, toggle)
    timers: dict = field(default_factory=dict)  # fragment id -> (interval, task)
    closed_at: list = field(default_factory=list)  # times the websocket closed under this tab
    reconnected_at: list = field(default_factory=list)
    replicas: list = field(default_factory=list)  # the replica names this tab was served by, in order
    done: bool = False
    finished: dict = field(default_factory=dict)  # script_finished status -> how many
    _fresh: bool = True
    _send_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _reader: asyncio.Task | None = None

    @property
    def step(self) -> int | None:
        return self.shown[-1][1] if self.shown else None

    def reached(self, k: int, after: float) -> float | None:
        """When the stage first showed step ≥ k at or after ``after`` (None: not yet)."""
        return next((t for t, s in self.shown if t >= after and s >= k), None)

    async def open(self, resume: bool = False) -> None:
        self.cookie = await asyncio.to_thread(health_cookie, self.base, self.cookie)
        self._fresh = True
        self.replicas.append(self.cookie.split("=", 1)[1] if self.cookie else "-")
        protocols = ["streamlit", "PLACEHOLDER_AUTH_TOKEN"] + ([self.session_id] if resume and self.session_id else [])
        self.ws = await websockets.connect(
            self.base.replace("http://", "ws://") + "/_stcore/stream",
            subprotocols=protocols,
            max_size=None,
            additional_headers={"Cookie": self.cookie} if self.cookie else None,
            proxy=None,
            open_timeout=TIMEOUT_S,
        )
        self._reader = self._reader or asyncio.create_task(self._read_forever())
        await self.send()  # the page load: a full run of the page the address names

    async def send(self, fragment: str = "", widgets=(), auto: bool = False) -> None:
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_script_hash = self.page_hash
        msg.rerun_script.fragment_id = fragment
        msg.rerun_script.is_auto_rerun = auto
        given = set()
        for set_state in widgets:
            w = msg.rerun_script.widget_states.widgets.add()
            set_state(w)
            given.add(w.id)
            if w.WhichOneof("value") != "trigger_value":
                self.values[w.id] = set_state
        for wid, set_state in self.values.items():  # as the frontend: every value it holds, in every rerun
            if wid not in given:
                set_state(msg.rerun_script.widget_states.widgets.add())
        async with self._send_lock:
            await self.ws.send(msg.SerializeToString())

    async def click(self, widget_id: str, fragment: str) -> None:
        def trigger(w):
            w.id, w.trigger_value = widget_id, True

        await self.send(fragment, [trigger])

    async def _read_forever(self) -> None:
        while not self.done:
            try:
                async for raw in self.ws:
                    fm = ForwardMsg()
                    fm.ParseFromString(raw)
                    self._take(fm)
            except websockets.ConnectionClosed:
                pass
            if self.done:
                return
            self.closed_at.append(now())
            self._stop_timers()
            await self._reconnect()

    async def _reconnect(self) -> None:
        """As streamlit's frontend: ping the health URL until it answers (nginx moves the cookie to a
        live replica), then a websocket asking to resume the old session, then a full rerun."""
        deadline = now() + TIMEOUT_S
        while True:
            await asyncio.sleep(0.5)
            try:
                await self.open(resume=True)
                self.reconnected_at.append(now())
                return
            except (OSError, websockets.InvalidHandshake):
                if now() > deadline:
                    self.exceptions.append("could not reconnect within 60 s")
                    self.done = True
                    return

    def _stop_timers(self, ids=None) -> None:
        for fid in list(self.timers) if ids is None else ids:
            if fid in self.timers:
                self.timers.pop(fid)[1].cancel()

    def _auto_rerun(self, interval: float, fid: str) -> None:
        if fid in self.timers and self.timers[fid][0] == interval:
            return  # as the frontend: the same interval keeps its timer

        async def tick():
            while True:
                await asyncio.sleep(interval)
                try:
                    await self.send(fid, auto=True)
                except websockets.ConnectionClosed:
                    return

        self._stop_timers([fid])
        self.timers[fid] = (interval, asyncio.create_task(tick()))

    def _take(self, fm: ForwardMsg) -> None:
        kind = fm.WhichOneof("type")
        if kind == "new_session":
            self.session_id = fm.new_session.initialize.session_id or self.session_id
            self.page_hash = fm.new_session.page_script_hash or self.page_hash
        elif kind == "page_info_changed":
            self.query = fm.page_info_changed.query_string
        elif kind == "auto_rerun":
            self._auto_rerun(fm.auto_rerun.interval, fm.auto_rerun.fragment_id)
        elif kind == "stop_auto_rerun":
            self._stop_timers(list(fm.stop_auto_rerun.fragment_ids))
        if kind == "script_finished":
            self.finished[fm.script_finished] = self.finished.get(fm.script_finished, 0) + 1
            if fm.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                self.early.append(now())
        if kind == "script_finished" and fm.script_finished in (
            ForwardMsg.FINISHED_SUCCESSFULLY,
            ForwardMsg.FINISHED_WITH_COMPILE_ERROR,
        ):
            self.full_runs += 1  # a fragment's run ends FINISHED_FRAGMENT_RUN_SUCCESSFULLY
        elif kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
            self._element(fm.delta.new_element, fm.delta.fragment_id)

    def _element(self, el, fragment: str) -> None:
        kind = el.WhichOneof("type")
        if kind == "button":
            b = el.button
            if "class.pick." in b.id:  # key class.pick.<question id>.<round>.<i>
                qid, round_, i = b.id.split("class.pick.", 1)[1].rsplit(".", 2)
                row = self.picks.setdefault((qid, int(round_)), {})
                row[int(i)] = (b.id, fragment, b.disabled)
            else:
                self.buttons[b.label] = (b.id, fragment, b.disabled)
        elif kind == "text_input":
            self.inputs[el.text_input.label] = el.text_input.id
        elif kind == "checkbox":
            self.toggles[el.checkbox.label] = (el.checkbox.id, fragment)
        elif kind == "markdown":
            self._text(el.markdown.body)
        elif kind == "alert":
            self.alerts.append(el.alert.body)
        elif kind == "exception":
            self.exceptions.append(f"{self.name}: {el.exception.type}: {el.exception.message[:160]}")

    def _text(self, body: str) -> None:
        if m := STEPS.search(body):
            k = int(m.group(1))
            if self.step != k or self._fresh:  # a new session's first drawing counts, even at the same step
                self.shown.append((now(), k))
                self._fresh = False
        elif m := SEAT.search(body):
            self.seat = int(m.group(2))
            self.strip_step = None if m.group(4) is None else int(m.group(4))
        elif m := COUNT.search(body):
            self.count.append((now(), int(m.group(1)), int(m.group(2))))

    def state(self) -> str:
        """What this tab shows, for an error message."""
        return (
            f"replicas {self.replicas}, stage steps {[s for _, s in self.shown[-3:]]}, class line step "
            f"{self.strip_step}, seat {self.seat}, runs finished (status: count) {self.finished}, "
            f"reconnects {len(self.reconnected_at)}, last alert {self.alerts[-1][:60] if self.alerts else None!r}"
        )

    async def close(self) -> None:
        self.done = True
        self._stop_timers()
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            self._reader.cancel()


async def until(what: str, predicate, timeout_s: float = TIMEOUT_S, errors: list | None = None) -> bool:
    """Poll ``predicate`` every 20 ms; False (and an error named ``what``) when ``timeout_s`` passes."""
    deadline = now() + timeout_s
    while not predicate():
        if now() > deadline:
            if errors is not None:
                errors.append(f"timed out after {timeout_s:.0f} s: {what}")
            return False
        await asyncio.sleep(0.02)
    return True


def param(query: str, name: str) -> str | None:
    return urllib.parse.parse_qs(query).get(name, [None])[0]


@dataclass
class Run:
    """Everything measured in one class, and the errors found."""

    errors: list = field(default_factory=list)
    join_ms: list = field(default_factory=list)
    follow_ms: list = field(default_factory=list)  # teacher's click → follower shows the Step
    follow_from_teacher_ms: list = field(default_factory=list)  # teacher's stage shows it → follower
    notice_ms: list = field(default_factory=list)  # teacher's click → the follower's poll reruns its app
    page_ms: list = field(default_factory=list)  # that rerun → its stage shows the Step
    buttons_ms: list = field(default_factory=list)  # question opened → its buttons on a student's page
    idle_cores: float = float("nan")  # replicas' CPU (cores) while the class sits still, every tab polling
    seated: int = 0
    followed: int = 0
    to_follow: int = 0
    questions: list = field(default_factory=list)  # one dict per question
    kill: dict = field(default_factory=dict)
    window_ms: list = field(default_factory=list)  # others' following while the killed were away
    answers: dict = field(default_factory=dict)  # (student, qid) -> pick sent


class Lesson:
    """The teacher's class, driven step by step (``run``)."""

    def __init__(self, args, srv, store, code: str, key: str):
        self.args, self.srv, self.store, self.code, self.key = args, srv, store, code, key
        self.out = Run()
        self.rng = random.Random(41)
        self.teacher: Tab | None = None
        self.students: list[Tab] = []
        self.away: set[str] = set()  # students on the killed replica, until they are back
        self.answering: list[asyncio.Task] = []

    # --- joining ---------------------------------------------------------------------------------
    async def open_teacher(self) -> None:
        self.teacher = Tab(
            "teacher", self.srv.url, urllib.parse.urlencode({"class": self.code, "key": self.key, "present": 1})
        )
        await self.teacher.open()
        t = self.teacher
        await until("the teacher's page draws Prefill", lambda: "Prefill" in t.buttons, errors=self.out.errors)
        before = t.full_runs
        await t.click(*t.buttons["Prefill"][:2])
        await until(
            "the teacher's stage shows step 0", lambda: t.step == 0 and t.full_runs > before, errors=self.out.errors
        )

    async def join(self, i: int, delay_s: float) -> None:
        await asyncio.sleep(delay_s)
        tab = Tab(f"student {i}", self.srv.url, urllib.parse.urlencode({"class": self.code}))
        self.students.append(tab)
        errors = self.out.errors
        await tab.open()
        if not await until(
            f"{tab.name}: the join form",
            lambda: {"Class code", "Nickname (optional)"} <= set(tab.inputs) and "Join" in tab.buttons,
            errors=errors,
        ):
            return
        code_id, nick_id = tab.inputs["Class code"], tab.inputs["Nickname (optional)"]
        join_id, fragment, _ = tab.buttons["Join"]

        def typed(wid, text):
            def set_state(w):
                w.id, w.string_value = wid, text

            return set_state

        def submit(w):
            w.id, w.trigger_value = join_id, True

        t0 = now()
        await tab.send(fragment, [typed(code_id, self.code), typed(nick_id, f"student {i}"), submit])
        if await until(f"{tab.name}: seated", lambda: tab.seat is not None and param(tab.query, "seat"), errors=errors):
            self.out.join_ms.append((now() - t0) * 1000)

    # --- following -------------------------------------------------------------------------------
    def followers(self) -> list[Tab]:
        return [s for s in self.students if s.name not in self.away and not s.done]

    async def step(self, k: int, ask: bool) -> None:
        """The teacher's Step k (``ask``: a predict-first question before it), then wait until every
        follower shows it; record each follower's latency."""
        t, errors = self.teacher, self.out.errors
        if ask:
            await self.question(k)
        t0 = now()
        await t.click(*t.buttons["Step ▸"][:2])  # in predict mode this → reveals and takes the Step
        await until(f"the teacher's stage shows step {k}", lambda: (t.step or 0) >= k, errors=errors)
        t_teacher = t.reached(k, t0) or now()
        followers = self.followers()
        if not await until(
            f"every follower shows step {k}", lambda: all(s.reached(k, t0) for s in followers), 2 * TIMEOUT_S, errors
        ):
            for s in followers:
                if not s.reached(k, t0):
                    errors.append(f"{s.name} not at step {k}: {s.state()}")
        for s in followers:
            self.out.to_follow += 1
            if (seen := s.reached(k, t0)) is not None:
                self.out.followed += 1
                ms = (seen - t0) * 1000
                if self.away:  # a replica was killed: the others' following meanwhile
                    self.out.window_ms.append(ms)
                else:
                    self.out.follow_ms.append(ms)
                    self.out.follow_from_teacher_ms.append(max(0.0, seen - t_teacher) * 1000)
                    noticed = next((e for e in s.early if t0 <= e <= seen), None)
                    if noticed is not None:
                        self.out.notice_ms.append((noticed - t0) * 1000)
                        self.out.page_ms.append((seen - noticed) * 1000)
        if ask:  # the toggle off again: the next Steps are plain
            await self.toggle_predict(False)
        await asyncio.sleep(THINK_S)

    async def toggle_predict(self, on: bool) -> None:
        t = self.teacher
        wid, fragment = t.toggles["Predict first"]

        def set_state(w):
            w.id, w.bool_value = wid, on

        before, finished = t.full_runs, dict(t.finished)
        await t.send(fragment, [set_state])
        if not await until(
            f"the teacher's page ran with Predict first {'on' if on else 'off'}", lambda: t.full_runs > before
        ):
            self.out.errors.append(
                f"the teacher's page did not finish a full run within {TIMEOUT_S} s of Predict first "
                f"{'on' if on else 'off'}; runs finished (status: count) before {finished}, after {t.finished}"
            )

    # --- answering -------------------------------------------------------------------------------
    async def question(self, k: int) -> None:
        """Open the question before Step k; every student answers; check the store and time the
        teacher's count."""
        errors, students = self.out.errors, self.followers()
        t_open = now()
        toggled = asyncio.create_task(self.toggle_predict(True))  # its run may go on while students answer

        def asked():
            plan = self.store.plan(self.code)
            return (plan[1] if plan else {}).get("question")

        if not await until(f"the plan publishes the question before Step {k}", asked, errors=errors):
            await toggled
            return
        q = asked()
        qid, round_, n = q["id"], q["round"], len(q["options"])
        sent: dict[str, tuple[float, int]] = {}
        self.answering = [
            asyncio.create_task(self.answer(s, qid, round_, i, sent, t_open)) for i, s in enumerate(students)
        ]
        await asyncio.gather(*self.answering, toggled)
        t_last = max((t for t, _ in sent.values()), default=now())
        t = self.teacher
        full = len(self.students)
        got = await until(
            f"the teacher's strip shows {full} of {full} answered",
            lambda: any(tt >= t_last and a == full for tt, a, _ in t.count),
            errors=errors,
        )
        seen = next((tt for tt, a, _ in t.count if tt >= t_last and a == full), None) if got else None
        picks = [p for _, p in sent.values()]
        tally = self.store.tally(self.code, qid, round_, n)
        mine_ok = sum(
            self.store.my_answer(self.code, param(s.query, "seat"), qid, round_) == sent[s.name][1]
            for s in students
            if s.name in sent
        )
        expected = [picks.count(i) for i in range(n)]
        entry = {
            "step": k,
            "qid": qid,
            "students": len(students),
            "sent": len(sent),
            "within": sum(tt - t_open <= ANSWER_WITHIN_S for tt, _ in sent.values()),
            "double": sum(1 for i in range(len(students)) if i % 4 == 3),
            "answered": self.store.answered(self.code, qid, round_),
            "tally": tally,
            "expected": expected,
            "mine_ok": mine_ok,
            "count_ms": None if seen is None else (seen - t_last) * 1000,
            "last_after_open_s": t_last - t_open,
        }
        self.out.questions.append(entry)
        for s in students:
            if s.name in sent:
                self.out.answers[(s.name, qid, round_)] = sent[s.name][1]
        if tally != expected or entry["answered"] != len(sent) or mine_ok != len(sent) or len(sent) != len(students):
            errors.append(
                f"question at Step {k}: sent {expected} from {len(sent)} students, the store counts {tally}, "
                f"answered {entry['answered']}, my_answer right for {mine_ok}"
            )

    async def answer(self, s: Tab, qid: str, round_: int, i: int, sent: dict, t_open: float) -> None:
        key = (qid, round_)
        if not await until(
            f"{s.name}: the question's buttons", lambda: key in s.picks and s.picks[key], errors=self.out.errors
        ):
            return
        self.out.buttons_ms.append((now() - t_open) * 1000)
        await asyncio.sleep(self.rng.uniform(*ANSWER_DELAY_S))
        pick = self.rng.randrange(len(s.picks[key]))
        wid, fragment, _ = s.picks[key][pick]
        sent[s.name] = (now(), pick)
        await s.click(wid, fragment)
        if i % 4 == 3:  # a double click: the same button again before the page redraws it disabled
            await asyncio.sleep(0.05)
            await s.click(wid, fragment)

    # --- the kill --------------------------------------------------------------------------------
    async def kill_one(self, k_now: int, plain_steps) -> None:
        """Kill a replica that holds students but not the teacher; keep stepping (``plain_steps``:
        the Step numbers that may be taken meanwhile, no questions) until its students are back at
        the teacher's step with their seats and answers."""
        errors = self.out.errors
        by = {}
        for s in self.students:
            by.setdefault(s.replicas[-1], []).append(s)
        teacher_on = self.teacher.replicas[-1]
        names = sorted((r for r in by if r != teacher_on), key=lambda r: -len(by[r]))
        if not names:
            errors.append("no replica holds students without the teacher: nothing to kill")
            return
        victim = next(r for r in self.srv.replicas if r.name == names[0])
        moved = by[victim.name]
        seats = {s.name: s.seat for s in moved}
        self.away = {s.name for s in moved}
        t_kill = now()
        os.kill(victim.proc.pid, signal.SIGKILL)
        back: dict[str, float] = {}

        def check_back():
            want = self.teacher.step
            for s in moved:
                if (
                    s.name not in back
                    and s.reconnected_at
                    and s.step == want
                    and s.shown[-1][0] >= s.reconnected_at[-1]
                ):
                    back[s.name] = now()
            return len(back) == len(moved)

        k = k_now
        for nxt in plain_steps:  # the class goes on while they reconnect
            if check_back():
                break
            await self.step(nxt, ask=False)
            k = nxt
        if not await until(f"the killed replica's students back at step {k}", check_back, 2 * TIMEOUT_S, errors):
            for s in moved:
                if s.name not in back:
                    errors.append(f"{s.name} not back: {s.state()}")
        self.away = set()
        kept = sum(
            self.store.my_answer(self.code, param(s.query, "seat"), qid, rnd) == pick
            for (name, qid, rnd), pick in self.out.answers.items()
            for s in moved
            if s.name == name
        )
        self.out.kill = {
            "replica": victim.name,
            "students": len(moved),
            "after_step": k_now,
            "steps_meanwhile": k - k_now,
            "back": len(back),
            "back_s": [t - t_kill for t in back.values()],
            "closed": sum(bool(s.closed_at) for s in moved),
            "seat_kept": sum(
                s.seat == seats[s.name] and self.store.seat(self.code, param(s.query, "seat")) == s.seat for s in moved
            ),
            "answers_kept": kept,
            "answers": sum(1 for (name, _, _) in self.out.answers for s in moved if s.name == name),
            "moved_to": sorted({s.replicas[-1] for s in moved}),
            "restarted": victim.restarts,
            "warned": sum(any(LOST in a for a in s.alerts) for s in moved),
        }
        if len(back) != len(moved) or kept != self.out.kill["answers"]:
            errors.append(f"kill: {len(back)} of {len(moved)} back, {kept} of {self.out.kill['answers']} answers kept")

    # --- the whole class -------------------------------------------------------------------------
    async def run(self) -> Run:
        a = self.args
        await self.open_teacher()
        await asyncio.gather(*(self.join(i, a.ramp * i / a.students) for i in range(a.students)))
        seated = self.store.students(self.code)
        self.out.seated = seated
        await until(
            "every student's stage at step 0",
            lambda: all(s.step == 0 for s in self.followers()),
            errors=self.out.errors,
        )
        await asyncio.sleep(1.0)  # the last joiners' page runs end
        pids = [r.proc.pid for r in self.srv.replicas]
        cpu, t = sum(cpu_seconds(p) for p in pids), now()
        await asyncio.sleep(a.idle)
        self.out.idle_cores = (sum(cpu_seconds(p) for p in pids) - cpu) / (now() - t)
        asked = question_steps(a.steps, a.questions)
        k = 0
        while k < a.steps:
            k += 1
            await self.step(k, ask=k in asked)
            if k == a.kill_after and a.kill_after:
                plain = [j for j in range(k + 1, a.steps + 1)]
                plain = plain[: next((n for n, j in enumerate(plain) if j in asked), len(plain))]
                before = self.teacher.step
                await self.kill_one(k, plain)
                k = self.teacher.step if self.teacher.step is not None else before
        for tab in [self.teacher, *self.students]:
            self.out.errors += tab.exceptions
        return self.out


def question_steps(steps: int, questions: int) -> set[int]:
    """The Steps asked first, evenly spread (20 and 5: 3, 7, 10, 13, 17; 3 and 1: 2)."""
    return {round(steps * (j + 1) / (questions + 1)) for j in range(questions)} if questions else set()


async def warm(url: str, replicas) -> None:
    """Each replica's first session imports the pages and loads the model: one plain page load and
    Prefill per replica (pinned by its cookie) before the class starts."""

    async def one(name: str):
        tab = Tab(f"warm {name}", url, "", cookie=f"{COOKIE}={name}")
        await tab.open()
        await until(f"replica {name} draws Prefill", lambda: "Prefill" in tab.buttons)
        await tab.click(*tab.buttons["Prefill"][:2])
        await until(f"replica {name} prefills", lambda: tab.step == 0)
        await tab.close()

    await asyncio.gather(*(one(r.name) for r in replicas))


def server_kwargs(store_url: str) -> dict:
    """How this checkout's ``class_server`` takes a class store: its own argument if it has one,
    else ``--class-store`` for app.py, and the environment variable every replica inherits."""
    os.environ[ENV_URL] = store_url
    params = inspect.signature(__import__("serve.replicas", fromlist=["class_server"]).class_server).parameters
    if "class_store" in params:
        return {"class_store": store_url}
    return {}


async def main_async(args) -> dict:
    from serve.nginx import free_port
    from serve.replicas import class_server

    tmp = Path(tempfile.mkdtemp(prefix="class-mode-"))
    store_url = args.store or f"sqlite:///{tmp / 'classes.db'}"
    res = {"store": store_url, "load_before": os.getloadavg()[0]}
    try:
        t_start = now()
        with class_server(args.replicas, port=free_port(), **server_kwargs(store_url)) as srv:
            res["started_s"] = now() - t_start
            pids = [r.proc.pid for r in srv.replicas]
            await warm(srv.url, srv.replicas)
            store = open_store(store_url)
            code, key = store.open_class()
            res["code"] = code
            lesson = Lesson(args, srv, store, code, key)
            cpu0 = {p: cpu_seconds(p) for p in pids}
            me0, t0 = time.process_time(), now()
            gc.collect()
            gc.disable()  # as bench.ws_session: the clients' pauses would land on every reply in flight
            try:
                res["run"] = await lesson.run()
            finally:
                gc.enable()
                for tab in [lesson.teacher, *lesson.students]:
                    if tab is not None:
                        await tab.close()
            res["elapsed_s"] = now() - t0
            live = [r.proc.pid for r in srv.replicas if r.proc.poll() is None]
            res["server_cpu_s"] = sum(cpu_seconds(p) - cpu0.get(p, 0.0) for p in live)  # the killed one's is lost
            res["client_cpu_s"] = time.process_time() - me0
            res["replicas_of"] = {s.name: s.replicas for s in lesson.students}
            try:
                store.end(code, key)
            except Exception as err:  # noqa: BLE001 — reported, the class is gone anyway after 12 h
                res["run"].errors.append(f"ending the class through the store: {err}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return res


def ms(values) -> str:
    p50, p95 = p50_p95(values)
    return f"{p50:,.0f} / {p95:,.0f} ms"


def report(res: dict, args) -> int:
    r: Run = res["run"]
    n = args.students
    print(
        f"machine: {os.cpu_count()} cores, load average before {res['load_before']:.1f}; {args.replicas} replicas "
        f"behind nginx (started in {res['started_s']:.0f} s), class store {res['store']}; 1 teacher + {n} students, "
        f"each a protocol-level tab in this process that keeps the browser's fragment timers (auto-rerun every "
        f"0.5 s); the class was opened through the store by this bench (open_class: code and teacher key), "
        f"everything else through nginx; {args.steps} Steps, {args.questions} asked first, students joined over "
        f"{args.ramp:g} s\n"
    )
    print("| measure | value |\n|---|---:|")
    print(f"| students seated through the join form (store: students) | {r.seated} of {n} |")
    print(f"| join: send Join → the seat line, p50 / p95 | {ms(r.join_ms)} |")
    print(f"| Steps followed (followers × Steps that reached the teacher's step) | {r.followed} of {r.to_follow} |")
    print(
        f"| follow: teacher's Step click → follower's stage shows it, p50 / p95 (goal p95 ≤ 1 s) | {ms(r.follow_ms)} |"
    )
    print(f"| … from the teacher's own stage showing it, p50 / p95 | {ms(r.follow_from_teacher_ms)} |")
    print(
        f"| … teacher's click → the follower's poll sees the new plan (reruns its app), p50 / p95 | {ms(r.notice_ms)} |"
    )
    print(f"| … that app rerun → its stage shows the Step, p50 / p95 | {ms(r.page_ms)} |")
    print(
        f"| a class sitting still, every tab polling every 0.5 s: replicas' CPU over {args.idle:g} s | "
        f"{r.idle_cores:.2f} cores |"
    )
    qs = r.questions
    sent = sum(q["sent"] for q in qs)
    print(f"| questions asked | {len(qs)} |")
    print(
        f"| answers sent within {ANSWER_WITHIN_S} s of the question | {sum(q['within'] for q in qs)} of "
        f"{sum(q['students'] for q in qs)} |"
    )
    print(f"| question opened → its buttons on a student's page, p50 / p95 | {ms(r.buttons_ms)} |")
    print(f"| … of them double clicks (the same button twice, 50 ms apart) | {sum(q['double'] for q in qs)} |")
    once = all(q["tally"] == q["expected"] and q["answered"] == q["sent"] for q in qs)
    print(
        f"| answers counted by the store (tally) / exactly once | {sum(sum(q['tally']) for q in qs)} of {sent} / "
        f"{'yes' if once and qs else 'NO'} |"
    )
    print(f"| each seat's my_answer equals its pick | {sum(q['mine_ok'] for q in qs)} of {sent} |")
    counts = [q["count_ms"] for q in qs if q["count_ms"] is not None]
    print(
        f'| last answer sent → the teacher\'s strip shows "{n} of {n} answered", p50 / p95 (goal p95 ≤ 1 s) | '
        f"{ms(counts)} |"
    )
    k = r.kill
    if "replica" in k:
        back = k["back_s"]
        print(f"| replica killed (SIGKILL) after Step {k['after_step']} | {k['replica']}, {k['students']} students |")
        print(
            f"| … its students' websockets closed / back at the teacher's step | {k['closed']} / {k['back']} of "
            f"{k['students']} |"
        )
        print(
            f"| … kill → back at the teacher's step, p50 / max | {p50_p95(back)[0]:.1f} / "
            f"{max(back, default=float('nan')):.1f} s |"
        )
        print(f"| … the replicas they came back on | {', '.join(k['moved_to'])} |")
        print(
            f"| … same seat / answers kept (my_answer) | {k['seat_kept']} of {k['students']} / {k['answers_kept']} "
            f"of {k['answers']} |"
        )
        print(f"| … shown the restarted-session note (ui.frame.note_lost_session) | {k['warned']} of {k['students']} |")
        print(f"| other students' following meanwhile ({k['steps_meanwhile']} Steps), p50 / p95 | {ms(r.window_ms)} |")
    print(f"| errors | {len(r.errors)} |")
    print(
        f"| wall time of the class / replicas' CPU / this process's CPU | {res['elapsed_s']:.0f} s / "
        f"{res['server_cpu_s']:.0f} s / {res['client_cpu_s']:.0f} s |"
    )
    if qs:
        print("\n| question (before Step) | answers sent | last one after | store tally | sent | last answer → count |")
        print("|---|---:|---:|---|---|---:|")
        for q in qs:
            c = "—" if q["count_ms"] is None else f"{q['count_ms']:,.0f} ms"
            print(
                f"| {q['step']} | {q['sent']} of {q['students']} | {q['last_after_open_s']:.1f} s | {q['tally']} | "
                f"{q['expected']} | {c} |"
            )
    for e in r.errors[:15]:
        print("error:", e)
    return 1 if r.errors else 0


QUICK = {"replicas": 2, "students": 6, "steps": 3, "questions": 1, "kill_after": 2, "ramp": 1.0, "idle": 2.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicas", type=int, default=4)
    ap.add_argument("--students", type=int, default=40)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--questions", type=int, default=5)
    ap.add_argument("--kill-after", type=int, default=None, help="the Step after which a replica is killed (0: none)")
    ap.add_argument("--ramp", type=float, default=10.0, help="seconds over which the students open the link")
    ap.add_argument("--idle", type=float, default=5.0, help="seconds the class sits still, polling, before Step 1")
    ap.add_argument("--store", help="the class store's URL (default: a new SQLite file in a temporary folder)")
    ap.add_argument("--quick", action="store_true", help="seconds: " + ", ".join(f"{k} {v}" for k, v in QUICK.items()))
    args = ap.parse_args()
    if args.quick:
        vars(args).update(QUICK)
    if args.kill_after is None:
        args.kill_after = args.steps // 2
    raise SystemExit(report(asyncio.run(main_async(args)), args))


if __name__ == "__main__":
    main()
