"""How often a class route lets a browser, or everyone, fail or start afresh (issue 55): wrong codes and passwords
per browser and on this replica in all (``Failures``), and new seats a minute (``NewSeats``), so no code or
password is left to guessing and no script fills a class. Times are ``time.monotonic()`` seconds."""

from __future__ import annotations

import collections
import math
import time


class Failures:
    """Wrong codes or passwords per browser and on this replica in all, over the last ``window_s``: a code (a class's,
    a pairing code) or the teacher password is not left to guessing. A browser over ``per_browser``, or the replica
    over ``overall`` (guesses that change cookies each time), is refused until enough of its failures leave the
    window: never longer than ``window_s``."""

    def __init__(self, per_browser: int, overall: int, window_s: float = 60.0):
        self.per_browser, self.overall, self.window_s = per_browser, overall, window_s
        self.times: dict[str, collections.deque] = {}
        self.all: collections.deque = collections.deque()

    def _trim(self, times: collections.deque, now: float) -> collections.deque:
        while times and times[0] <= now - self.window_s:
            times.popleft()
        return times

    def wait_s(self, browser: str, now: float | None = None) -> int:
        """Whole seconds until ``browser`` may try again (0: now). A browser whose failures all left the window is
        forgotten (a script that changes cookies leaves no trail)."""
        now = time.monotonic() if now is None else now
        mine = self._trim(self.times.get(browser, collections.deque()), now)
        if not mine:
            self.times.pop(browser, None)
        every = self._trim(self.all, now)
        # Over a limit, the failure whose leaving brings the count under it decides the wait.
        frees = [q[len(q) - cap] for q, cap in ((mine, self.per_browser), (every, self.overall)) if len(q) >= cap]
        return max(1, math.ceil(max(frees) + self.window_s - now)) if frees else 0

    def note(self, browser: str, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self.times.setdefault(browser, collections.deque()).append(now)
        self.all.append(now)


class NewSeats:
    """New seats a replica gives, as a token bucket: ``burst`` at once (a class joining through its pages in a few
    seconds), then one every ``60 / per_minute`` s. A seat needs the browser cookie a join's first answer sets
    (``serve.class_routes``) and the store gives a browser its own seat back, so a script that drops its cookie never
    sits, one that keeps it holds one seat, and one that makes new browsers meets this bucket. Only seats given
    count: wrong codes (``Failures``) and browsers already seated here take nothing."""

    def __init__(self, burst: int, per_minute: float, remember: int = 10_000):
        self.burst, self.rate, self.remember = burst, per_minute / 60.0, remember
        self.tokens, self.at = float(burst), time.monotonic()
        self.seated: dict[str, None] = {}  # browsers seated on this replica, oldest first (a bounded memory)

    def _fill(self, now: float) -> None:
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now

    def wait_s(self, browser: str, now: float | None = None) -> int:
        """0 when ``browser`` may be given a seat now (it holds one here, or the bucket has one), else the whole
        seconds until the bucket has one."""
        self._fill(time.monotonic() if now is None else now)
        if browser in self.seated or self.tokens >= 1:
            return 0
        return max(1, math.ceil((1 - self.tokens) / self.rate))

    def seat(self, browser: str, now: float | None = None) -> None:
        """``browser`` was given a seat: it takes one from the bucket unless it held one here already."""
        if browser in self.seated:
            return
        self._fill(time.monotonic() if now is None else now)
        self.tokens -= 1  # joins let in together may take the bucket below 0: the next wait is that much longer
        self.seated[browser] = None
        if len(self.seated) > self.remember:
            del self.seated[next(iter(self.seated))]
