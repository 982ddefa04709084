"""The server process's heap and Python's cyclic garbage collector: long-lived objects are frozen.

Why: under a class's load every replica ran full (generation 2) collections with the GIL held, and
every Step of that replica's students waited for each one: those pauses were the bursts of slow
Steps that made the Step p95 (measured: docs/benchmarks.md, "A frozen heap"). A full collection
walks every tracked object, and most of them are the modules (torch, streamlit, plotly, pint,
gguf …) with their functions and constants, which never become garbage. ``gc.freeze()`` (CPython
≥ 3.7) moves every object alive now into a permanent generation that collections skip.

When: after a script run that imported modules the process had not frozen yet (its first run,
and a page's first visit in this process): one collection, then freeze what survived. Once every
page has been visited there is nothing new, and no more freezes. The price: whatever else is alive
in the process at a freeze (every connected session's state, other threads' objects of the moment)
is not found by the cycle collector if it later becomes garbage in a reference cycle; reference
counting still frees everything else. Each module is imported once per process, so this happens a
bounded number of times (about once per page), not per student. A module another thread is still importing at
that moment is already in ``sys.modules``: the objects it creates afterwards stay unfrozen (full
collections walk them; nothing leaks)."""

from __future__ import annotations

import gc
import sys
import threading

_lock = threading.Lock()
_modules_frozen = 0  # len(sys.modules) at the last freeze


def settle() -> bool:
    """Collect and freeze the heap if modules were imported since the last freeze (thread-safe:
    every session's script runs on its own thread). Returns whether it froze. The first collection
    and freeze in a process take ~0.1 s, later ones a few ms; with nothing new, ~0.1 µs."""
    global _modules_frozen
    if len(sys.modules) <= _modules_frozen:
        return False
    with _lock:
        if len(sys.modules) <= _modules_frozen:
            return False
        gc.collect()
        gc.freeze()
        _modules_frozen = len(sys.modules)
        return True
