"""The class's engine as a service: one ``core.serving.engine.ServingEngine`` per room, stepped by one thread.

A **room** is a class (its code) or one browser alone (its tabs and simulated classmates are the other requests).
Requests come in through ``send`` from any thread (the routes' event loop) and wait in an inbox the engine thread
drains at its next step, so only that thread touches an engine. With nothing to do the thread waits on a condition
(no CPU). After each step every request's new tokens become events (text and milliseconds since Send) and the room's
state (the batch, blocks, timelines, no prompt text) is published; coroutines waiting on either are woken from the
engine thread (``Signal``). ``epoch`` names this service's life: a page that finds another epoch knows the engine
restarted and says so. Imports no streamlit.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace

from core.decode.generate import SamplingConfig
from core.model.tokenizer import decode, encode
from core.serving.engine import EngineSettings, ServingEngine
from serve.engine_events import Signal, Stream, request_numbers
from serve.engine_state import room_state

LOG = logging.getLogger("inference_explainer")
FAILED = "The engine hit an error and ended this request (the details are in the server's log): press Send again."
PROMPT_MAX_CHARS = 2_000  # a prompt box's bound (the decode page's too)
NEW_TOKENS = (1, 64)  # new tokens a student may ask for
KEEP_S = 120.0  # a finished request's events stay this long for a page that reconnects
ROOM_IDLE_S = 30 * 60.0  # a room nobody sent to for this long is dropped (its blocks go)
ROOM_WAITING_MAX = 256  # requests waiting or running in one room (a class of 40, its classmates, a document)
MAX_ROOMS = 32  # of each kind (classes, browsers alone)
HISTORY = 200  # engine steps a room keeps for its display
STATE_EVERY_S = 0.25  # a room's state is built at most this often while its engine works (and when it goes idle)
SIMULATED = [  # what simulated classmates ask (prompts only: the engine writes the rest)
    "The cat sat on the",
    "Once upon a time",
    "The weather today is",
    "In the morning the children",
    "A long time ago, in a small town,",
    "The best way to learn is",
    "She opened the door and saw",
    "Why is the sky blue? Because",
]


@dataclass
class Room:
    """One engine and its requests' streams."""

    engine: ServingEngine
    streams: dict[str, Stream] = field(default_factory=dict)
    inbox: deque = field(default_factory=deque)
    labels: dict[str, str] = field(default_factory=dict)  # owner → "Student 3"
    system_prompt: str = ""
    last_used: float = field(default_factory=time.monotonic)
    state: dict = field(default_factory=dict)
    state_at: float = 0.0  # time.monotonic() of the state's last build
    version: int = 0
    documents: int = 0  # long documents sent so far: each is numbered, so none finds another's blocks cached


class RoomFull(ValueError):
    """Too many requests from one browser, or too many rooms: said in a sentence."""


class EngineService:
    """Rooms of engines over one read-only ``model`` and ``tokenizer`` (``model_label`` is said on every page), with
    ``n_blocks`` × ``block_size`` positions of KV cache per room."""

    def __init__(self, model, tokenizer, model_label: str, n_blocks: int = 256, block_size: int = 16,
                 end_id: int | None = None):  # fmt: skip
        self.model, self.tokenizer, self.model_label, self.end_id = model, tokenizer, model_label, end_id
        self.n_blocks, self.block_size = n_blocks, block_size
        self.epoch = secrets.token_hex(4)
        self.rooms: dict[str, Room] = {}
        self.signal = Signal()
        self._cv = threading.Condition()
        self._thread = threading.Thread(target=self._loop, name="class-engine", daemon=True)
        self._thread.start()

    # -- from the routes (any thread) --------------------------------------------------------------------------
    def room(self, name: str) -> Room:
        """The room ``name`` (``class:CODE`` or ``alone:BROWSER``), made if new. Past ``MAX_ROOMS`` of its kind the
        least recently used idle one is dropped; with none idle, ``RoomFull``."""
        with self._cv:
            room = self.rooms.get(name)
            if room is None:
                kind = name.split(":")[0]
                same = [(r.last_used, n) for n, r in self.rooms.items() if n.split(":")[0] == kind]
                if len(same) >= MAX_ROOMS:
                    idle = [(t, n) for t, n in same if self.rooms[n].engine.idle and not self.rooms[n].inbox]
                    if not idle:
                        raise RoomFull("The engine serves as many rooms as it can: try again in a minute.")
                    del self.rooms[min(idle)[1]]
                engine = ServingEngine(self.model, self.n_blocks, self.block_size, EngineSettings(), self.end_id)
                room = self.rooms[name] = Room(engine)
                room.state = room_state(self, room)
            room.last_used = time.monotonic()
            return room

    def peek(self, name: str) -> Room | None:
        """The room ``name`` if it exists (a page that only reads makes none)."""
        return self.rooms.get(name)

    def long_document(self, room_name: str, owner: str) -> str:
        """Send a request as long as the model's context (its prompt: "Document n." and the shipped corpus's words,
        repeated), 4 new tokens: the long prefill whose stall the class watches. Its number is new each time, so its
        first block differs from every earlier document's and the prefix cache finds none of it: each prefills
        whole. Returns its id."""
        ctx, room = self.model.cfg.block_size, self.room(room_name)
        with self._cv:
            room.documents += 1
            n = room.documents
        words = " ".join(SIMULATED)
        ids = encode(self.tokenizer, f"Document {n}. " + " ".join([words] * (1 + ctx // 8)))[: ctx - 3]
        return self._queue(room, f"{owner}:document", ids, 4, SamplingConfig(), "Long document", 1)

    def send(self, room_name: str, owner: str, text: str, new_tokens: int, seed: int | None = None,
             label: str | None = None, in_flight: int = 1) -> str:  # fmt: skip
        """Queue a request; returns its id (unguessable: the page's stream names it). Raises ``ValueError`` with a
        sentence for an empty or too long prompt, new tokens out of range, or ``in_flight`` of this owner's
        requests already waiting or running (``RoomFull``)."""
        if not isinstance(text, str) or not text.strip():
            raise ValueError("Type a prompt first: the engine needs at least one token to start from.")
        if len(text) > PROMPT_MAX_CHARS:
            raise ValueError(f"A prompt is at most {PROMPT_MAX_CHARS:,} characters (this one is {len(text):,}).")
        lo, hi = NEW_TOKENS
        if isinstance(new_tokens, bool) or not isinstance(new_tokens, int) or not lo <= new_tokens <= hi:
            raise ValueError(f"New tokens: a whole number from {lo} to {hi}.")
        room = self.room(room_name)
        ids = encode(self.tokenizer, room.system_prompt + text)
        ctx = self.model.cfg.block_size
        if len(ids) + new_tokens - 1 > ctx:
            raise ValueError(
                f"That prompt is {len(ids):,} tokens; with {new_tokens} new ones it passes the model's context of "
                f"{ctx:,} positions. Shorten it or ask for fewer tokens."
            )
        sampling = SamplingConfig() if seed is None else SamplingConfig("sample", 1.0, 0, int(seed))
        return self._queue(room, owner, ids, new_tokens, sampling, label, in_flight)

    def _queue(self, room: Room, owner: str, ids: list[int], new_tokens: int, sampling, label, in_flight) -> str:
        with self._cv:
            mine = [s for s in room.streams.values() if s.owner == owner and s.done_at is None]
            if sum(s.done_at is None for s in room.streams.values()) >= ROOM_WAITING_MAX:
                raise RoomFull(f"The engine has {ROOM_WAITING_MAX} requests waiting or running here: Send again soon.")
            if len(mine) >= in_flight:
                if in_flight == 1:
                    raise RoomFull("Your request is still running: wait for it to end, then Send again.")
                raise RoomFull(f"{len(mine)} of your requests are running (at most {in_flight} at once): wait for one.")
            rid = secrets.token_urlsafe(12)
            label = label or room.labels.setdefault(owner, f"Student {len(room.labels) + 1}")
            room.streams[rid] = Stream(rid, owner, label, [{"kind": "queued", "prompt_tokens": len(ids)}])
            room.inbox.append(("send", rid, ids, new_tokens, sampling, time.perf_counter()))
            room.last_used = time.monotonic()
            self._cv.notify()
        return rid

    def configure(self, room_name: str, **changes) -> EngineSettings:
        """Change a room's settings from its next step (fields of ``EngineSettings``; ``system_prompt``: text put
        before every later request). Raises ``ValueError`` for a value out of range, in a sentence."""
        room = self.room(room_name)
        system = changes.pop("system_prompt", None)
        if system is not None and not isinstance(system, str):
            raise ValueError("A system prompt is text.")
        try:
            system_ids = encode(self.tokenizer, system) if system else []
        except UnicodeError:
            raise ValueError("That system prompt has a character that is not text (a lone surrogate).") from None
        settings = replace(room.engine.settings, **changes)  # validated here, before the engine thread sees it
        with self._cv:
            if system is not None:
                if len(system) > PROMPT_MAX_CHARS:
                    raise ValueError(f"A system prompt is at most {PROMPT_MAX_CHARS:,} characters.")
                room.system_prompt = system
            room.inbox.append(("configure", settings))
            self._cv.notify()
        if system and settings.prefix_caching:  # computed once now: every later request reads its whole blocks
            with contextlib.suppress(RoomFull):
                self._queue(room, "system", system_ids, 1, SamplingConfig(), "System prompt", 1)
        return settings

    def sent_by(self, room_name: str, owner: str) -> int:
        """How many requests ``owner`` has sent in the room (kept ones: running, or ended in the last ``KEEP_S``)."""
        room = self.room(room_name)
        with self._cv:
            return sum(s.owner == owner for s in room.streams.values())

    def stream(self, room_name: str, rid: str, owner: str) -> Stream | None:
        """A request's stream, for its owner only (None: unknown here, e.g. after a restart)."""
        room = self.rooms.get(room_name)
        s = room.streams.get(rid) if room else None
        return s if s is not None and s.owner == owner else None

    # -- the engine thread ---------------------------------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            with self._cv:
                while not any(r.inbox or not r.engine.idle for r in self.rooms.values()):
                    self._cv.wait(timeout=60.0)
                    self._drop_idle_rooms()
                busy = [(name, r) for name, r in self.rooms.items() if r.inbox or not r.engine.idle]
            for _, room in busy:
                try:
                    self._step(room)
                except Exception:  # one room's fault never stops the engine for every room
                    LOG.exception("class engine: a step failed; the room's requests are ended")
                    self._fail(room)
            self.signal.fire()

    def _fail(self, room: Room) -> None:
        """End every request of ``room`` with a sentence and give it a fresh engine (same settings)."""
        with self._cv:
            for s in room.streams.values():
                if s.done_at is None:
                    s.events.append({"kind": "ended", "why": FAILED})
                    s.done_at = time.monotonic()
            settings = room.engine.settings
            room.engine = ServingEngine(self.model, self.n_blocks, self.block_size, settings, self.end_id)
            room.inbox.clear()
            room.state = room_state(self, room)
            room.version += 1

    def _drop_idle_rooms(self) -> None:
        now = time.monotonic()
        for name in [n for n, r in self.rooms.items() if r.engine.idle and now - r.last_used > ROOM_IDLE_S]:
            del self.rooms[name]

    def _step(self, room: Room) -> None:
        engine = room.engine
        with self._cv:
            inbox, room.inbox = list(room.inbox), deque()
        for item in inbox:
            if item[0] == "configure":
                engine.configure(item[1])
            else:
                _, rid, ids, new_tokens, sampling, sent_at = item
                room.streams[rid].arrival = sent_at
                try:
                    engine.submit(rid, ids, new_tokens, sampling, arrival=sent_at)
                except Exception as err:  # more blocks than the pool, a bad seed: said on that student's page only
                    room.streams[rid].events.append({"kind": "ended", "why": f"The engine could not take it: {err}."})
                    room.streams[rid].done_at = time.monotonic()
        if not engine.idle:
            engine.step()
            del engine.history[:-HISTORY]
        now = time.monotonic()
        with self._cv:
            for rid, s in list(room.streams.items()):
                if s.done_at is not None:
                    if now - s.done_at > KEEP_S:
                        del room.streams[rid]
                    continue
                r = engine.requests.get(rid)
                if r is not None:
                    self._events(s, r, now)
                    if r.state == "finished":
                        engine.forget(rid)
            if engine.idle or now - room.state_at >= STATE_EVERY_S:  # read at most 4 times a second
                room.state, room.state_at = room_state(self, room), now
                room.version += 1

    def _events(self, s: Stream, r, now: float) -> None:
        """New tokens as events: the text each adds and ms since Send; at the end the request's numbers. The text is
        decoded from all outputs, and an incomplete character at its end (a byte-level token that is part of one:
        "\ufffd") waits for the token that completes it, so a character split over two tokens appears whole."""
        if r.admitted_at is not None and s.admitted_ms is None:
            s.admitted_ms = 1000 * (r.admitted_at - r.arrival)
        for i in range(len(s.token_ms), len(r.token_times)):
            text = decode(self.tokenizer, r.outputs[: i + 1])
            if i + 1 < len(r.outputs) or r.state != "finished":
                text = text.rstrip("\ufffd")
            s.token_ms.append(1000 * (r.token_times[i] - r.arrival))
            s.events.append({"kind": "token", "i": i, "text": text[s.text_len :], "ms": s.token_ms[-1]})
            s.text_len = len(text)
        if r.state == "finished":
            s.numbers = request_numbers(r)
            s.events.append({"kind": "done", **s.numbers})
            s.done_at = now
