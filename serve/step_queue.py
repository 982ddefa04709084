"""One decode stage at a time per server process, in the order the Steps arrive.

Why: under a class's load each replica ran its ten sessions' Steps all at once, ten script threads
taking turns on Python's GIL every 5 ms, and streamlit's event loop (the main thread, which reads
and writes every session's websocket and starts each rerun's script thread) waited its turn behind
all of them. With the stage's runs queued here, one stage at a time competes for the GIL, not ten
(a Step's click callback, the model's step itself, still runs beside it). The work is the same; a
Step waits in line instead of inside everyone else's. What the line gained under load, and what
was tried beside it: docs/benchmarks.md, "Steps in line".

Only in a class server's replicas (``python -m serve`` sets ``EXPLAINER_STEPS_IN_LINE=1``; so do
the files in ``deploy/``), each serving ~10 sessions. One process holding a whole class of 40 was
not measured to gain from it: there the stage runs share the GIL with 40 sessions' page loads and
Step callbacks, which stay outside the line.

Only the decode page's stage (its fragment: a Step's rerun, Play's, and the stage part of a page
run) takes a turn. Page loads, measurements and cache builds do not: a two-second measurement in
line would hold up every Step behind it. ``waiting()`` tells the recompute check how busy the
process is (``core.decode.session.check_spacing``)."""

from __future__ import annotations

import functools
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager

ENV = "EXPLAINER_STEPS_IN_LINE"
IN_LINE = os.environ.get(ENV) == "1"  # read once: a process is a replica or not for its whole life
_cond = threading.Condition()
_line: deque[int] = deque()  # thread idents in arrival order; the first one holds the turn
_depth: dict[int, int] = {}  # how many times the holder has entered (a nested call waits for nothing)


@contextmanager
def turn() -> Iterator[None]:
    """Wait for this thread's turn (every earlier arrival has finished), then run the block; the
    turn passes on when it ends, also by an exception (streamlit's rerun and stop are exceptions).
    Outside a class server's replica (``IN_LINE`` false) it just runs the block."""
    if not IN_LINE:
        yield
        return
    me = threading.get_ident()
    with _cond:
        if _line and _line[0] == me:
            _depth[me] += 1
        else:
            _line.append(me)
            _depth[me] = 1
            try:
                _cond.wait_for(lambda: _line[0] == me)
            except BaseException:  # interrupted while waiting: leave the line, let the next one go
                _line.remove(me)
                del _depth[me]
                _cond.notify_all()
                raise
    try:
        yield
    finally:
        with _cond:
            _depth[me] -= 1
            if not _depth[me]:
                del _depth[me]
                _line.popleft()
                _cond.notify_all()


def one_at_a_time(fn: Callable) -> Callable:
    """``fn`` run inside ``turn()`` (a decorator, under ``st.fragment``)."""

    @functools.wraps(fn)
    def in_turn(*args, **kwargs):
        with turn():
            return fn(*args, **kwargs)

    return in_turn


def waiting() -> int:
    """Other sessions' stage runs in line, the running one included, as the calling thread sees them:
    the running stage counts the others behind it; a Step's click callback, which runs before its own
    stage and outside the line, counts everyone in it (0 when the process is quiet)."""
    me = threading.get_ident()
    with _cond:
        return sum(t != me for t in _line)
