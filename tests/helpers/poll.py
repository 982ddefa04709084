"""One poll for conditions no event announces (a process answering, a metric the server caches, a thread
in a line): check ``condition`` every ``every_s`` until it holds, fail after ``timeout_s``. A wait on state
with a deadline, never a fixed pause; the only sleep of its kind in tests/."""

from __future__ import annotations

import time
from collections.abc import Callable


def until(condition: Callable[[], object], timeout_s: float, what: str, every_s: float = 0.02) -> None:
    """Return as soon as ``condition()`` is true; raise ``AssertionError`` naming ``what`` after ``timeout_s``
    seconds (wall clock). ``every_s``: the pause between checks (s)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout_s:g} s waiting for {what}"
        time.sleep(every_s)
