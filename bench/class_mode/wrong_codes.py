"""One student's browser sends ``--wrong-codes`` join attempts with codes that name no class, as fast as the join
route answers, while classmates join through the form, all at once (issue 49: a classmate's join is not delayed by
more than ``DELAY_GOAL_S``): their joins against as many classmates' joins at once just before, the route's answers
to the wrong codes, and the same browser's right code afterwards (refused with the wait, 429, as long as that
browser is over its limit: a guesser must not learn which code is right)."""

from __future__ import annotations

import asyncio
import random

from bench.class_mode import joining, web
from bench.class_mode.page import now
from bench.class_mode.tab import Tab
from core.classroom.rules import CODE_ALPHABET

DELAY_GOAL_S = 1.0


def wrong_code(rng: random.Random, right: str) -> str:
    while (code := "".join(rng.choice(CODE_ALPHABET) for _ in range(len(right)))) == right:
        pass
    return code


async def wrong_codes(lesson, attempts: int) -> None:
    out, errors, code = lesson.out, lesson.out.errors, lesson.code
    classmates = 2 if lesson.args.quick else 3
    n = len(lesson.students)

    async def classmate(i: int) -> float | None:
        tab = Tab(f"student {i}", base=lesson.srv.url, query=f"class={code}")
        lesson.students.append(tab)
        took = await joining.join(tab, code, f"student {i}", errors)
        return None if took is None else took[2]  # the link opened → the seat line

    alone = await asyncio.gather(*(classmate(n + j) for j in range(classmates)))  # at once, nobody else joining
    pest = web.Jar()
    rng = random.Random(49)
    statuses: list[int] = []
    lasted: list[float] = []

    def hammer() -> None:
        t0 = now()
        for _ in range(attempts):
            statuses.append(web.post(lesson.srv.url, joining.ROUTES + "join", {"code": wrong_code(rng, code)}, pest)[0])
        lasted.append(now() - t0)

    hammering = asyncio.create_task(asyncio.to_thread(hammer))
    await asyncio.sleep(0)  # the wrong codes have begun
    t_join = now()
    during = await asyncio.gather(*(classmate(n + classmates + j) for j in range(classmates)))
    t_joined = now()
    await hammering
    wrong_s = lasted[0]
    status, answer = await asyncio.to_thread(web.post, lesson.srv.url, joining.ROUTES + "join", {"code": code}, pest)
    ok_alone, ok_during = [a for a in alone if a is not None], [d for d in during if d is not None]
    delay_s = (max(ok_during, default=float("nan")) - max(ok_alone, default=float("nan"))) / 1000
    out.wrong = {
        "attempts": attempts,
        "s": wrong_s,
        "statuses": {s: statuses.count(s) for s in sorted(set(statuses))},
        "alone_ms": alone,
        "during_ms": list(during),
        "overlap_s": max(0.0, min(t_joined, t_join + wrong_s) - t_join),  # the joins and the wrong codes at once
        "joins_s": t_joined - t_join,
        "delay_s": delay_s,
        "right_code": status,
    }
    if status != 429 or None in alone or None in out.wrong["during_ms"]:
        errors.append(
            f"wrong codes: classmates joined in {alone} ms before and {out.wrong['during_ms']} ms during {attempts} "
            f"wrong codes (delay {delay_s:.2f} s); the same browser's right code answered {status} {answer} "
            "(429 expected)"
        )
