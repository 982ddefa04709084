"""A question before a Step: the teacher opens it, every following student answers (some twice), and the
store's counts are checked against what was sent."""

from __future__ import annotations

import asyncio

from bench.class_mode.page import now
from bench.class_mode.tab import SEAT, Tab, until

ANSWER_WITHIN_S = 10  # the goal: every student answers within 10 s of the question
ANSWER_FROM_S = 0.5  # a student reads the question and picks 0.5 s … --answer-s after its buttons appear


def answering(lesson) -> list[Tab]:
    """The students who follow now (not the display, not the killed replica's)."""
    return [s for s in lesson.followers() if s is not lesson.display]


async def open_question(lesson, k: int):
    """*Predict first* on: (the plan's question, the toggle's task: its run may go on while students answer),
    or None when the plan never published one."""
    toggled = asyncio.create_task(lesson.toggle_predict(True))

    def asked():
        plan = lesson.store.plan(lesson.code)
        return plan[1].question if plan else None

    if not await until(f"the plan publishes the question before Step {k}", asked, errors=lesson.out.errors):
        await toggled
        return None
    return asked(), toggled


def start_answers(lesson, students, q, t_open: float, sent: dict) -> list[asyncio.Task]:
    return [asyncio.create_task(answer(lesson, s, q.id, q.round, i, sent, t_open)) for i, s in enumerate(students)]


async def question(lesson, k: int) -> None:
    """Open the question before Step k; every student answers; check the store and time the console's count."""
    students, t_open = answering(lesson), now()
    cpu0, reruns0 = lesson.replicas_cpu(), lesson.reruns()
    opened = await open_question(lesson, k)
    if opened is None:
        return
    q, toggled = opened
    sent: dict[str, tuple[float, int]] = {}
    await asyncio.gather(*start_answers(lesson, students, q, t_open, sent), toggled)
    t_last = max((t for t, _ in sent.values()), default=now())
    t, full = lesson.teacher, len(students)
    seen = None
    if await until(
        f"the console's bar shows {full} of {full} answered",
        lambda: any(tt >= t_last and a == full for tt, a, _ in t.count),
        errors=lesson.out.errors,
    ):
        seen = next(tt for tt, a, _ in t.count if tt >= t_last and a == full)
    entry = check(lesson, k, students, q, sent, t_open)
    entry["count_ms"] = None if seen is None else (seen - t_last) * 1000
    entry["cores"] = (lesson.replicas_cpu() - cpu0) / (now() - t_open)
    entry["reruns"] = lesson.reruns() - reruns0
    lesson.out.questions.append(entry)


def check(lesson, k: int, students, q, sent: dict, t_open: float) -> dict:
    """The store's tally, count and each seat's ``my_answer`` against what was sent; an error when they differ."""
    store, code, n = lesson.store, lesson.code, len(q.options)
    picks = [p for _, p in sent.values()]
    tally = store.tally(code, q.id, q.round, n)
    mine_ok = sum(
        store.my_answer(code, s.cookie(SEAT)[1], q.id, q.round) == sent[s.name][1] for s in students if s.name in sent
    )
    expected = [picks.count(i) for i in range(n)]
    entry = {
        "step": k,
        "qid": q.id,
        "students": len(students),
        "sent": len(sent),
        "within": sum(tt - t_open <= ANSWER_WITHIN_S for tt, _ in sent.values()),
        "double": sum(1 for i in range(len(students)) if i % 4 == 3),
        "answered": store.answered(code, q.id, q.round),
        "tally": tally,
        "expected": expected,
        "mine_ok": mine_ok,
        "last_after_open_s": max((t for t, _ in sent.values()), default=t_open) - t_open,
    }
    for s in students:
        if s.name in sent:
            lesson.out.answers[(s.name, q.id, q.round)] = sent[s.name][1]
    if tally != expected or entry["answered"] != len(sent) or mine_ok != len(sent) or len(sent) != len(students):
        lesson.out.errors.append(
            f"question at Step {k}: sent {expected} from {len(sent)} of {len(students)} students, the store counts "
            f"{tally}, answered {entry['answered']}, my_answer right for {mine_ok}"
        )
    return entry


async def answer(lesson, s: Tab, qid: str, round_: int, i: int, sent: dict, t_open: float) -> None:
    key = (qid, round_)
    if not await until(
        f"{s.name}: the question's buttons", lambda: key in s.picks and s.picks[key], errors=lesson.out.errors
    ):
        return
    lesson.out.buttons_ms.append((now() - t_open) * 1000)
    await asyncio.sleep(lesson.rng.uniform(ANSWER_FROM_S, lesson.args.answer_s))
    pick = lesson.rng.randrange(len(s.picks[key]))
    wid, fragment, _ = s.picks[key][pick]
    sent[s.name] = (now(), pick)
    await s.click(wid, fragment)
    if i % 4 == 3:  # a double click: the same button again before the page redraws it disabled
        await asyncio.sleep(0.05)
        await s.click(wid, fragment)
