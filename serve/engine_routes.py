"""The class engine's HTTP routes (``serve.engine_service``): a student's Send, its token stream, the teacher's
settings and the room's state. Mounted on ``main.py``'s ``st.App`` (the engine then runs inside the app's process)
or served by the engine's own process (``python -m serve.engine_process``, behind the class server's nginx).

A request's **room** is its class when the browser holds the class's seat or teacher cookie (checked against the
class store), else the browser alone (its tabs, ``ALONE_IN_FLIGHT`` requests at once, and simulated classmates are
the other requests; in a class, one request per seat). Every POST passes
``serve.class_guard`` (this app's own origin, JSON, a bounded body). A request's stream is readable only by the
browser that sent it (the ``BROWSER`` cookie); a room's state carries no prompt text. Settings are the teacher's in
a class, the browser's own alone. Imports no streamlit.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from core.classroom import rules
from core.classroom.rules import StoreUnavailable
from core.classroom.store import open_store
from core.serving.engine import EngineSettings
from serve.class_guard import json_body, refusal, refused
from serve.class_routes import BROWSER, SEAT, TEACHER, credential
from serve.engine_service import PROMPT_MAX_CHARS, SIMULATED, EngineService, RoomFull

PREFIX = "/explainer/serve"
KEEPALIVE_S = 15.0
# A body holds one prompt or system prompt of PROMPT_MAX_CHARS characters (4 bytes each in UTF-8 at most, 6 as a JSON
# escape) with room to spare: the class routes' 4,096 bytes refused a Chinese prompt of 1,400 characters (413).
BODY_MAX = 16 * PROMPT_MAX_CHARS + 1024
STATE_EVERY_S = 0.25  # a room's pulse is sent at most this often
SIMULATE_MAX = 8  # simulated classmates a browser may have in flight
ALONE_IN_FLIGHT = 4  # a browser alone: its tabs are its classmates (in a class: one request per seat)
SETTINGS = {f: t for f, t in EngineSettings.__annotations__.items()}


class EngineRoutes:
    """The routes over ``service()`` (made on first use: the model loads then) and the class store at
    ``store_url``; ``public_origin`` as ``serve.class_guard.same_origin`` takes it."""

    def __init__(self, service: Callable[[], EngineService], store_url: str, public_origin: str | None = None):
        self._make, self._service, self._making = service, None, asyncio.Lock()
        self.store_url, self.public_origin = store_url, public_origin
        self._store = None

    def routes(self) -> list[Route]:
        post = lambda name, fn: Route(f"{PREFIX}/{name}", self._guarded(fn), methods=["POST"])  # noqa: E731
        return [
            post("send", self.send),
            post("simulate", self.simulate),
            post("settings", self.settings),
            Route(f"{PREFIX}/stream", self.stream, methods=["GET"]),
            Route(f"{PREFIX}/state", self.state, methods=["GET"]),
            Route(f"{PREFIX}/pulse", self.pulse, methods=["GET"]),
        ]

    async def service(self) -> EngineService:
        """The one service, made by the first request (the others wait for it: one model, one engine thread)."""
        async with self._making:
            if self._service is None:
                self._service = await asyncio.to_thread(self._make)
        return self._service

    def _guarded(self, handler):
        async def guarded(request: Request) -> Response:
            if refused_now := await refused(request, self.public_origin, "The engine's routes", BODY_MAX):
                return refused_now
            if not request.cookies.get(BROWSER):  # set it, and the page asks again at once (as a class's join)
                response = refusal(428, "This browser has no cookie from the app's page yet: send again.")
                set_browser(response, request, new_browser_id())
                return response
            try:
                return await handler(request, await json_body(request))
            except (ValueError, TypeError) as err:  # RoomFull, a prompt too long, a setting out of range
                return refusal(429 if isinstance(err, RoomFull) else 400, str(err))
            except StoreUnavailable as err:  # the class store, asked who this browser is
                return refusal(503, str(err))

        return guarded

    # -- who and where ---------------------------------------------------------------------------------------------
    async def _room(self, request: Request) -> tuple[str, str]:
        """(room, role): ``("class:CODE", "teacher" | "student")`` for a browser in a class, else
        ``("alone:BROWSER", "alone")``. Raises ``StoreUnavailable``."""
        if self._store is None:
            self._store = open_store(self.store_url)
        if (cred := credential(request.cookies.get(TEACHER))) and await asyncio.to_thread(
            self._store.is_teacher, *cred
        ):
            return f"class:{cred[0]}", "teacher"
        if (cred := credential(request.cookies.get(SEAT))) and await asyncio.to_thread(self._store.seat, *cred):
            return f"class:{cred[0]}", "student"
        return f"alone:{request.cookies.get(BROWSER, '')}", "alone"

    # -- POSTs -----------------------------------------------------------------------------------------------------
    async def send(self, request: Request, body: dict) -> Response:
        svc = await self.service()
        room, role = await self._room(request)
        seed = body.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**31):
            return refusal(400, f"A seed is a whole number from 0 to {2**31 - 1:,}.")
        rid = svc.send(room, _owner(request, role), body.get("text"), body.get("new_tokens"), seed,
                       in_flight=ALONE_IN_FLIGHT if role == "alone" else 1)  # fmt: skip
        return JSONResponse({"rid": rid, "epoch": svc.epoch})

    async def simulate(self, request: Request, body: dict) -> Response:
        svc = await self.service()
        room, role = await self._room(request)
        if role == "student":
            return refusal(403, "Only the teacher adds simulated classmates to a class.")
        n = body.get("n")
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= SIMULATE_MAX:
            return refusal(400, f"Simulated classmates: a whole number from 1 to {SIMULATE_MAX}.")
        owner = f"{request.cookies[BROWSER]}:classmates"
        start = svc.sent_by(room, owner)
        rids = [
            svc.send(
                room,
                owner,
                SIMULATED[(start + i) % len(SIMULATED)],
                body.get("new_tokens", 24),
                label=f"Classmate {start + i + 1}",
                in_flight=SIMULATE_MAX,
            )  # fmt: skip
            for i in range(n)
        ]
        return JSONResponse({"sent": len(rids)})

    async def settings(self, request: Request, body: dict) -> Response:
        svc = await self.service()
        room, role = await self._room(request)
        if role == "student":
            return refusal(403, "Only the teacher changes the class's engine.")
        changes = {k: v for k, v in body.items() if k in SETTINGS or k == "system_prompt"}
        if "long_document" in body:  # a request as long as the context: the stall to watch
            svc.long_document(room, request.cookies[BROWSER])
        settings = svc.configure(room, **changes)
        return JSONResponse({"settings": settings.__dict__})

    # -- streams ---------------------------------------------------------------------------------------------------
    async def stream(self, request: Request) -> Response:
        svc = await self.service()
        try:
            room, role = await self._room(request)
        except StoreUnavailable as err:
            return refusal(503, str(err))
        s = svc.stream(room, request.query_params.get("rid", ""), _owner(request, role))
        return _sse(self._tokens(request, svc, s))

    async def _tokens(self, request: Request, svc: EngineService, s) -> AsyncIterator[str]:
        yield "retry: 1000\n\n"
        if s is None:
            yield _event({"kind": "lost", "epoch": svc.epoch})
            return
        sent = 0
        while True:
            armed = svc.signal.arm()
            # The engine thread appends meanwhile and marks the end after its last event: read the mark first, then
            # take one slice. Read the other way round, the end could be marked between the two and its last event
            # never sent (seen under CI's load: a stream that stopped at a token).
            ended = s.done_at is not None
            new = s.events[sent:]
            sent += len(new)
            for event in new:
                yield _event(event)
            if ended:
                return
            await svc.signal.wait(armed, KEEPALIVE_S)
            if len(s.events) == sent:
                if await request.is_disconnected():
                    return
                yield ": keepalive\n\n"

    async def state(self, request: Request) -> Response:
        svc = await self.service()
        room = svc.peek(await self._named_room(request))
        state = room.state if room is not None else {"epoch": svc.epoch, "model": svc.model_label, "empty": True}
        return JSONResponse(state, headers={"Cache-Control": "no-store"})

    async def pulse(self, request: Request) -> Response:
        svc = await self.service()
        return _sse(self._pulses(request, svc, await self._named_room(request)))

    async def _named_room(self, request: Request) -> str:
        """A class's room by its code (``?class=``: the display holds no cookie of its own), else this browser's
        (a browser without its cookie yet has none: the page listens again once a POST has set it). With the class
        store out of reach, this browser's own."""
        code = rules.normalize_code(request.query_params.get("class", ""))
        if code:
            return f"class:{code}"
        try:
            return (await self._room(request))[0]
        except StoreUnavailable:
            return f"alone:{request.cookies.get(BROWSER, '')}"

    async def _pulses(self, request: Request, svc: EngineService, room: str) -> AsyncIterator[str]:
        yield "retry: 1000\n\n"
        seen = -1  # no version yet: the first pulse goes at once, an empty room's too
        while True:
            armed = svc.signal.arm()
            here = svc.peek(room)
            version = here.version if here else None
            if version != seen:
                seen = version
                state = here.state if here else {"model": svc.model_label, "empty": True}
                yield _event({"epoch": svc.epoch, "version": version, "state": state})
                await asyncio.sleep(STATE_EVERY_S)  # at most 4 pulses a second, however fast the engine steps
                continue
            await svc.signal.wait(armed, KEEPALIVE_S)
            if (svc.peek(room).version if svc.peek(room) else None) == seen:
                if await request.is_disconnected():
                    return
                yield ": keepalive\n\n"


def _owner(request: Request, role: str) -> str:
    """Whose request it is: a seat's or a teacher's credential in a class (a student who drops the browser cookie is
    still one seat, one request at a time), else the browser's cookie."""
    cookie = SEAT if role == "student" else TEACHER if role == "teacher" else None
    return f"{role}:{request.cookies[cookie]}" if cookie else request.cookies.get(BROWSER, "")


def new_browser_id() -> str:
    return secrets.token_urlsafe(12)


def set_browser(response: Response, request: Request, browser: str) -> None:
    """This browser's id cookie (``serve.class_routes.BROWSER``): HttpOnly, SameSite=Lax, Secure behind HTTPS."""
    https = request.url.scheme == "https" or request.headers.get("x-forwarded-proto") == "https"
    response.set_cookie(BROWSER, browser, max_age=rules.CLASS_TTL_S, path="/", httponly=True, samesite="lax",
                        secure=https)  # fmt: skip


def _sse(events: AsyncIterator[str]) -> StreamingResponse:
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(events, media_type="text/event-stream", headers=headers)


def _event(data: dict) -> str:
    return f"data: {json.dumps(data, separators=(',', ':'))}\n\n"
