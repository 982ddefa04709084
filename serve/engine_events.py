"""What the class engine hands its pages (``serve.engine_service``): a request's stream of events and its numbers,
and the ``Signal`` that wakes the routes' coroutines from the engine's thread. Imports no streamlit."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field


class Signal:
    """Wakes coroutines on any event loop from another thread: ``arm`` a future, check what you wait for, then
    ``wait`` on it (so a ``fire`` between the check and the wait is not missed)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._armed: set[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = set()

    def arm(self) -> tuple[asyncio.AbstractEventLoop, asyncio.Future]:
        loop = asyncio.get_running_loop()
        armed = (loop, loop.create_future())
        with self._lock:
            self._armed.add(armed)
        return armed

    async def wait(self, armed, timeout: float) -> None:
        try:
            await asyncio.wait_for(asyncio.shield(armed[1]), timeout)
        except TimeoutError:
            pass
        finally:
            with self._lock:
                self._armed.discard(armed)

    def fire(self) -> None:
        with self._lock:
            armed, self._armed = self._armed, set()
        for loop, fut in armed:
            loop.call_soon_threadsafe(lambda f=fut: f.done() or f.set_result(None))


@dataclass
class Stream:
    """One request's events for its page, and who may read them (``owner``: a browser id)."""

    rid: str
    owner: str
    label: str
    events: list[dict] = field(default_factory=list)
    text_len: int = 0
    done_at: float | None = None
    arrival: float | None = None  # perf_counter s at Send
    admitted_ms: float | None = None  # since Send: its prefill began
    token_ms: list[float] = field(default_factory=list)  # since Send
    numbers: dict | None = None


def request_numbers(r) -> dict:
    """TTFT, TPOT and ITL (ms) of a finished request, its prefix-cache hits and preemptions."""
    times = [1000 * (t - r.arrival) for t in r.token_times]
    itl = sorted(b - a for a, b in zip(times, times[1:], strict=False))
    pick = lambda q: itl[min(len(itl) - 1, round(q * (len(itl) - 1)))] if itl else None  # noqa: E731
    return {
        "ttft_ms": times[0],
        "tpot_ms": (times[-1] - times[0]) / (len(times) - 1) if len(times) > 1 else None,
        "itl_p50_ms": pick(0.5),
        "itl_max_ms": itl[-1] if itl else None,
        "tokens": len(times),
        "hit_tokens": r.hit_tokens or 0,
        "prompt_tokens": len(r.prompt),
        "preemptions": r.preemptions,
    }
