"""What a browser does over plain HTTP beside its websocket, through nginx: keep cookies (``Jar``), GET the
health URL and POST a class route with them (``get``, ``post``), and listen to a class's event stream as an
``EventSource`` does (``EventStream``: server-sent events, reconnecting after the stream's ``retry`` delay when
the connection drops, stopping for good on an answer other than 200)."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from http.cookies import SimpleCookie

TIMEOUT_S = 30


class Jar:
    """One browser's cookies for the app's one site (every cookie here has ``Path=/``)."""

    def __init__(self):
        self.values: dict[str, str] = {}

    def header(self) -> dict[str, str]:
        return {"Cookie": "; ".join(f"{k}={v}" for k, v in self.values.items())} if self.values else {}

    def take(self, set_cookies: list[str]) -> None:
        """Keep what ``Set-Cookie`` headers set; a cookie given ``Max-Age=0`` is deleted."""
        for line in set_cookies:
            parsed = SimpleCookie()
            parsed.load(line)
            for name, morsel in parsed.items():
                if morsel["max-age"] in ("0", 0) or morsel.value in ("", '""'):
                    self.values.pop(name, None)
                else:
                    self.values[name] = morsel.value


def _open(req: urllib.request.Request, jar: Jar) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as r:
            jar.take(r.headers.get_all("Set-Cookie") or [])
            return r.status, r.read()
    except urllib.error.HTTPError as err:  # a refusal (4xx/5xx) still sets cookies and says why
        jar.take(err.headers.get_all("Set-Cookie") or [])
        return err.code, err.read()


def get(base: str, path: str, jar: Jar) -> int:
    """GET ``path`` with this browser's cookies (blocking: run it in a thread); its status. OSError while
    nothing answers."""
    return _open(urllib.request.Request(base + path, headers=jar.header()), jar)[0]


def post(base: str, path: str, body: dict, jar: Jar) -> tuple[int, dict]:
    """POST ``body`` as JSON to ``path`` with this browser's cookies, as ``frontend/class_post.js`` does
    (blocking; once more after a 428, which has set the browser cookie a seat needs); (status, the answer's JSON)."""
    for _ in range(2):
        req = urllib.request.Request(
            base + path,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "Origin": base, **jar.header()},  # as a browser sends it
            method="POST",
        )
        status, raw = _open(req, jar)
        if status != 428:
            break
    try:
        answer = json.loads(raw or b"{}")
    except ValueError:
        answer = {"error": raw[:200].decode(errors="replace")}
    return status, answer if isinstance(answer, dict) else {}


class EventStream:
    """An ``EventSource`` on ``base + path``: each event's ``data`` goes to ``on_event(text)``; a dropped
    connection is opened again after the stream's ``retry`` delay (1 s by default, as browsers), with the
    jar's cookies then (nginx may have moved this browser to another replica); an answer other than 200
    ends it, as a browser's ``EventSource`` fails (``failed`` holds why)."""

    def __init__(self, base: str, path: str, jar: Jar, on_event: Callable[[str], None]):
        self.base, self.path, self.jar, self.on_event = base, path, jar, on_event
        self.retry_s = 1.0
        self.connects = 0
        self.drops: list[float] = []  # loop times the connection dropped
        self.failed: str | None = None
        self._task = asyncio.create_task(self._run())

    def close(self) -> None:
        self._task.cancel()

    async def _run(self) -> None:
        url = urllib.parse.urlsplit(self.base)
        while True:
            try:
                await self._listen(url.hostname, url.port or 80)
            except (OSError, asyncio.IncompleteReadError, ValueError):
                pass
            if self.failed:
                return
            self.drops.append(asyncio.get_running_loop().time())
            await asyncio.sleep(self.retry_s)

    async def _listen(self, host: str, port: int) -> None:
        reader, writer = await asyncio.open_connection(host, port)
        try:
            cookie = self.jar.header().get("Cookie")
            head = [f"GET {self.path} HTTP/1.1", f"Host: {host}:{port}", "Accept: text/event-stream"]
            head += ["Cache-Control: no-cache", *([f"Cookie: {cookie}"] if cookie else []), "", ""]
            writer.write("\r\n".join(head).encode())
            await writer.drain()
            status = int((await reader.readline()).split()[1])
            headers = []
            while (line := (await reader.readline()).decode("latin-1").rstrip("\r\n")) != "":
                headers.append(line.split(":", 1))
            self.jar.take([v.strip() for k, v in headers if k.lower() == "set-cookie"])
            if status != 200:
                self.failed = f"the event stream answered {status}"
                return
            self.connects += 1
            chunked = any(k.lower() == "transfer-encoding" and "chunked" in v.lower() for k, v in headers)
            await self._events(self._chunks(reader) if chunked else self._plain(reader))
        finally:
            writer.close()

    @staticmethod
    async def _chunks(reader):
        while True:
            size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                return
            yield await reader.readexactly(size)
            await reader.readexactly(2)  # the CRLF after each chunk

    @staticmethod
    async def _plain(reader):
        while chunk := await reader.read(65536):
            yield chunk

    async def _events(self, chunks) -> None:
        """The event-stream format: ``data:`` lines joined, dispatched at a blank line; ``retry:`` sets the
        reconnection delay (ms); a line starting with ":" is a comment."""
        pending, data = b"", []
        async for chunk in chunks:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                line = raw.decode().rstrip("\r")
                if line == "":
                    if data:
                        self.on_event("\n".join(data))
                    data = []
                elif line.startswith(":"):
                    continue
                else:
                    field, _, value = line.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    if field == "data":
                        data.append(value)
                    elif field == "retry" and value.isdigit():
                        self.retry_s = int(value) / 1000
