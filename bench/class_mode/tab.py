"""One browser tab of a class, at streamlit's websocket protocol (``Tab``), and waiting on what tabs show."""

from __future__ import annotations

import asyncio
import re
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

COOKIE = "class_replica"
TIMEOUT_S = 60  # a wait that runs over this is an error
STEPS = re.compile(r"decode steps (\d+)")
SEAT = re.compile(r"Class (\w+) · seat (\d+) · ([a-z ]+?)(?: · step (\d+))?$")
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
