"""A replica killed mid-class (SIGKILL): its students reconnect through nginx while the teacher keeps
stepping; their seats and answers are checked."""

from __future__ import annotations

import os
import signal

from bench.class_mode.tab import TIMEOUT_S, now, param, until

LOST = "restarted your session"  # ui.frame.note_lost_session's warning


async def kill_one(lesson, k_now: int, plain_steps) -> None:
    """Kill a replica that holds students but not the teacher; keep stepping (``plain_steps``:
    the Step numbers that may be taken meanwhile, no questions) until its students are back at
    the teacher's step with their seats and answers."""
    errors = lesson.out.errors
    by = {}
    for s in lesson.students:
        by.setdefault(s.replicas[-1], []).append(s)
    teacher_on = lesson.teacher.replicas[-1]
    names = sorted((r for r in by if r != teacher_on), key=lambda r: -len(by[r]))
    if not names:
        errors.append("no replica holds students without the teacher: nothing to kill")
        return
    victim = next(r for r in lesson.srv.replicas if r.name == names[0])
    moved = by[victim.name]
    seats = {s.name: s.seat for s in moved}
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
    kept = sum(
        lesson.store.my_answer(lesson.code, param(s.query, "seat"), qid, rnd) == pick
        for (name, qid, rnd), pick in lesson.out.answers.items()
        for s in moved
        if s.name == name
    )
    lesson.out.kill = {
        "replica": victim.name,
        "students": len(moved),
        "after_step": k_now,
        "steps_meanwhile": k - k_now,
        "back": len(back),
        "back_s": [t - t_kill for t in back.values()],
        "closed": sum(bool(s.closed_at) for s in moved),
        "seat_kept": sum(
            s.seat == seats[s.name] and lesson.store.seat(lesson.code, param(s.query, "seat")) == s.seat for s in moved
        ),
        "answers_kept": kept,
        "answers": sum(1 for (name, _, _) in lesson.out.answers for s in moved if s.name == name),
        "moved_to": sorted({s.replicas[-1] for s in moved}),
        "restarted": victim.restarts,
        "warned": sum(any(LOST in a for a in s.alerts) for s in moved),
    }
    if len(back) != len(moved) or kept != lesson.out.kill["answers"]:
        errors.append(f"kill: {len(back)} of {len(moved)} back, {kept} of {lesson.out.kill['answers']} answers kept")
