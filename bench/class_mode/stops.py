"""A guided lesson walked by the teacher's console with the class following (``walk``, issue 54): the console
opens the lesson's link in the class, presses → to its last stop (``--lesson-stops``: that many) and ← back to
stop 1, then leaves the lesson; after each move every follower's page is timed to the console's stop on the
console's page, then checked for a blank page once the class sits still, and the replicas' CPU is measured."""

from __future__ import annotations

import asyncio

from bench.class_mode.page import now
from bench.class_mode.tab import TIMEOUT_S, Tab, until
from bench.procs import cpu_seconds
from core.lesson.pages import PAGES
from core.lesson.stops import load_shipped

QUIET_S = 1.0  # no message to any tab for this long: the move is over
LEAVE_KEY = "lesson.leave"  # ui/lesson/keys.py's LESSON_LEAVE (a button with an icon and no label)


def on_stop(tab: Tab, k: int, page: str, after: float) -> float | None:
    """When ``tab`` first drew the lesson bar at stop ``k`` (from 1) on page ``page`` (a navigation hash) at or
    after ``after`` (None: not yet)."""
    return next((t for t, s, h in tab.stops if t >= after and s == k and h == page), None)


def blank(tab: Tab, k: int, page: str, title: str, after: float) -> str | None:
    """Why ``tab``'s page, once the class sits still after the move at ``after``, is not stop ``k`` with its
    page's body (None: it is): its last lesson bar is another stop or page, no heading ``title`` was drawn on the
    page since, or a fragment of the page it left ran after it moved (the frontend then drops the body)."""
    if not tab.stops or tab.stops[-1][1:] != (k, page) or tab.lesson_bar is None:
        return f"shows {tab.stops[-1][1:] if tab.stops else None}, not stop {k}"
    if not any(t >= after and text == title and h == page for t, text, h in tab.headings):
        return f"no heading {title!r} drawn"
    if stale := [h for t, h in tab.stale_runs if t >= after]:
        return f"{len(stale)} fragment run(s) of a page it left"
    return None


async def walk(lesson, name: str, n_stops: int | None, cpu_s: float) -> dict:
    """Walk shipped lesson ``name`` in ``lesson``'s class (a ``bench.class_mode.lesson.Lesson`` with its
    console and followers); returns the phase's measures: per move its stop, the followers' latencies (ms),
    blanks and errors, and the replicas' CPU (cores) over the ``cpu_s`` seconds after the class sat still."""
    t = lesson.teacher
    stops = load_shipped(name).stops
    n = min(n_stops or len(stops), len(stops))
    out = {"lesson": name, "stops": len(stops), "walked": n, "moves": []}
    t0 = now()
    await t.navigate(f"class={lesson.code}&lesson={name}&stop=1")
    order = [1, *range(2, n + 1), *range(n - 1, 0, -1)]
    cpu0 = lesson.replicas_cpu()
    for i, k in enumerate(order):
        if i:
            t0, cpu0 = now(), lesson.replicas_cpu()
            await t.click(*t.buttons["→" if k > order[i - 1] else "←"][:2])
        move = await _followed(lesson, k, stops[k - 1].page, t0, cpu_s)
        out["moves"].append(move)
        if move is None:
            return out
        move["move_cpu_s"] = move.pop("cpu_at_still") - cpu0  # the replicas' CPU, the click → the class sat still
    out["left_ms"] = await _leave(lesson)
    return out


async def _followed(lesson, k: int, page_name: str, t0: float, cpu_s: float) -> dict | None:
    t, errors = lesson.teacher, lesson.out.errors
    if not await until(f"the console at lesson stop {k}", lambda: t.stops and t.stops[-1][1] == k, errors=errors):
        return None
    page = t.stops[-1][2]
    followers = lesson.followers()
    await until(
        f"every follower at lesson stop {k}",
        lambda: all(on_stop(s, k, page, t0) for s in followers),
        2 * TIMEOUT_S,
        errors,
    )
    seen = {s.name: on_stop(s, k, page, t0) for s in followers}
    tabs = lesson.tabs()
    await until("the class sits still", lambda: now() - max(x.last_message for x in tabs) > QUIET_S, 30)
    pids = [r.proc.pid for r in lesson.srv.replicas if r.proc.poll() is None]
    sent, cpu, tc = lesson.reruns(), sum(cpu_seconds(p) for p in pids), now()
    still = lesson.replicas_cpu()
    await asyncio.sleep(cpu_s)
    title = PAGES[page_name].title
    blanks = {s.name: why for s in followers if (why := blank(s, k, page, title, t0))}
    errors += [f"{s.name} at lesson stop {k}: {why}" for s, why in ((s, blanks.get(s.name)) for s in followers) if why]
    thrown = [e for s in tabs for e in s.exceptions if e not in lesson.out.errors]
    return {
        "stop": k,
        "page": page_name,
        "followers": len(followers),
        "on_stop": sum(x is not None for x in seen.values()),
        "ms": [(x - t0) * 1000 for x in seen.values() if x is not None],
        "blank": len(blanks),
        "errors": len(thrown),
        "cores": (sum(cpu_seconds(p) for p in pids) - cpu) / (now() - tc),
        "reruns_after": lesson.reruns() - sent,
        "cpu_at_still": still,
    }


async def _leave(lesson) -> float | None:
    """The console's ✕ on the lesson bar: ms until no follower draws the lesson bar any more (None: some still
    did within the timeout, an error)."""
    t, errors = lesson.teacher, lesson.out.errors
    wid, fragment = next((v[:2] for v in t.button_ids.values() if v[0].endswith(f"-{LEAVE_KEY}")), (None, None))
    if wid is None:
        errors.append("the console's lesson bar has no leave button")
        return None
    t0 = now()
    await t.click(wid, fragment)
    followers = lesson.followers()
    gone = lambda s: s.lesson_bar is None or s.lesson_bar < t0  # noqa: E731 — drawn again since? not any more
    if not await until(
        "every follower without the lesson bar",
        lambda: all(gone(s) and s.last_message > t0 and now() - s.last_message > QUIET_S for s in followers),
        2 * TIMEOUT_S,
        errors,
    ):
        return None
    return (max(s.last_message for s in followers) - t0) * 1000
