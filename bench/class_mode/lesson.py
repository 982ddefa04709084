"""The teacher's class, driven step by step: the students join through the form and follow each Step
(``Lesson``); ``Run`` holds everything measured."""

from __future__ import annotations

import asyncio
import random
import urllib.parse
from dataclasses import dataclass, field

from bench.class_mode.answers import question
from bench.class_mode.kill import kill_one
from bench.class_mode.tab import TIMEOUT_S, Tab, now, param, until
from bench.procs import cpu_seconds

THINK_S = 0.5  # the teacher's pause after every follower shows a Step


@dataclass
class Run:
    """Everything measured in one class, and the errors found."""

    errors: list = field(default_factory=list)
    join_ms: list = field(default_factory=list)
    follow_ms: list = field(default_factory=list)  # teacher's click → follower shows the Step
    follow_from_teacher_ms: list = field(default_factory=list)  # teacher's stage shows it → follower
    notice_ms: list = field(default_factory=list)  # teacher's click → the follower's poll reruns its app
    page_ms: list = field(default_factory=list)  # that rerun → its stage shows the Step
    without_full_run: int = 0  # follows shown by a rerun of the stage alone (no full app run in between)
    buttons_ms: list = field(default_factory=list)  # question opened → its buttons on a student's page
    idle_cores: float = float("nan")  # replicas' CPU (cores) while the class sits still, every tab polling
    seated: int = 0
    followed: int = 0
    to_follow: int = 0
    questions: list = field(default_factory=list)  # one dict per question
    kill: dict = field(default_factory=dict)
    window_ms: list = field(default_factory=list)  # others' following while the killed were away
    answers: dict = field(default_factory=dict)  # (student, qid) -> pick sent


class Lesson:
    """The teacher's class, driven step by step (``run``)."""

    def __init__(self, args, srv, store, code: str, key: str):
        self.args, self.srv, self.store, self.code, self.key = args, srv, store, code, key
        self.out = Run()
        self.rng = random.Random(41)
        self.teacher: Tab | None = None
        self.students: list[Tab] = []
        self.away: set[str] = set()  # students on the killed replica, until they are back
        self.answering: list[asyncio.Task] = []

    # --- joining ---------------------------------------------------------------------------------
    async def open_teacher(self) -> None:
        self.teacher = Tab(
            "teacher", self.srv.url, urllib.parse.urlencode({"class": self.code, "key": self.key, "present": 1})
        )
        await self.teacher.open()
        t = self.teacher
        await until("the teacher's page draws Prefill", lambda: "Prefill" in t.buttons, errors=self.out.errors)
        before = t.full_runs
        await t.click(*t.buttons["Prefill"][:2])
        await until(
            "the teacher's stage shows step 0", lambda: t.step == 0 and t.full_runs > before, errors=self.out.errors
        )

    async def join(self, i: int, delay_s: float) -> None:
        await asyncio.sleep(delay_s)
        tab = Tab(f"student {i}", self.srv.url, urllib.parse.urlencode({"class": self.code}))
        self.students.append(tab)
        errors = self.out.errors
        await tab.open()
        if not await until(
            f"{tab.name}: the join form",
            lambda: {"Class code", "Nickname (optional)"} <= set(tab.inputs) and "Join" in tab.buttons,
            errors=errors,
        ):
            return
        code_id, nick_id = tab.inputs["Class code"], tab.inputs["Nickname (optional)"]
        join_id, fragment, _ = tab.buttons["Join"]

        def typed(wid, text):
            def set_state(w):
                w.id, w.string_value = wid, text

            return set_state

        def submit(w):
            w.id, w.trigger_value = join_id, True

        t0 = now()
        await tab.send(fragment, [typed(code_id, self.code), typed(nick_id, f"student {i}"), submit])
        if await until(f"{tab.name}: seated", lambda: tab.seat is not None and param(tab.query, "seat"), errors=errors):
            self.out.join_ms.append((now() - t0) * 1000)

    # --- following -------------------------------------------------------------------------------
    def followers(self) -> list[Tab]:
        return [s for s in self.students if s.name not in self.away and not s.done]

    async def step(self, k: int, ask: bool) -> None:
        """The teacher's Step k (``ask``: a predict-first question before it), then wait until every
        follower shows it; record each follower's latency."""
        t, errors = self.teacher, self.out.errors
        if ask:
            await question(self, k)
        followers = self.followers()
        runs_before = {s.name: s.full_runs for s in followers}
        t0 = now()
        await t.click(*t.buttons["Step ▸"][:2])  # in predict mode this → reveals and takes the Step
        await until(f"the teacher's stage shows step {k}", lambda: (t.step or 0) >= k, errors=errors)
        t_teacher = t.reached(k, t0) or now()
        if not await until(
            f"every follower shows step {k}", lambda: all(s.reached(k, t0) for s in followers), 2 * TIMEOUT_S, errors
        ):
            for s in followers:
                if not s.reached(k, t0):
                    errors.append(f"{s.name} not at step {k}: {s.state()}")
        for s in followers:
            self.out.to_follow += 1
            if (seen := s.reached(k, t0)) is not None:
                self.out.followed += 1
                self.out.without_full_run += s.full_runs == runs_before[s.name]
                ms = (seen - t0) * 1000
                if self.away:  # a replica was killed: the others' following meanwhile
                    self.out.window_ms.append(ms)
                else:
                    self.out.follow_ms.append(ms)
                    self.out.follow_from_teacher_ms.append(max(0.0, seen - t_teacher) * 1000)
                    noticed = next((e for e in s.early if t0 <= e <= seen), None)
                    if noticed is not None:
                        self.out.notice_ms.append((noticed - t0) * 1000)
                        self.out.page_ms.append((seen - noticed) * 1000)
        if ask:  # the toggle off again: the next Steps are plain
            await self.toggle_predict(False)
        await asyncio.sleep(THINK_S)

    async def toggle_predict(self, on: bool) -> None:
        t = self.teacher
        wid, fragment = t.toggles["Predict first"]

        def set_state(w):
            w.id, w.bool_value = wid, on

        before, finished = t.full_runs, dict(t.finished)
        await t.send(fragment, [set_state])
        if not await until(
            f"the teacher's page ran with Predict first {'on' if on else 'off'}", lambda: t.full_runs > before
        ):
            self.out.errors.append(
                f"the teacher's page did not finish a full run within {TIMEOUT_S} s of Predict first "
                f"{'on' if on else 'off'}; runs finished (status: count) before {finished}, after {t.finished}"
            )

    # --- the whole class -------------------------------------------------------------------------
    async def run(self) -> Run:
        a = self.args
        await self.open_teacher()
        await asyncio.gather(*(self.join(i, a.ramp * i / a.students) for i in range(a.students)))
        seated = self.store.students(self.code)
        self.out.seated = seated
        await until(
            "every student's stage at step 0",
            lambda: all(s.step == 0 for s in self.followers()),
            errors=self.out.errors,
        )
        await asyncio.sleep(1.0)  # the last joiners' page runs end
        pids = [r.proc.pid for r in self.srv.replicas]
        cpu, t = sum(cpu_seconds(p) for p in pids), now()
        await asyncio.sleep(a.idle)
        self.out.idle_cores = (sum(cpu_seconds(p) for p in pids) - cpu) / (now() - t)
        asked = question_steps(a.steps, a.questions)
        k = 0
        while k < a.steps:
            k += 1
            await self.step(k, ask=k in asked)
            if k == a.kill_after and a.kill_after:
                plain = [j for j in range(k + 1, a.steps + 1)]
                plain = plain[: next((n for n, j in enumerate(plain) if j in asked), len(plain))]
                before = self.teacher.step
                await kill_one(self, k, plain)
                k = self.teacher.step if self.teacher.step is not None else before
        for tab in [self.teacher, *self.students]:
            self.out.errors += tab.exceptions
        return self.out


def question_steps(steps: int, questions: int) -> set[int]:
    """The Steps asked first, evenly spread (20 and 5: 3, 7, 10, 13, 17; 3 and 1: 2)."""
    return {round(steps * (j + 1) / (questions + 1)) for j in range(questions)} if questions else set()
