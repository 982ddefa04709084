"""The address students open to join a class: the operator's ``--public-url`` when given, else the address the
teacher's console was opened by, unless that is this machine's loopback (``localhost``, ``127.0.0.1``), which no
student's laptop can reach: then this machine's LAN address on the same port, with a warning when none is known.
Imports no streamlit."""

from __future__ import annotations

import ipaddress
import socket
import urllib.parse

LOOPBACK_NAMES = {"localhost", "ip6-localhost", "ip6-loopback"}


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 with or without brackets) names this machine only."""
    host = host.strip("[]").lower()
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def lan_address() -> str | None:
    """This machine's address on its default route (a UDP socket's own end after ``connect``: nothing is sent),
    or None when it has only loopback."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed anywhere, only used to pick the interface
            found = s.getsockname()[0]
    except OSError:
        return None
    return None if is_loopback(found) or found == "0.0.0.0" else found


def students_link(
    console_url: str, code: str, public_url: str | None = None, lan: str | None = None, listening: str = ""
) -> tuple[str, str | None]:
    """(the students' link ``<base>/?class=CODE``, a warning or None). ``console_url``: the address the teacher's
    console shows (its path and query are dropped: the link opens the app); ``public_url``: the operator's own
    address for the app, which wins; ``lan``: this machine's LAN address (``lan_address()``), used when the console
    was opened on loopback; ``listening``: the address the server listens on when nothing stands in front of it
    (streamlit's ``server.address``; "" when a proxy does, or when it listens on every address): on loopback, a LAN
    link reaches nothing, and the warning says what to start instead."""
    if public_url:
        return f"{public_url.rstrip('/')}/?class={code}", None
    parts = urllib.parse.urlsplit(console_url)
    host = parts.hostname or ""
    if not is_loopback(host):
        return f"{parts.scheme}://{parts.netloc}/?class={code}", None
    port = f":{parts.port}" if parts.port else ""
    if lan:
        link = f"{parts.scheme or 'http'}://{lan}{port}/?class={code}"
        if listening and is_loopback(listening):
            return link, (
                f"This server listens on {listening} only, so students' laptops and phones cannot open {link}. "
                f"Start it again listening on the network: `inference-explainer --host 0.0.0.0`, or for a class "
                f"`python -m serve`."
            )
        return link, None
    return (
        f"{parts.scheme or 'http'}://{host}{port}/?class={code}",
        "This machine has no network address students can reach (only loopback): connect it to the classroom's "
        "network, or start the server with --public-url and the address students should open.",
    )
