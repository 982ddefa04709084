"""A student's side of Serve the class's engine routes, as a page's components use them: ``send`` POSTs a request
with the browser's cookies (``frontend/serve_stream.js``) and reads its token stream as an ``EventSource`` does;
``prompt`` is a simulated student's text. Used by ``bench.class_workload`` and ``bench.class_mode --serving``."""

from __future__ import annotations

import json
import time
import urllib.request

from bench.class_mode.web import Jar, post
from serve.engine_service import SIMULATED


def prompt(i: int) -> str:
    return f"{SIMULATED[i % len(SIMULATED)]} {i}"


def send(base: str, jar: Jar, text: str, new_tokens: int) -> dict:
    """One student's Send and its stream: the text, token times (ms since Send, the engine's clock), the client's
    time from the POST to the first token, and the end's numbers."""
    t0 = time.perf_counter()
    status, answer = post(base, "/explainer/serve/send", {"text": text, "new_tokens": new_tokens}, jar)
    if status != 200:
        return {"error": answer.get("error", status)}
    req = urllib.request.Request(f"{base}/explainer/serve/stream?rid={answer['rid']}", headers=jar.header())
    events, first = [], None
    with urllib.request.urlopen(req, timeout=300) as r:
        for line in r:
            if line.startswith(b"data:"):
                events.append(json.loads(line[5:]))
                if first is None and events[-1]["kind"] == "token":
                    first = 1000 * (time.perf_counter() - t0)
    tokens = [e for e in events if e["kind"] == "token"]
    return {"text": "".join(e["text"] for e in tokens), "ms": [e["ms"] for e in tokens], "first_ms": first,
            "end": events[-1]}  # fmt: skip
