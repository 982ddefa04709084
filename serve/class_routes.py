"""Class mode's HTTP routes, mounted beside the app on ``main.py``'s ``st.App``.

Credentials never travel in an address, a page or a log line: opening a class, joining it and pairing a second
teacher device are POSTs whose answer sets this browser's HttpOnly, SameSite cookie (``TEACHER`` holds the
class's code and a teacher key, ``SEAT`` the code and a seat token); a session's script reads them with
``st.context.cookies``. Wrong class codes are counted per browser (``BROWSER``, a random id in a cookie), never per
address: a whole class reaches the server from one address (nginx, a school's NAT). A seat needs that cookie: a
join without it is answered 428 with the cookie set (the page asks again at once; ``frontend/class_post.js``), and
the store gives a browser its own seat back, so one browser holds one seat; new browsers are let in at a class's
pace (``serve.class_limits``), and every guess of a code or password is limited, with or without cookies.

Only the app's own pages may change anything (OWASP's CSRF guidance: verify the origin with standard headers): a
POST whose ``Origin`` (or, without one, ``Referer``) is not the app's own origin as served — directly, behind nginx
(``X-Forwarded-Host``/``-Proto``) or under ``--public-url`` — or whose body is not ``application/json``, is refused
before its body is read, and sets or deletes no cookie. A body is read only up to ``BODY_MAX`` bytes (413 past it).

The event stream (``GET …/events?code=CODE``, server-sent events) tells a class's pages that the plan or the count
changed, so no page polls (``serve.class_events``). Imports no streamlit.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable

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
from serve.class_events import Watcher
from serve.class_guard import json_body, origin, refusal, refused
from serve.class_limits import Failures, NewSeats

PREFIX = "/explainer/class"
TEACHER, SEAT, BROWSER = "explainer_teacher", "explainer_seat", "explainer_browser"
KEEPALIVE_S = 15.0  # a comment line on a quiet stream, so proxies keep it open
PAIR_TRIES, PAIR_TRIES_OVERALL = 10, 60  # wrong pairing codes a minute: per browser, and on one replica in all
# Wrong class codes a minute on one replica in all (per browser: rules.JOIN_LIMIT): a script that drops its cookie at
# every try is limited too. A class joining through its pages sends no wrong codes; a few mistyped ones fit.
JOIN_TRIES_OVERALL = 100
PASSWORD_TRIES, PASSWORD_TRIES_OVERALL = 5, 30  # wrong teacher passwords a minute: per browser, and in all
# New seats a replica gives: a class of 40 through its pages at once, then one every 5 s (a script making browsers
# takes a handful of seats a minute; the teacher sees them in the roster and can remove them).
NEW_SEATS_BURST, NEW_SEATS_PER_MINUTE = 60, 12
NEEDS_COOKIE = "This browser has no cookie from the class's page yet: join again from the page (cookies on)."


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
        self.public_origin = origin(public_url) if public_url else None
        self._store = None
        self._watchers: dict[str, Watcher] = {}
        self._pair_failures = Failures(PAIR_TRIES, PAIR_TRIES_OVERALL)
        self._join_failures = Failures(rules.JOIN_LIMIT, JOIN_TRIES_OVERALL)
        self._password_failures = Failures(PASSWORD_TRIES, PASSWORD_TRIES_OVERALL)
        self._new_seats = NewSeats(NEW_SEATS_BURST, NEW_SEATS_PER_MINUTE)

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
            return await refused(request, self.public_origin, "The class routes") or await handler(request)

        return guarded

    # ---- credentials ---------------------------------------------------------------------------------------
    async def open(self, request: Request) -> Response:
        body = await json_body(request)
        browser = request.cookies.get(BROWSER) or secrets.token_urlsafe(12)
        if self.password:
            if wait := self._password_failures.wait_s(browser):
                return _limited(request, browser, "teacher passwords", wait)
            if not hmac.compare_digest(str(body.get("password", "")), self.password):
                self._password_failures.note(browser)
                response = refusal(403, "That is not the teacher password this server was started with.")
                _set(response, request, BROWSER, browser)
                return response
        seats = body.get("seats", rules.SEAT_CAP)
        if isinstance(seats, bool) or not isinstance(seats, int) or not 0 <= seats <= rules.SEAT_CAP_MAX:
            return refusal(400, f"A class has 0 to {rules.SEAT_CAP_MAX:,} seats.")
        try:
            code, key = await asyncio.to_thread(self.store.open_class, seats)
            if body.get("joining") is False:
                await asyncio.to_thread(self.store.set_joining, code, key, False)
        except StoreUnavailable as err:
            return refusal(503, str(err))
        return _teacher(request, code, key)

    async def join(self, request: Request) -> Response:
        body = await json_body(request)
        nickname = body.get("nickname") or ""
        if not isinstance(nickname, str) or len(nickname.strip()) > rules.NICKNAME_MAX:
            shown = f"{len(nickname.strip()):,} characters" if isinstance(nickname, str) else "not text"
            return refusal(400, f"A nickname is at most {rules.NICKNAME_MAX} characters (this one is {shown}).")
        typed = body.get("code")
        if not isinstance(typed, str) or rules.normalize_code(typed) is None:
            return refusal(400, "A class code is six letters and digits (e.g. K7QX2M): check it on the projector.")
        browser = request.cookies.get(BROWSER)
        if not browser:  # a seat needs this browser's cookie: set it and let the page ask again (428)
            response = refusal(428, NEEDS_COOKIE)
            _set(response, request, BROWSER, secrets.token_urlsafe(12))
            return response
        if wait := self._join_failures.wait_s(browser):
            return _limited(request, browser, "class codes", wait)
        if wait := self._new_seats.wait_s(browser):
            response = refusal(429, f"Too many new students are joining at once: wait {wait} s and try again.")
            response.headers["Retry-After"] = str(wait)
            return response
        try:
            seat = await asyncio.to_thread(self.store.join, typed, nickname, browser)
        except (ClassNotFound, JoiningClosed, ClassFull, TooManyJoins) as err:
            if isinstance(err, TooManyJoins):  # the store counts a browser's wrong codes on every replica
                return _limited(request, browser, "class codes", err.wait_s)
            if isinstance(err, ClassNotFound):
                self._join_failures.note(browser)
            response = refusal(409 if isinstance(err, JoiningClosed | ClassFull) else 404, str(err))
            _set(response, request, BROWSER, browser)
            return response
        except StoreUnavailable as err:
            return refusal(503, str(err))
        self._new_seats.seat(browser)
        code = rules.normalize_code(str(body.get("code", "")))
        response = JSONResponse({"code": code, "seat": seat.number})
        _set(response, request, SEAT, f"{code}.{seat.token}")
        _set(response, request, BROWSER, browser)
        response.delete_cookie(TEACHER, path="/")
        return response

    async def pair(self, request: Request) -> Response:
        body = await json_body(request)
        browser = request.cookies.get(BROWSER) or secrets.token_urlsafe(12)
        if wait := self._pair_failures.wait_s(browser):
            return _limited(request, browser, "pairing codes", wait)
        try:
            code, key = await asyncio.to_thread(self.store.redeem_pair, str(body.get("pair", ""))[:20])
        except ValueError as err:
            self._pair_failures.note(browser)
            response = refusal(404, str(err))
            _set(response, request, BROWSER, browser)
            return response
        except StoreUnavailable as err:
            return refusal(503, str(err))
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
            return refusal(404, "That is not a class code this app makes.")
        return StreamingResponse(
            self._stream(request, code),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},  # nginx passes each event on at once
        )

    async def _stream(self, request: Request, code: str) -> AsyncIterator[str]:
        watcher = self._watchers.get(code)
        if watcher is None or watcher.done:
            watcher = self._watchers[code] = Watcher(self.store, code, self._forget)
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

    def _forget(self, watcher: Watcher) -> None:
        """A watcher that stopped (its class ended or does not exist, or nobody listened for 5 s) is dropped: one
        per class code ever asked for, kept, grew without end (5,000 made-up codes: +5 MiB)."""
        if self._watchers.get(watcher.code) is watcher:
            del self._watchers[watcher.code]


def _teacher(request: Request, code: str, key: str) -> JSONResponse:
    """The answer that makes this browser a teacher of class ``code``: its cookie, and no seat beside it."""
    response = JSONResponse({"code": code})
    _set(response, request, TEACHER, f"{code}.{key}")
    response.delete_cookie(SEAT, path="/")
    return response


def _limited(request: Request, browser: str, what: str, wait: int) -> JSONResponse:
    """429: too many wrong ``what``, the wait said (and in ``Retry-After``); the browser keeps its id so its own
    tries are counted."""
    response = refusal(429, f"Too many wrong {what}: wait {wait} s and try again.")
    response.headers["Retry-After"] = str(wait)
    _set(response, request, BROWSER, browser)
    return response


def _set(response: Response, request: Request, name: str, value: str) -> None:
    """An HttpOnly, SameSite=Lax cookie for the whole app, kept for a class's lifetime; Secure behind HTTPS."""
    https = request.url.scheme == "https" or request.headers.get("x-forwarded-proto") == "https"
    response.set_cookie(name, value, max_age=rules.CLASS_TTL_S, path="/", httponly=True, samesite="lax", secure=https)
