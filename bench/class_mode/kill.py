"""A replica killed mid-class (SIGKILL): its students reconnect through nginx while the teacher keeps
stepping; their seats and answers are checked."""

from __future__ import annotations

import os
import signal

from bench.class_mode.joining import warm
from bench.class_mode.page import now
from bench.class_mode.tab import SEAT, TIMEOUT_S, until

RESTARTED = "restarted your session"  # ui.frame.note_lost_session's note


async def kill_one(lesson, k_now: int, plain_steps) -> None:
    """Kill a replica that holds students (and perhaps the display) but not the console; keep stepping
    (``plain_steps``: the Step numbers that may be taken meanwhile, no questions) until its followers are
    back at the teacher's step, its students with their seats and answers."""
    errors = lesson.out.errors
    by = {}
    for s in lesson.followers():
        by.setdefault(s.replicas[-1], []).append(s)
    teacher_on = lesson.teacher.replicas[-1]
    names = sorted((r for r in by if r != teacher_on), key=lambda r: -len(by[r]))
    if not names:
        errors.append("no replica holds students without the teacher: nothing to kill")
        return
    victim = next(r for r in lesson.srv.replicas if r.name == names[0])
    moved = by[victim.name]
    students = [s for s in moved if s is not lesson.display]
    seats = {s.name: s.seat for s in students}
    lesson.away = {s.name for s in moved}
    t_kill = now()
    os.kill(victim.proc.pid, signal.SIGKILL)
    back: dict[str, float] = {}

    def check_back():
        want = lesson.teacher.step
        for s in moved:
            if s.name not in back and s.reconnected_at and s.step == want and s.shown[-1][0] >= s.reconnected_at[-1]:
                back[s.name] = now()
        return len(back) == len(moved)

    k = k_now
    for nxt in plain_steps:  # the class goes on while they reconnect
        if check_back():
            break
        await lesson.step(nxt, ask=False)
        k = nxt
    if not await until(f"the killed replica's students back at step {k}", check_back, 2 * TIMEOUT_S, errors):
        for s in moved:
            if s.name not in back:
                errors.append(f"{s.name} not back: {s.state()}")
    lesson.away = set()
    streams: dict[str, float] = {}

    def streams_back():
        for s in moved:
            if s.name not in streams and s.stream is not None and s.stream.connects > 1:
                streams[s.name] = now()
        return len(streams) == len(moved)

    await until("the killed replica's followers' event streams open again", streams_back, 10, errors)
    kept = sum(
        lesson.store.my_answer(lesson.code, s.cookie(SEAT)[1], qid, rnd) == pick
        for (name, qid, rnd), pick in lesson.out.answers.items()
        for s in students
        if s.name == name
    )
    t_warm = now()
    await warm(lesson.srv.url, [victim])  # started again by serve: its first page would load the model for a student
    lesson.out.kill = {
        "replica": victim.name,
        "students": len(students),
        "display": lesson.display in moved,
        "after_step": k_now,
        "steps_meanwhile": k - k_now,
        "back": len(back),
        "back_s": [t - t_kill for t in back.values()],
        "closed": sum(bool(s.closed_at) for s in moved),
        "seat_kept": sum(
            s.seat == seats[s.name] and lesson.store.seat(lesson.code, s.cookie(SEAT)[1]) == s.seat for s in students
        ),
        "answers_kept": kept,
        "answers": sum(1 for (name, _, _) in lesson.out.answers for s in students if s.name == name),
        "moved_to": sorted({s.replicas[-1] for s in moved}),
        "restarted": victim.restarts,
        "warm_s": now() - t_warm,
        "warned": sum(any(RESTARTED in a for _, a in s.alerts) for s in students),
        "streams_back": len(streams),
        "streams_s": [t - t_kill for t in streams.values()],
    }
    if len(back) != len(moved) or kept != lesson.out.kill["answers"]:
        errors.append(f"kill: {len(back)} of {len(moved)} back, {kept} of {lesson.out.kill['answers']} answers kept")
