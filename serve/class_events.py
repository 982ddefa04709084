"""Class mode's event stream on one replica: one ``Watcher`` per class that reads the store's pulse every
``PULSE_S`` while any page listens, and sends each listening page the new pulse (never a secret: versions and
counts), that the store cannot be reached, or that the class has ended. Imports no streamlit."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from core.classroom.rules import StoreUnavailable

PULSE_S = 0.2  # how often a replica's watcher reads a class's pulse (s): a change reaches pages within ~0.2 s


class Watcher:
    """One class's pulse on this replica: read every ``PULSE_S`` while any page listens, sent to each listener
    when it changes (the last one is sent at once to a new listener); ``on_done(self)`` when it stops."""

    def __init__(self, store, code: str, on_done: Callable[[Watcher], None] = lambda w: None):
        self.store, self.code, self.on_done = store, code, on_done
        self.queues: set[asyncio.Queue] = set()
        self.last: dict | None = None
        self.task = asyncio.get_running_loop().create_task(self._run())
        self.done = False

    def subscribe(self) -> asyncio.Queue:
        queue: asyncio.Queue = asyncio.Queue(maxsize=16)
        if self.last is not None:
            queue.put_nowait(self.last)
        self.queues.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue) -> None:
        self.queues.discard(queue)

    async def _run(self) -> None:
        idle = 0
        try:
            while True:
                event = await self._read()
                if event != self.last:
                    self.last = event
                    for queue in list(self.queues):
                        with contextlib.suppress(asyncio.QueueFull):  # a stuck page misses pulses, not the newest
                            if queue.full():
                                queue.get_nowait()
                            queue.put_nowait(event)
                if event.get("ended"):
                    return
                idle = 0 if self.queues else idle + 1
                if idle * PULSE_S > 5:  # nobody listened for 5 s: stop reading
                    return
                await asyncio.sleep(PULSE_S)
        finally:
            self.done = True
            self.on_done(self)

    async def _read(self) -> dict:
        try:
            pulse = await asyncio.to_thread(self.store.pulse, self.code)
        except StoreUnavailable:
            return {"unavailable": True}
        if pulse is None:
            return {"ended": True}
        return {
            "version": pulse.version,
            "students": pulse.students,
            "answered": pulse.answered,
            "question": pulse.question,
            "round": pulse.round,
        }
