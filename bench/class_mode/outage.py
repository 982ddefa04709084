"""The class store unavailable for ``--outage-s`` seconds mid-class (issue 49): it goes while the students answer
a question (some answers before it, some during), the teacher takes the Step meanwhile, and when it is back the
pages must say nothing worse than "Lost the connection to the class" (no traceback), every answer must be counted
once, and every follower must show the teacher's step within ``BACK_GOAL_S`` of the store's return."""

from __future__ import annotations

import asyncio

from bench.class_mode.answers import answering, check, open_question, start_answers
from bench.class_mode.page import now
from bench.class_mode.tab import SEAT, TIMEOUT_S, until

STOP_FRACTION = 0.5  # the store goes half way through the answering window: about half the answers are given
BACK_GOAL_S = 5.0  # the goal: followers at the teacher's step within 5 s of the store's return


async def outage(lesson, k: int) -> None:
    """The question before Step k with the store going away in the middle; Step k taken while it is away."""
    out, errors, control, t = lesson.out, lesson.out.errors, lesson.control, lesson.teacher
    students, t_open = answering(lesson), now()
    opened = await open_question(lesson, k)
    if opened is None:
        return
    q, toggled = opened
    sent: dict[str, tuple[float, int]] = {}
    tasks = start_answers(lesson, students, q, t_open, sent)
    await asyncio.sleep(max(0.0, t_open + STOP_FRACTION * lesson.args.answer_s - now()))
    t_stop = now()
    await asyncio.to_thread(control.stop)
    t_stopped = now()
    await asyncio.gather(*tasks, toggled)
    before = {name for name, (tt, _) in sent.items() if tt < t_stop}
    during = {name for name, (tt, _) in sent.items() if tt >= t_stopped}
    await asyncio.sleep(max(0.0, t_stopped + lesson.args.outage_s / 2 - now()))
    followers = lesson.followers()
    t_click = now()
    await t.click(*t.buttons["Step ▸"][:2])  # reveals the question and takes Step k while the store is away
    await asyncio.sleep(max(0.0, t_stopped + lesson.args.outage_s - now()))
    console_during = t.reached(k, t_click)
    await asyncio.to_thread(control.start)
    t_back = now()
    if not await until(
        f"every follower at step {k} after the store's return",
        lambda: all(s.reached(k, t_click) for s in followers),
        TIMEOUT_S,
        errors,
    ):
        errors += [
            f"{s.name} not at step {k} after the outage: {s.state()}" for s in followers if not s.reached(k, t_click)
        ]
    await until(f"the console's stage at step {k}", lambda: t.reached(k, t_click), 10)
    back_s = [max(0.0, s.reached(k, t_click) - t_back) for s in followers if s.reached(k, t_click)]
    await until("every answer in the store", lambda: lesson.store.answered(lesson.code, q.id, q.round) >= len(sent), 10)
    entry = check(lesson, k, students, q, sent, t_open)
    entry["count_ms"] = None  # revealed during the outage: the console's bar shows no count after it
    entry["cores"], entry["reruns"] = float("nan"), None
    lesson.out.questions.append(entry)
    store, code = lesson.store, lesson.code

    def counted(names):
        return sum(
            store.my_answer(code, s.cookie(SEAT)[1], q.id, q.round) == sent[s.name][1]
            for s in students
            if s.name in names
        )

    tabs = lesson.tabs()
    out.outage = {
        "store": control.name,
        "s": t_back - t_stopped,
        "before": len(before),
        "before_counted": counted(before),
        "during": len(during),
        "during_counted": counted(during),
        "answered": entry["answered"],
        "sent": len(sent),
        "followers": len(followers),
        "back": len(back_s),
        "back_s": back_s,
        "within_goal": sum(b <= BACK_GOAL_S for b in back_s),
        "console_during": console_during is not None,
        "console_back_s": None if t.reached(k, t_click) is None else max(0.0, t.reached(k, t_click) - t_back),
        "said_lost": sum(tab.lost_since(t_stop) for tab in tabs),
        "tabs": len(tabs),
        "tracebacks": sum(len(tab.exceptions) for tab in tabs),
    }
    if counted(before) != len(before) or counted(during) != len(during):
        errors.append(
            f"outage: {counted(before)} of {len(before)} answers given before it counted, {counted(during)} of "
            f"{len(during)} given while the store was away"
        )
    await lesson.toggle_predict(False)
