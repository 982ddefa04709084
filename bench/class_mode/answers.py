"""A question before a Step: the teacher opens it, every following student answers (some twice), and the
store's counts are checked against what was sent."""

from __future__ import annotations

import asyncio

from bench.class_mode.tab import Tab, now, param, until

ANSWER_WITHIN_S = 10  # the goal: every student answers within 10 s of the question
ANSWER_DELAY_S = (0.5, 6.0)  # a student reads the question and picks, this long after it appears


async def question(lesson, k: int) -> None:
    """Open the question before Step k; every student answers; check the store and time the
    teacher's count."""
    errors, students = lesson.out.errors, lesson.followers()
    t_open = now()
    toggled = asyncio.create_task(lesson.toggle_predict(True))  # its run may go on while students answer

    def asked():
        plan = lesson.store.plan(lesson.code)
        return plan[1].question if plan else None

    if not await until(f"the plan publishes the question before Step {k}", asked, errors=errors):
        await toggled
        return
    q = asked()
    qid, round_, n = q.id, q.round, len(q.options)
    sent: dict[str, tuple[float, int]] = {}
    lesson.answering = [
        asyncio.create_task(answer(lesson, s, qid, round_, i, sent, t_open)) for i, s in enumerate(students)
    ]
    await asyncio.gather(*lesson.answering, toggled)
    t_last = max((t for t, _ in sent.values()), default=now())
    t = lesson.teacher
    full = len(lesson.students)
    got = await until(
        f"the teacher's strip shows {full} of {full} answered",
        lambda: any(tt >= t_last and a == full for tt, a, _ in t.count),
        errors=errors,
    )
    seen = next((tt for tt, a, _ in t.count if tt >= t_last and a == full), None) if got else None
    picks = [p for _, p in sent.values()]
    tally = lesson.store.tally(lesson.code, qid, round_, n)
    mine_ok = sum(
        lesson.store.my_answer(lesson.code, param(s.query, "seat"), qid, round_) == sent[s.name][1]
        for s in students
        if s.name in sent
    )
    expected = [picks.count(i) for i in range(n)]
    entry = {
        "step": k,
        "qid": qid,
        "students": len(students),
        "sent": len(sent),
        "within": sum(tt - t_open <= ANSWER_WITHIN_S for tt, _ in sent.values()),
        "double": sum(1 for i in range(len(students)) if i % 4 == 3),
        "answered": lesson.store.answered(lesson.code, qid, round_),
        "tally": tally,
        "expected": expected,
        "mine_ok": mine_ok,
        "count_ms": None if seen is None else (seen - t_last) * 1000,
        "last_after_open_s": t_last - t_open,
    }
    lesson.out.questions.append(entry)
    for s in students:
        if s.name in sent:
            lesson.out.answers[(s.name, qid, round_)] = sent[s.name][1]
    if tally != expected or entry["answered"] != len(sent) or mine_ok != len(sent) or len(sent) != len(students):
        errors.append(
            f"question at Step {k}: sent {expected} from {len(sent)} students, the store counts {tally}, "
            f"answered {entry['answered']}, my_answer right for {mine_ok}"
        )


async def answer(lesson, s: Tab, qid: str, round_: int, i: int, sent: dict, t_open: float) -> None:
    key = (qid, round_)
    if not await until(
        f"{s.name}: the question's buttons", lambda: key in s.picks and s.picks[key], errors=lesson.out.errors
    ):
        return
    lesson.out.buttons_ms.append((now() - t_open) * 1000)
    await asyncio.sleep(lesson.rng.uniform(*ANSWER_DELAY_S))
    pick = lesson.rng.randrange(len(s.picks[key]))
    wid, fragment, _ = s.picks[key][pick]
    sent[s.name] = (now(), pick)
    await s.click(wid, fragment)
    if i % 4 == 3:  # a double click: the same button again before the page redraws it disabled
        await asyncio.sleep(0.05)
        await s.click(wid, fragment)
