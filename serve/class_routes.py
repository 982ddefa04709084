"""Class mode's HTTP routes, mounted beside the app on ``main.py``'s ``st.App``.

Credentials never travel in an address, a page or a log line: opening a class, joining it and pairing a second
teacher device are POSTs whose answer sets this browser's HttpOnly, SameSite cookie (``TEACHER`` holds the
class's code and a teacher key, ``SEAT`` the code and a seat token); a session's script reads them with
``st.context.cookies``. Wrong class codes are counted per browser (``BROWSER``, a random id in a cookie), never per
address: a whole class reaches the server from one address (nginx, a school's NAT).

Only the app's own pages may change anything (OWASP's CSRF guidance: verify the origin with standard headers): a
POST whose ``Origin`` (or, without one, ``Referer``) is not the app's own origin as served — directly, behind nginx
(``X-Forwarded-Host``/``-Proto``) or under ``--public-url`` — or whose body is not ``application/json``, is refused
before its body is read, and sets or deletes no cookie. A body is read only up to ``BODY_MAX`` bytes (413 past it).

The event stream (``GET …/events?code=CODE``, server-sent events) tells a class's pages that the plan or the count
changed, so no page polls: each replica keeps one watcher per class that reads the store's ``pulse`` a few times a
second and sends every listening page the new pulse (never a secret: versions and counts), or that the store cannot
be reached, or that the class has ended. Imports no streamlit.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hmac
import json
import math
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from core.classroom import rules
from core.classroom.rules import (
    ClassFull,
    ClassNotFound,
    JoiningClosed,
    StoreUnavailable,
    TooManyJoins,
)
from core.classroom.store import open_store

PREFIX = "/explainer/class"
TEACHER, SEAT, BROWSER = "explainer_teacher", "explainer_seat", "explainer_browser"
PULSE_S = 0.2  # how often a replica's watcher reads a class's pulse (s): a change reaches pages within ~0.2 s
KEEPALIVE_S = 15.0  # a comment line on a quiet stream, so proxies keep it open
BODY_MAX = 4096  # bytes of a POST's JSON (a code, a nickname, a password)
PAIR_TRIES, PAIR_TRIES_OVERALL = 10, 60  # wrong pairing codes a minute: per browser, and on one replica in all
# Wrong class codes a minute on one replica in all (per browser: rules.JOIN_LIMIT): a script that drops its cookie at
# every try is limited too. A class joining through its pages sends no wrong codes; a few mistyped ones fit.
JOIN_TRIES_OVERALL = 100
PASSWORD_TRIES, PASSWORD_TRIES_OVERALL = 5, 30  # wrong teacher passwords a minute: per browser, and in all


def credential(cookie: str | None) -> tuple[str, str] | None:
    """``"CODE.SECRET"`` (a teacher's or seat cookie) → (code, secret); None for anything else."""
    if not cookie or "." not in cookie:
        return None
    code, secret = cookie.split(".", 1)
    found = rules.normalize_code(code)
    return (found, secret) if found and secret else None


class ClassRoutes:
    """The routes for the store at ``store_url``; ``teacher_password``: opening a class needs it when set."""

    def __init__(self, store_url: str, teacher_password: str | None = None, public_url: str | None = None):
        self.store_url, self.password = store_url, teacher_password or None
        self.public_origin = _origin(public_url) if public_url else None
        self._store = None
        self._watchers: dict[str, _Watcher] = {}
        self._pair_failures = _Failures(PAIR_TRIES, PAIR_TRIES_OVERALL)
        self._join_failures = _Failures(rules.JOIN_LIMIT, JOIN_TRIES_OVERALL)
        self._password_failures = _Failures(PASSWORD_TRIES, PASSWORD_TRIES_OVERALL)

    @property
    def store(self):
        if self._store is None:
            self._store = open_store(self.store_url)
        return self._store

    def routes(self) -> list[Route]:
        return [
            Route(f"{PREFIX}/open", self._guarded(self.open), methods=["POST"]),
            Route(f"{PREFIX}/join", self._guarded(self.join), methods=["POST"]),
            Route(f"{PREFIX}/pair", self._guarded(self.pair), methods=["POST"]),
            Route(f"{PREFIX}/leave", self._guarded(self.leave), methods=["POST"]),
            Route(f"{PREFIX}/events", self.events, methods=["GET"]),
        ]

    def _guarded(self, handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        """``handler`` for the app's own pages only: another origin (403), a body that is not JSON (415) or longer
        than ``BODY_MAX`` (413) is refused before it runs, with no cookie set or deleted."""

        async def guarded(request: Request) -> Response:
            if not same_origin(request, self.public_origin):
                return _refuse(403, "Only this app's own pages can do that (the request came from another site).")
            if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
                return _refuse(415, "The class routes take JSON only.")
            try:
                request.state.body = await _read(request)
            except _TooLong:
                return _refuse(413, f"The request is longer than {BODY_MAX:,} bytes.")
            return await handler(request)

        return guarded

    # ---- credentials ---------------------------------------------------------------------------------------
    async def open(self, request: Request) -> Response:
        body = await _body(request)
        browser = request.cookies.get(BROWSER) or secrets.token_urlsafe(12)
        if self.password:
            if wait := self._password_failures.wait_s(browser):
                return _limited(request, browser, "teacher passwords", wait)
            if not hmac.compare_digest(str(body.get("password", "")), self.password):
                self._password_failures.note(browser)
                response = _refuse(403, "That is not the teacher password this server was started with.")
                _set(response, request, BROWSER, browser)
                return response
        seats = body.get("seats", rules.SEAT_CAP)
        if isinstance(seats, bool) or not isinstance(seats, int) or not 0 <= seats <= rules.SEAT_CAP_MAX:
            return _refuse(400, f"A class has 0 to {rules.SEAT_CAP_MAX:,} seats.")
        try:
            code, key = await asyncio.to_thread(self.store.open_class, seats)
            if body.get("joining") is False:
                await asyncio.to_thread(self.store.set_joining, code, key, False)
        except StoreUnavailable as err:
            return _refuse(503, str(err))
        return _teacher(request, code, key)

    async def join(self, request: Request) -> Response:
        body = await _body(request)
        nickname = body.get("nickname") or ""
        if not isinstance(nickname, str) or len(nickname.strip()) > rules.NICKNAME_MAX:
            shown = f"{len(nickname.strip()):,} characters" if isinstance(nickname, str) else "not text"
            return _refuse(400, f"A nickname is at most {rules.NICKNAME_MAX} characters (this one is {shown}).")
        typed = body.get("code")
        if not isinstance(typed, str) or rules.normalize_code(typed) is None:
            return _refuse(400, "A class code is six letters and digits (e.g. K7QX2M): check it on the projector.")
        browser = request.cookies.get(BROWSER) or secrets.token_urlsafe(12)
        if wait := self._join_failures.wait_s(browser):
            return _limited(request, browser, "class codes", wait)
        try:
            seat = await asyncio.to_thread(self.store.join, typed, nickname, browser)
        except (ClassNotFound, JoiningClosed, ClassFull, TooManyJoins) as err:
            if isinstance(err, TooManyJoins):  # the store counts a browser's wrong codes on every replica
                return _limited(request, browser, "class codes", err.wait_s)
            if isinstance(err, ClassNotFound):
                self._join_failures.note(browser)
            response = _refuse(409 if isinstance(err, JoiningClosed | ClassFull) else 404, str(err))
            _set(response, request, BROWSER, browser)
            return response
        except StoreUnavailable as err:
            return _refuse(503, str(err))
        code = rules.normalize_code(str(body.get("code", "")))
        response = JSONResponse({"code": code, "seat": seat.number})
        _set(response, request, SEAT, f"{code}.{seat.token}")
        _set(response, request, BROWSER, browser)
        response.delete_cookie(TEACHER, path="/")
        return response

    async def pair(self, request: Request) -> Response:
        body = await _body(request)
        browser = request.cookies.get(BROWSER) or secrets.token_urlsafe(12)
        if wait := self._pair_failures.wait_s(browser):
            return _limited(request, browser, "pairing codes", wait)
        try:
            code, key = await asyncio.to_thread(self.store.redeem_pair, str(body.get("pair", ""))[:20])
        except ValueError as err:
            self._pair_failures.note(browser)
            response = _refuse(404, str(err))
            _set(response, request, BROWSER, browser)
            return response
        except StoreUnavailable as err:
            return _refuse(503, str(err))
        return _teacher(request, code, key)

    async def leave(self, request: Request) -> Response:
        response = JSONResponse({"left": True})
        response.delete_cookie(TEACHER, path="/")
        response.delete_cookie(SEAT, path="/")
        return response

    # ---- the event stream ---------------------------------------------------------------------------------
    async def events(self, request: Request) -> Response:
        code = rules.normalize_code(request.query_params.get("code", ""))
        if code is None:
            return _refuse(404, "That is not a class code this app makes.")
        return StreamingResponse(
            self._stream(request, code),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},  # nginx passes each event on at once
        )

    async def _stream(self, request: Request, code: str) -> AsyncIterator[str]:
        watcher = self._watchers.get(code)
        if watcher is None or watcher.done:
            watcher = self._watchers[code] = _Watcher(self.store, code, self._forget)
        queue = watcher.subscribe()
        try:
            yield "retry: 1000\n\n"  # the browser reconnects 1 s after a dropped stream
            while True:
                try:
                    event = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
                except TimeoutError:
                    if await request.is_disconnected():
                        return
                    yield ": keepalive\n\n"
                    continue
                yield f"data: {json.dumps(event, separators=(',', ':'))}\n\n"
                if event.get("ended"):
                    return
        finally:
            watcher.unsubscribe(queue)

    def _forget(self, watcher: _Watcher) -> None:
        """A watcher that stopped (its class ended or does not exist, or nobody listened for 5 s) is dropped: one
        per class code ever asked for, kept, grew without end (5,000 made-up codes: +5 MiB)."""
        if self._watchers.get(watcher.code) is watcher:
            del self._watchers[watcher.code]


class _Watcher:
    """One class's pulse on this replica: read every ``PULSE_S`` while any page listens, sent to each listener
    when it changes (the last one is sent at once to a new listener); ``on_done(self)`` when it stops."""

    def __init__(self, store, code: str, on_done: Callable[[_Watcher], None] = lambda w: None):
        self.store, self.code, self.on_done = store, code, on_done
        self.queues: set[asyncio.Queue] = set()
        self.last: dict | None = None
        self.task = asyncio.get_running_loop().create_task(self._run())
        self.done = False

    def subscribe(self) -> asyncio.Queue:
        queue: asyncio.Queue = asyncio.Queue(maxsize=16)
        if self.last is not None:
            queue.put_nowait(self.last)
        self.queues.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue) -> None:
        self.queues.discard(queue)

    async def _run(self) -> None:
        idle = 0
        try:
            while True:
                event = await self._read()
                if event != self.last:
                    self.last = event
                    for queue in list(self.queues):
                        with contextlib.suppress(asyncio.QueueFull):  # a stuck page misses pulses, not the newest
                            if queue.full():
                                queue.get_nowait()
                            queue.put_nowait(event)
                if event.get("ended"):
                    return
                idle = 0 if self.queues else idle + 1
                if idle * PULSE_S > 5:  # nobody listened for 5 s: stop reading
                    return
                await asyncio.sleep(PULSE_S)
        finally:
            self.done = True
            self.on_done(self)

    async def _read(self) -> dict:
        try:
            pulse = await asyncio.to_thread(self.store.pulse, self.code)
        except StoreUnavailable:
            return {"unavailable": True}
        if pulse is None:
            return {"ended": True}
        return {
            "version": pulse.version,
            "students": pulse.students,
            "answered": pulse.answered,
            "question": pulse.question,
            "round": pulse.round,
        }


class _TooLong(Exception):
    """A request body past ``BODY_MAX``."""


async def _read(request: Request) -> bytes:
    """The body, read only up to ``BODY_MAX`` bytes: a declared length past it is refused unread, a chunked body
    as soon as it passes it (a 1 GiB POST had grown a replica by 2 GiB). Raises ``_TooLong``."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > BODY_MAX:
        raise _TooLong
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > BODY_MAX:
            raise _TooLong
    return bytes(raw)


async def _body(request: Request) -> dict:
    """The request's JSON object (read by ``ClassRoutes._guarded``), or {} for anything else."""
    raw = getattr(request.state, "body", b"")
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _origin(url: str | None) -> str | None:
    """``scheme://host[:port]`` of ``url``, lower-case; None for anything without both."""
    if not url:
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    return f"{parts.scheme}://{parts.netloc}".lower() if parts.scheme in ("http", "https") and parts.netloc else None


def same_origin(request: Request, public_origin: str | None = None) -> bool:
    """Whether a request comes from the app's own pages: its ``Origin`` header (else its ``Referer``'s origin) is the
    origin the request was addressed to (``Host``), the one a proxy says it was (``X-Forwarded-Proto`` and
    ``-Host``, first values), or ``public_origin`` (``--public-url``). Neither header: refused (a browser sends
    ``Origin`` with every POST)."""
    sent = _origin(request.headers.get("origin")) or _origin(request.headers.get("referer"))
    if sent is None:
        return False
    host = request.headers.get("host", "")
    own = {f"{request.url.scheme}://{host}".lower()}
    proto = request.headers.get("x-forwarded-proto", "").split(",")[0].strip()
    fwd_host = request.headers.get("x-forwarded-host", "").split(",")[0].strip()
    if proto:
        own.add(f"{proto}://{fwd_host or host}".lower())
    if public_origin:
        own.add(public_origin)
    return sent in own


def _teacher(request: Request, code: str, key: str) -> JSONResponse:
    """The answer that makes this browser a teacher of class ``code``: its cookie, and no seat beside it."""
    response = JSONResponse({"code": code})
    _set(response, request, TEACHER, f"{code}.{key}")
    response.delete_cookie(SEAT, path="/")
    return response


class _Failures:
    """Wrong codes or passwords per browser and on this replica in all, over the last ``window_s``: a code (a class's,
    a pairing code) or the teacher password is not left to guessing. A browser over ``per_browser``, or the replica
    over ``overall`` (guesses that change cookies each time), is refused until enough of its failures leave the
    window: never longer than ``window_s``."""

    def __init__(self, per_browser: int, overall: int, window_s: float = 60.0):
        self.per_browser, self.overall, self.window_s = per_browser, overall, window_s
        self.times: dict[str, collections.deque] = {}
        self.all: collections.deque = collections.deque()

    def _trim(self, times: collections.deque, now: float) -> collections.deque:
        while times and times[0] <= now - self.window_s:
            times.popleft()
        return times

    def wait_s(self, browser: str, now: float | None = None) -> int:
        """Whole seconds until ``browser`` may try again (0: now). A browser whose failures all left the window is
        forgotten (a script that changes cookies leaves no trail)."""
        now = time.monotonic() if now is None else now
        mine = self._trim(self.times.get(browser, collections.deque()), now)
        if not mine:
            self.times.pop(browser, None)
        every = self._trim(self.all, now)
        # Over a limit, the failure whose leaving brings the count under it decides the wait.
        frees = [q[len(q) - cap] for q, cap in ((mine, self.per_browser), (every, self.overall)) if len(q) >= cap]
        return max(1, math.ceil(max(frees) + self.window_s - now)) if frees else 0

    def note(self, browser: str, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self.times.setdefault(browser, collections.deque()).append(now)
        self.all.append(now)


def _limited(request: Request, browser: str, what: str, wait: int) -> JSONResponse:
    """429: too many wrong ``what``, the wait said (and in ``Retry-After``); the browser keeps its id so its own
    tries are counted."""
    response = _refuse(429, f"Too many wrong {what}: wait {wait} s and try again.")
    response.headers["Retry-After"] = str(wait)
    _set(response, request, BROWSER, browser)
    return response


def _refuse(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _set(response: Response, request: Request, name: str, value: str) -> None:
    """An HttpOnly, SameSite=Lax cookie for the whole app, kept for a class's lifetime; Secure behind HTTPS."""
    https = request.url.scheme == "https" or request.headers.get("x-forwarded-proto") == "https"
    response.set_cookie(name, value, max_age=rules.CLASS_TTL_S, path="/", httponly=True, samesite="lax", secure=https)
