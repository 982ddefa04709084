"""One browser tab of a class at streamlit's websocket protocol (``Tab``), and waiting on what tabs show."""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.class_mode import web
from bench.class_mode.page import Listener, Page, now

COOKIE = "class_replica"  # nginx's affinity cookie (serve/nginx.py)
TEACHER, SEAT = "explainer_teacher", "explainer_seat"  # serve/class_routes.py's cookies
TIMEOUT_S = 60  # a wait that runs over this is an error
INTERNAL = "$$STREAMLIT_INTERNAL_KEY"  # a components-v2 component's trigger: INTERNAL_<component id>__events
FRAGMENT_RUN = ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY
HOLD_S = 3.0  # frontend/class_events.js's HOLD_MS: the longest a pulse waits for a run to draw the listener


@dataclass(eq=False)
class Tab(Page):
    """One browser tab: its cookies (``jar``), a reader task that takes every ForwardMsg as it arrives (nothing
    is drawn), the browser's fragment timers, a closed websocket reopened as the frontend does, and the class
    listener's browser side (``frontend/class_events.js``): one event stream per tab, each new pulse sent once
    as the listener's trigger value, in a rerun of the fragment that drew the listener, one at a time: after a pulse
    is handed over, later ones wait until a run has drawn the listener again (or ``HOLD_S``)."""

    base: str = ""  # http://127.0.0.1:PORT of nginx
    query: str = ""  # the address's query string; the server rewrites it (page_info_changed)
    page_name: str = ""  # the address's page (its path), until the server names the page's hash
    jar: web.Jar = field(default_factory=web.Jar)
    ws: object = None
    session_id: str = ""
    page_hash: str = ""
    values: dict = field(default_factory=dict)  # widget id -> setter of a value this tab set (text, toggle)
    timers: dict = field(default_factory=dict)  # fragment id -> (interval, task)
    closed_at: list = field(default_factory=list)  # times the websocket closed under this tab
    reconnected_at: list = field(default_factory=list)
    replicas: list = field(default_factory=list)  # the replica names this tab was served by, in order
    done: bool = False
    finished: dict = field(default_factory=dict)  # script_finished status -> how many
    full_runs: int = 0  # full script runs finished
    running: bool = False  # a run started (new_session) and has not finished
    page_elements: int = 0  # elements drawn outside any fragment (by full runs)
    messages: int = 0  # ForwardMsgs received
    last_message: float = 0.0
    trouble: list = field(default_factory=list)  # what went wrong at the protocol level (not on the page)
    stream: web.EventStream | None = None
    pulses: list = field(default_factory=list)  # [(time, text)] every event the stream brought
    forwarded: list = field(default_factory=list)  # [(time, text)] the pulses sent as trigger values
    _last: str | None = None  # the hub's last pulse, and what the listener watches of the one forwarded last
    _sent: str | None = None
    _held: asyncio.TimerHandle | None = None  # a pulse was handed over: later ones wait for a run to draw the listener
    stale_runs: list = field(default_factory=list)  # [(time, page hash)] fragment runs of a page no longer shown
    retries: int = 0  # reruns the listener asked for by itself (the page held what the store refused)
    _retry: asyncio.Task | None = None
    _send_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _reader: asyncio.Task | None = None

    def cookie(self, name: str) -> tuple[str, str] | None:
        """(code, secret) of a class cookie this browser holds."""
        value = self.jar.values.get(name, "").strip('"')
        return tuple(value.split(".", 1)) if "." in value else None

    async def open(self, resume: bool = False) -> None:
        """As the frontend: the health URL (nginx sets or moves the affinity cookie), then the websocket with
        this browser's cookies (streamlit reads ``st.context.cookies`` from its upgrade request), then a full
        run of the address's page."""
        await asyncio.to_thread(web.get, self.base, "/_stcore/health", self.jar)
        self._fresh = True
        self.replicas.append(self.jar.values.get(COOKIE, "-"))
        protocols = ["streamlit", "PLACEHOLDER_AUTH_TOKEN"] + ([self.session_id] if resume and self.session_id else [])
        self.ws = ws = await websockets.connect(
            self.base.replace("http://", "ws://") + "/_stcore/stream",
            subprotocols=protocols,
            max_size=None,
            additional_headers=self.jar.header() or None,
            proxy=None,
            open_timeout=TIMEOUT_S,
        )
        self._reader = asyncio.create_task(self._read(ws))
        await self.send()

    async def navigate(self, query: str, page: str = "") -> None:
        """``window.location.assign``: this page and its event stream are gone; a fresh session opens at
        ``query`` on page ``page`` (its address's path, as ``ui.frame`` names it; "": the default page) with the
        cookies the browser holds now."""
        self._stop_timers()
        if self.stream is not None:
            self.stream.close()
        self.stream, self._last, self._sent, self.session_id, self.page_hash = None, None, None, "", ""
        self._release()
        if self._retry is not None:
            self._retry.cancel()
        old, self.ws = self.ws, None
        if old is not None:
            await old.close()
        self.values, self.query, self.page_name = {}, query, page
        self.forget()
        await self.open()

    async def send(self, fragment: str = "", widgets=(), auto: bool = False) -> None:
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_script_hash = self.page_hash
        msg.rerun_script.page_name = "" if self.page_hash else self.page_name  # a first run: the address's page
        msg.rerun_script.fragment_id = fragment
        msg.rerun_script.is_auto_rerun = auto
        given = set()
        for set_state in widgets:
            w = msg.rerun_script.widget_states.widgets.add()
            set_state(w)
            given.add(w.id)
            if w.WhichOneof("value") not in ("trigger_value", "json_trigger_value"):
                self.values[w.id] = set_state
        for wid, set_state in self.values.items():  # as the frontend: every value it holds, in every rerun
            if wid not in given:
                set_state(msg.rerun_script.widget_states.widgets.add())
        async with self._send_lock:
            await self.ws.send(msg.SerializeToString())

    async def click(self, widget_id: str, fragment: str, widgets=()) -> None:
        def trigger(w):
            w.id, w.trigger_value = widget_id, True

        await self.send(fragment, [*widgets, trigger])

    # --- the class listener's browser side (frontend/class_events.js) ----------------------------------
    def _listened(self, listener: Listener) -> None:
        path = f"/explainer/class/events?code={urllib.parse.quote(listener.code)}"
        if self.stream is None or self.stream.path != path:
            if self.stream is not None:
                self.stream.close()
            self.stream, self._last, self._sent = web.EventStream(self.base, path, self.jar, self.deliver), None, None
        # As the component's function, called for each drawing (data.run is new each run): what the session ran
        # for is sent no more, and the pulse handed over last is done.
        self._sent = None if listener.seen is None else self._key(listener.seen)
        self._release()
        if self._last is not None:
            self._forward(self._last)
        if self._retry is not None:
            self._retry.cancel()
        self._retry = None
        if listener.retry:  # the page holds what the store refused: it runs again in retry_ms with the last pulse
            last = json.loads(self._last) if self._last is not None else {}
            self._retry = asyncio.create_task(self._again({**last, "retry": listener.retry}, listener.retry_ms / 1000))

    async def _again(self, pulse: dict, after_s: float) -> None:
        await asyncio.sleep(after_s)
        self.retries += 1
        self._send_pulse(json.dumps(pulse, separators=(",", ":")))

    def deliver(self, text: str) -> None:
        """An event of the class's stream, as the ``EventSource`` hands it to the page's listener."""
        self.pulses.append((now(), text))
        self._last = text
        if self.listener is not None:
            self._forward(text)

    def _key(self, text: str) -> str:
        """What the listener watches of pulse ``text``: two pulses alike in it run the page once."""
        watch, pulse = self.listener.watch, json.loads(text)
        flags = [bool(pulse.get(k)) for k in ("unavailable", "ended")]
        return text if watch is None else json.dumps(flags + [pulse.get(k) for k in watch])

    def _forward(self, text: str) -> None:
        """Each pulse (what the listener watches of it) reaches the server once, whichever listener the page has
        drawn by then, and only when no pulse handed over earlier waits for its run."""
        key = self._key(text)
        if key == self._sent or self._held is not None or self.ws is None:
            return
        self._sent = key
        self._held = asyncio.get_running_loop().call_later(HOLD_S, self._hold_over)
        self.forwarded.append((now(), text))
        self._send_pulse(text)

    def _hold_over(self) -> None:
        """No run drew the listener within ``HOLD_S``: a run still going is waited for; else the latest pulse goes,
        the one handed over last again too (its run never came)."""
        self._held = None
        if self.running:
            self._held = asyncio.get_running_loop().call_later(HOLD_S, self._hold_over)
            return
        if self.listener is not None and self._last is not None:
            self._sent = None
            self._forward(self._last)

    def _release(self) -> None:
        if self._held is not None:
            self._held.cancel()
        self._held = None

    def _send_pulse(self, text: str) -> None:
        """A rerun of the listener's fragment with ``text`` as its trigger value, as the browser sends it."""
        if self.ws is None or self.listener is None:
            return
        component, fragment = self.listener.id, self.listener.fragment

        def trigger(w):
            w.id = f"{INTERNAL}_{component}__events"
            w.json_trigger_value = json.dumps([{"event": "pulse", "value": json.loads(text)}], separators=(",", ":"))

        task = asyncio.create_task(self.send(fragment, [trigger]))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # a closed socket: the reconnect redraws

    # --- reading --------------------------------------------------------------------------------------
    async def _read(self, ws) -> None:
        try:
            async for raw in ws:
                fm = ForwardMsg()
                fm.ParseFromString(raw)
                self._take(fm)
        except websockets.ConnectionClosed:
            pass
        if self.done or ws is not self.ws:
            return  # closed by this tab (the end, or a page load)
        self.closed_at.append(now())
        self._stop_timers()
        await self._reconnect()

    async def _reconnect(self) -> None:
        """As streamlit's frontend: ping the health URL until it answers (nginx moves the cookie to a live
        replica), then a websocket asking to resume the old session, then a full rerun."""
        deadline = now() + TIMEOUT_S
        while True:
            await asyncio.sleep(0.5)
            try:
                await self.open(resume=True)
                self.reconnected_at.append(now())
                return
            except (OSError, websockets.InvalidHandshake):
                if now() > deadline:
                    self.trouble.append(f"{self.name}: could not reconnect within {TIMEOUT_S} s")
                    self.done = True
                    return

    def _stop_timers(self, ids=None) -> None:
        for fid in list(self.timers) if ids is None else ids:
            if fid in self.timers:
                self.timers.pop(fid)[1].cancel()

    def _auto_rerun(self, interval: float, fid: str) -> None:
        """A ``st.fragment(run_every=…)``'s timer, as the frontend's ``handleAutoRerun``."""
        if fid in self.timers and self.timers[fid][0] == interval:
            return

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
        self.messages, self.last_message = self.messages + 1, now()
        if kind == "new_session":
            self.running = True
            self.session_id = fm.new_session.initialize.session_id or self.session_id
            self.page_hash = fm.new_session.page_script_hash or self.page_hash
            ns = fm.new_session
            if fm.metadata.run.fragment_ids and self.nav_hash and ns.page_script_hash not in ("", self.nav_hash):
                # A fragment of a page the browser no longer shows, run after the page moved on: the frontend
                # drops the body it holds (the blank page of issue 54).
                self.stale_runs.append((now(), ns.page_script_hash))
        elif kind == "navigation":  # the page this run shows: a browser's reruns name it (not the main script)
            self.page_hash = fm.navigation.page_script_hash or self.page_hash
            self.nav_hash, self.lesson_bar = fm.navigation.page_script_hash, None
        elif kind == "page_info_changed":
            self.query = fm.page_info_changed.query_string
        elif kind == "auto_rerun":
            self._auto_rerun(fm.auto_rerun.interval, fm.auto_rerun.fragment_id)
        elif kind == "stop_auto_rerun":
            self._stop_timers(list(fm.stop_auto_rerun.fragment_ids))
        elif kind == "script_finished":
            self.running = False
            self.finished[fm.script_finished] = self.finished.get(fm.script_finished, 0) + 1
            if fm.script_finished in (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR):
                self.full_runs += 1  # a fragment's run ends FINISHED_FRAGMENT_RUN_SUCCESSFULLY
        elif kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
            self.page_elements += not fm.delta.fragment_id
            if (listener := self.element(fm.delta.new_element, fm.delta.fragment_id)) is not None:
                self._listened(listener)

    def state(self) -> str:
        """What this tab shows, for an error message."""
        return (
            f"replicas {self.replicas}, stage steps {[s for _, s in self.shown[-3:]]}, class line step "
            f"{self.strip_step}, seat {self.seat}, runs finished (status: count) {self.finished}, reconnects "
            f"{len(self.reconnected_at)}, pulses {len(self.pulses)} (last {self._last}), forwarded "
            f"{len(self.forwarded)}, last alert {self.alerts[-1][1][:60] if self.alerts else None!r}"
        )

    async def close(self) -> None:
        self.done = True
        self._stop_timers()
        self._release()
        if self._retry is not None:
            self._retry.cancel()
        if self.stream is not None:
            self.stream.close()
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
