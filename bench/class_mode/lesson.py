"""The teacher's class, driven step by step (``Lesson``): the students join through the form and follow each
Step; a question, a killed replica, a store outage and wrong codes where the options ask for them."""

from __future__ import annotations

import asyncio
import random

from bench.class_mode import joining
from bench.class_mode.answers import question
from bench.class_mode.kill import kill_one
from bench.class_mode.measures import Run
from bench.class_mode.outage import outage
from bench.class_mode.page import now
from bench.class_mode.reads import count_pulses
from bench.class_mode.serving import Serving
from bench.class_mode.settings import settings_phase
from bench.class_mode.stops import walk
from bench.class_mode.tab import FRAGMENT_RUN, TEACHER, TIMEOUT_S, Tab, until
from bench.class_mode.wrong_codes import wrong_codes
from bench.procs import cpu_seconds

THINK_S = 0.5  # the teacher's pause after every follower shows a Step
QUIET_AFTER_S = 1.0  # no message to any tab for this long: the class sits still


class Lesson:
    """The teacher's class through the class server ``srv`` (its store: ``store``, read directly only to check
    what the pages say), driven step by step (``run``)."""

    def __init__(self, args, srv, store, store_control=None, store_url: str = ""):
        self.args, self.srv, self.store, self.control = args, srv, store, store_control
        self.store_url = store_url
        self.out = Run()
        self.rng = random.Random(41)
        self.teacher: Tab | None = None
        self.display: Tab | None = None
        self.students: list[Tab] = []
        self.away: set[str] = set()  # students on the killed replica, until they are back
        self.code = ""

    def tabs(self) -> list[Tab]:
        return [t for t in (self.teacher, self.display, *self.students) if t is not None]

    def followers(self) -> list[Tab]:
        """The students and the display that are not away (a killed replica's, until they are back)."""
        return [s for s in (*self.students, self.display) if s is not None and s.name not in self.away and not s.done]

    def reruns(self) -> int:
        """Pulse reruns all tabs sent so far."""
        return sum(len(t.forwarded) for t in self.tabs())

    def replicas_cpu(self) -> float:
        """CPU seconds the live replicas have used so far."""
        return sum(cpu_seconds(r.proc.pid) for r in self.srv.replicas if r.proc.poll() is None)

    def seated(self) -> list[Tab]:
        return [s for s in self.students if s.seat is not None]

    # --- opening -----------------------------------------------------------------------------------------
    async def open_class(self) -> bool:
        opened = await joining.open_class(self.srv.url, self.out.errors)
        if opened is None:
            return False
        self.teacher, self.code = opened
        self.out.code, self.out.teacher_key = self.code, self.teacher.cookie(TEACHER)[1]
        t = self.teacher
        if not await until("the console's page draws Prefill", lambda: "Prefill" in t.buttons, errors=self.out.errors):
            return False
        before = t.full_runs
        await t.click(*t.buttons["Prefill"][:2])
        return await until(
            "the console's stage shows step 0", lambda: t.step == 0 and t.full_runs > before, errors=self.out.errors
        )

    async def join(self, i: int, delay_s: float) -> None:
        await asyncio.sleep(delay_s)
        tab = Tab(f"student {i}", base=self.srv.url, query=f"class={self.code}")
        self.students.append(tab)
        if (took := await joining.join(tab, self.code, f"student {i}", self.out.errors)) is not None:
            self.out.join_ms.append(took[0])
            self.out.join_post_ms.append(took[1])
            self.out.join_link_ms.append(took[2])

    # --- following -----------------------------------------------------------------------------------------
    async def step(self, k: int, ask: bool) -> None:
        """The teacher's Step k (``ask``: a predict-first question before it), then wait until every follower
        shows it; record each follower's latency."""
        t, errors = self.teacher, self.out.errors
        if ask:
            await question(self, k)
        followers = self.followers()
        runs_before = {s.name: s.full_runs for s in followers}
        sent_before = sum(len(s.forwarded) for s in self.tabs())
        t0 = now()
        await t.click(*t.buttons["Step ▸"][:2])  # in predict mode this → reveals and takes the Step
        await until(f"the console's stage shows step {k}", lambda: (t.step or 0) >= k, errors=errors)
        t_teacher = t.reached(k, t0) or now()
        if not await until(
            f"every follower shows step {k}", lambda: all(s.reached(k, t0) for s in followers), 2 * TIMEOUT_S, errors
        ):
            errors += [f"{s.name} not at step {k}: {s.state()}" for s in followers if not s.reached(k, t0)]
        self.record_follow(k, t0, t_teacher, followers, runs_before)
        if not ask and not self.away:  # (answers' pulses may trail a question; a killed replica's tabs reconnect)
            self.out.step_reruns.append(sum(len(s.forwarded) for s in self.tabs()) - sent_before)
        if ask:  # the toggle off again: the next Steps are plain
            await self.toggle_predict(False)
        await asyncio.sleep(THINK_S)

    def record_follow(self, k: int, t0: float, t_teacher: float, followers, runs_before) -> None:
        out = self.out
        for s in followers:
            out.to_follow += 1
            if (seen := s.reached(k, t0)) is None:
                continue
            out.followed += 1
            out.without_full_run += s.full_runs == runs_before[s.name]
            ms = (seen - t0) * 1000
            if self.away:  # a replica was killed: the others' following meanwhile
                out.window_ms.append(ms)
                continue
            (out.display_follow_ms if s is self.display else out.follow_ms).append(ms)
            out.follow_from_teacher_ms.append(max(0.0, seen - t_teacher) * 1000)
            pulse = next((tt for tt, _ in s.forwarded if t0 <= tt <= seen), None)
            if pulse is not None:
                out.notice_ms.append((pulse - t0) * 1000)
                out.page_ms.append((seen - pulse) * 1000)

    async def toggle_predict(self, on: bool) -> None:
        """*Predict first* on or off: a full run of the console's page. Done when its ``script_finished`` came, or
        when it drew the page (elements outside any fragment) and went quiet without one: a fragment run the
        class's pulse asked for just as the full run ended can take its place (streamlit then starts a new script
        runner and drops the old one's last events); such runs are counted (``unfinished``)."""
        t = self.teacher
        wid, fragment = t.toggles["Predict first"]

        def set_state(w):
            w.id, w.bool_value = wid, on

        before, drawn, finished = t.full_runs, t.page_elements, dict(t.finished)
        await t.send(fragment, [set_state])
        if not await until(
            f"the console's page ran with Predict first {'on' if on else 'off'}",
            lambda: t.full_runs > before or (t.page_elements > drawn and now() - t.last_message > QUIET_AFTER_S),
        ):
            self.out.errors.append(
                f"the console's page did not draw a full run within {TIMEOUT_S} s of Predict first "
                f"{'on' if on else 'off'}; runs finished (status: count) before {finished}, after {t.finished}"
            )
        elif t.full_runs == before:
            self.out.unfinished += 1

    # --- a class sitting still -----------------------------------------------------------------------------
    async def quiet(self) -> None:
        """The replicas' CPU while every page is drawn and nothing happens (``--quiet`` seconds, after no tab
        got a message for ``QUIET_AFTER_S``), with the reruns, pulses and messages the tabs saw meanwhile."""
        tabs = self.tabs()
        await until("the class sits still", lambda: now() - max(t.last_message for t in tabs) > QUIET_AFTER_S, 30)
        pids = [r.proc.pid for r in self.srv.replicas]
        count = lambda: (  # noqa: E731
            sum(len(t.forwarded) for t in tabs),
            sum(len(t.pulses) for t in tabs),
            sum(t.messages for t in tabs),
        )
        before, cpu, t0 = count(), sum(cpu_seconds(p) for p in pids), now()
        await asyncio.sleep(self.args.quiet)
        cores = (sum(cpu_seconds(p) for p in pids) - cpu) / (now() - t0)
        names = ("reruns", "pulses", "messages")
        self.out.quiet = {"s": now() - t0, "cores": cores}
        self.out.quiet.update({name: a - b for name, a, b in zip(names, count(), before, strict=True)})

    # --- the whole class -------------------------------------------------------------------------------------
    async def run(self) -> Run:
        a, out = self.args, self.out
        if not await self.open_class():
            return out
        await asyncio.gather(*(self.join(i, a.ramp * i / a.students) for i in range(a.students)))
        out.seated = self.store.students(self.code)
        self.display = await joining.display(self.srv.url, self.code, 0, out)
        await until(
            "every follower's stage at step 0", lambda: all(s.step == 0 for s in self.followers()), errors=out.errors
        )
        serving = None
        if a.serving:  # students' own requests through the class engine from here to the last Step
            engine = self.srv.engine.proc.pid if self.srv.engine else None
            serving = Serving(self.srv.url, [s.jar for s in self.seated()[: a.serving]], engine)
            serving.start()
        await self.quiet()
        asked, k = question_steps(a.steps, a.questions), 0
        outage_at = max(asked) if a.outage and asked else None
        while k < a.steps:
            k += 1
            if k == outage_at:
                await outage(self, k)
            else:
                await self.step(k, ask=k in asked)
            if k == a.kill_after and a.kill_after:
                plain = list(range(k + 1, a.steps + 1))
                plain = plain[: next((n for n, j in enumerate(plain) if j in asked), len(plain))]
                before = self.teacher.step
                await kill_one(self, k, plain)
                k = self.teacher.step if self.teacher.step is not None else before
        if serving is not None:
            out.serving = await asyncio.to_thread(serving.finish)
        if a.lesson != "none":
            out.walk = await walk(self, a.lesson, a.lesson_stops, a.lesson_cpu_s)
        if a.settings:
            out.settings = await settings_phase(self)
        if self.store_url.startswith(("redis://", "rediss://")) and a.late_joins:
            out.reads = await count_pulses(self, self.store_url, a.late_joins)
        if a.wrong_codes:
            await wrong_codes(self, a.wrong_codes)
        self.tally()
        return out

    def tally(self) -> None:
        out = self.out
        for tab in self.tabs():
            out.errors += tab.exceptions + tab.trouble
            if tab.stream is not None and tab.stream.failed:
                out.errors.append(f"{tab.name}: {tab.stream.failed}")
            out.tracebacks += len(tab.exceptions)
            out.pulses += len(tab.pulses)
            out.forwarded += len(tab.forwarded)
            out.fragment_runs += tab.finished.get(FRAGMENT_RUN, 0)
            out.full_runs += tab.full_runs
            out.lost_shown += tab.lost_since(0)


def question_steps(steps: int, questions: int) -> set[int]:
    """The Steps asked first, evenly spread (20 and 5: 3, 7, 10, 13, 17; 3 and 1: 2)."""
    return {round(steps * (j + 1) / (questions + 1)) for j in range(questions)} if questions else set()
