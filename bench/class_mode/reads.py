"""Pulses whose plan version did not move, and the plan reads they cause (``count_pulses``, issue 54): new
students join through the class route alone (no page opens), so the class's pulse moves its count and not its
plan version; every page's reads of the plan meanwhile are seen by Redis's MONITOR (``PlanReads``: a class
store on Redis only; the reads are ``core.classroom.redis_store``'s ``plan``, HMGET of the class's meta hash for
its version and plan). Goal: none."""

from __future__ import annotations

import asyncio
import secrets
import threading
import time

import redis

from bench.class_mode import web
from bench.class_mode.page import now
from bench.class_mode.tab import until

QUIET_S = 1.0  # no message to any tab for this long: the pulse's reruns are over


class PlanReads:
    """Redis's MONITOR on ``url`` in a thread: the times (``time.monotonic``) this machine saw each read of
    class ``code``'s plan."""

    def __init__(self, url: str, code: str):
        self.client = redis.Redis.from_url(url)
        self.want = f"class:{code}:meta".encode()
        self.times: list[float] = []
        self.marks: set[bytes] = set()  # the markers ``sync`` sent that MONITOR has brought back
        self.seen = threading.Condition()
        self.monitor = self.client.monitor()
        self.monitor.__enter__()  # MONITOR sent: every command from here on comes back
        self.thread = threading.Thread(target=self._listen, daemon=True)
        self.thread.start()

    def _listen(self) -> None:
        conn = self.monitor.connection
        while True:
            try:
                line = conn.read_response()
            except Exception:  # noqa: BLE001 — ``close`` disconnects under the read (a closed or missing socket)
                return
            words = line.split() if isinstance(line, bytes) else []
            if len(words) >= 5 and words[3].strip(b'"').upper() == b"ECHO":
                with self.seen:
                    self.marks.add(words[4].strip(b'"'))
                    self.seen.notify_all()
            if len(words) >= 6 and words[3].strip(b'"').upper() == b"HMGET" and words[4].strip(b'"') == self.want:
                if b'"plan"' in words[5:]:
                    self.times.append(time.monotonic())

    def sync(self, timeout_s: float = 30.0) -> bool:
        """Send a marker (ECHO) and wait until MONITOR brings it back: every command Redis ran before it has then
        been seen. Whether it came within ``timeout_s``."""
        token = secrets.token_hex(8).encode()
        self.client.echo(token)
        with self.seen:
            return self.seen.wait_for(lambda: token in self.marks, timeout_s)

    def between(self, t0: float, t1: float) -> int:
        return sum(t0 <= t <= t1 for t in self.times)

    def close(self) -> None:
        try:
            self.monitor.connection.disconnect()
        finally:
            self.client.close()


async def count_pulses(lesson, store_url: str, joins: int) -> dict:
    """``joins`` students join one after another through the join route alone; after each, wait until every
    tab's stream brought the new count and the class sat still. The pulses, the reruns the pages sent for them,
    and the plan reads meanwhile."""
    tabs = [t for t in lesson.tabs() if t.stream is not None]
    before: dict = {}
    reads = PlanReads(store_url, lesson.code)
    try:
        await asyncio.to_thread(reads.sync)  # MONITOR answering: the reads from here on are seen
        t0, sent0 = time.monotonic(), lesson.reruns()
        for i in range(joins):
            before.update({t.name: len(t.pulses) for t in tabs})
            status, answer = await asyncio.to_thread(
                web.post,
                lesson.srv.url,
                "/explainer/class/join",
                {"code": lesson.code, "nickname": f"late {i}"},
                web.Jar(),
            )
            if status != 200:
                lesson.out.errors.append(f"a late join answered {status}: {answer.get('error')}")
                break
            await until(
                "every tab's stream brought the count",
                lambda: all(len(t.pulses) > before[t.name] for t in tabs),
                errors=lesson.out.errors,
            )
            await until("the class sits still", lambda: now() - max(t.last_message for t in tabs) > QUIET_S, 30)
        await asyncio.to_thread(reads.sync)  # every read Redis ran until now has been seen
        return {
            "pulses": joins,
            "tabs": len(tabs),
            "reruns": lesson.reruns() - sent0,
            "reads": reads.between(t0, time.monotonic()),
        }
    finally:
        reads.close()
