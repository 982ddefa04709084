"""What every state-changing class route checks before it runs (OWASP's CSRF guidance: verify the origin with
standard headers): the request's origin, and its body read only up to ``BODY_MAX`` bytes. Imports no streamlit."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse

BODY_MAX = 4096  # bytes of a POST's JSON (a code, a nickname, a password)


class TooLong(Exception):
    """A request body past ``BODY_MAX``."""


async def read_body(request: Request, limit: int = BODY_MAX) -> bytes:
    """The body, read only up to ``limit`` bytes: a declared length past it is refused unread, a chunked body
    as soon as it passes it (a 1 GiB POST had grown a replica by 2 GiB). Raises ``TooLong``."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise TooLong
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > limit:
            raise TooLong
    return bytes(raw)


async def json_body(request: Request) -> dict:
    """The request's JSON object (read by ``read_body`` into ``request.state.body``), or {} for anything else."""
    raw = getattr(request.state, "body", b"")
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def origin(url: str | None) -> str | None:
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
    sent = origin(request.headers.get("origin")) or origin(request.headers.get("referer"))
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


async def refused(request: Request, public_origin: str | None, what: str, limit: int = BODY_MAX) -> JSONResponse | None:
    """Why a POST to ``what`` ("The class routes") is refused before its handler runs, or None with its body read
    into ``request.state.body``: another origin (403), a body that is not JSON (415) or longer than ``limit``
    (413). Nothing else is done: no cookie set or deleted."""
    if not same_origin(request, public_origin):
        return refusal(403, "Only this app's own pages can do that (the request came from another site).")
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        return refusal(415, f"{what} take JSON only.")
    try:
        request.state.body = await read_body(request, limit)
    except TooLong:
        return refusal(413, f"The request is longer than {limit:,} bytes.")
    return None


def refusal(status: int, message: str) -> JSONResponse:
    """A refusal in a sentence: ``{"error": message}``."""
    return JSONResponse({"error": message}, status_code=status)
