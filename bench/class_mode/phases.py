"""The report's rows for the run's phases: a killed replica, the store's outage, the wrong codes."""

from __future__ import annotations

from bench.class_mode.outage import BACK_GOAL_S
from bench.class_mode.wrong_codes import DELAY_GOAL_S
from bench.stats import p50_p95


def kill_rows(r, row, ms) -> None:
    k = r.kill
    if "replica" not in k:
        return
    back = k["back_s"]
    shown = f"{k['students']} students" + (" and the display" if k["display"] else "")
    row(f"replica killed (SIGKILL) after Step {k['after_step']}", f"{k['replica']}, {shown}")
    n = k["students"] + k["display"]
    row("… its followers' websockets closed / back at the teacher's step", f"{k['closed']} / {k['back']} of {n}")
    row(
        "… their event streams open again / kill → open again, max",
        f"{k['streams_back']} of {n} / {max(k['streams_s'], default=float('nan')):.1f} s",
    )
    row(
        "… kill → back at the teacher's step, p50 / max",
        f"{p50_p95(back)[0]:.1f} / {max(back, default=float('nan')):.1f} s",
    )
    row("… the replicas they came back on", ", ".join(k["moved_to"]))
    row(
        "… same seat / answers kept (my_answer)",
        f"{k['seat_kept']} of {k['students']} / {k['answers_kept']} of {k['answers']}",
    )
    row("… shown the restarted-session note (ui.frame.note_lost_session)", f"{k['warned']} of {k['students']}")
    row(f"other followers meanwhile ({k['steps_meanwhile']} Steps), p50 / p95", ms(r.window_ms))
    row("… the restarted replica warmed by this bench (a page load and Prefill) in", f"{k['warm_s']:.1f} s")


def outage_rows(r, row) -> None:
    o = r.outage
    if not o:
        return
    row(f"{o['store']} store unavailable during the question before the last asked Step", f"{o['s']:.1f} s")
    row("… answers given before it / counted once (my_answer) (goal: all)", f"{o['before']} / {o['before_counted']}")
    row("… answers given while it was away / counted once after it", f"{o['during']} / {o['during_counted']}")
    row("… answers in the store (answered) / sent", f"{o['answered']} / {o['sent']}")
    after = o["console_back_s"]
    row(
        "… the console's own stage showed the Step taken while it was away: before its return / after it",
        "yes" if o["console_during"] else ("no / " + ("not within 10 s" if after is None else f"{after:.1f} s")),
    )
    b = o["back_s"]
    row(
        f"… store back → followers at the teacher's step, p50 / max (goal ≤ {BACK_GOAL_S:g} s)",
        f"{p50_p95(b)[0]:.1f} / {max(b, default=float('nan')):.1f} s",
    )
    row(f"… followers back within {BACK_GOAL_S:g} s", f"{o['within_goal']} of {o['followers']}")
    row("… tabs that said the class was out of reach (ui.errors.LOST_CLASS)", f"{o['said_lost']} of {o['tabs']}")
    row("… tracebacks on any page by then (goal 0)", o["tracebacks"])


def wrong_code_rows(r, row) -> None:
    w = r.wrong
    if not w:
        return
    statuses = ", ".join(f"{n}× {s}" for s, n in w["statuses"].items())
    row(
        f"join attempts with wrong codes from one browser, in {w['s']:.1f} s / the route's answers",
        f"{w['attempts']} / {statuses}",
    )
    alone = ", ".join("—" if x is None else f"{x:,.0f}" for x in w["alone_ms"])
    during = ", ".join("—" if x is None else f"{x:,.0f}" for x in w["during_ms"])
    row("classmates' joins at once (the link opened → the seat line) before / during them", f"{alone} / {during} ms")
    row(f"… delay: slowest during − slowest before (goal ≤ {DELAY_GOAL_S:g} s)", f"{w['delay_s']:.2f} s")
    row(
        "… the classmates' joins took / of it, the wrong codes going on", f"{w['joins_s']:.1f} / {w['overlap_s']:.1f} s"
    )
    row("the same browser's right code afterwards: the join route's answer", w["right_code"])


def goal_rows(r, idle_goal: float) -> None:
    """Issue 49's goals, each with what this run measured and whether it met it (a latency missed on a busy
    machine is reported here, not counted as an error)."""
    print("\n| goal (issues 49, 54) | measured | met |\n|---|---:|---|")

    def goal(label, value, met) -> None:
        print(f"| {label} | {value} | {'yes' if met else 'NO'} |")

    goal("every follow shown (0 lost)", f"{r.followed} of {r.to_follow}", r.followed == r.to_follow)
    p95 = p50_p95(r.follow_ms)[1]
    goal("follow p95 ≤ 1 s (teacher's click → a student's stage)", f"{p95:,.0f} ms", p95 <= 1000)
    counts = p50_p95([x["count_ms"] for x in r.questions if x["count_ms"] is not None])[1]
    goal('count p95 ≤ 1 s (last answer → "N of N answered")', f"{counts:,.0f} ms", counts <= 1000)
    if r.quiet:
        q = r.quiet
        goal(
            f"a class sitting still ≤ {idle_goal} cores (replicas)", f"{q['cores']:.3f} cores", q["cores"] <= idle_goal
        )
    if o := r.outage:
        goal(f"{o['store']} away: 0 tracebacks on any page", o["tracebacks"], o["tracebacks"] == 0)
        goal(
            f"{o['store']} away: every answer given before it counted once",
            f"{o['before_counted']} of {o['before']}",
            o["before_counted"] == o["before"],
        )
        worst = max(o["back_s"], default=float("nan"))
        goal(
            f"{o['store']} away: followers at the teacher's step ≤ {BACK_GOAL_S:g} s after its return",
            f"{o['within_goal']} of {o['followers']}, max {worst:.1f} s",
            o["within_goal"] == o["followers"],
        )
    if r.walk:
        walk_goals(r, goal)
    settings_goals(r, goal)
    if w := r.wrong:
        goal(
            f"{w['attempts']} wrong codes delay a classmate's join ≤ {DELAY_GOAL_S:g} s",
            f"{w['delay_s']:.2f} s",
            w["delay_s"] <= DELAY_GOAL_S,
        )


WALK_GOAL_MS = 1500  # issue 54: followers on the console's stop and page, p95 on a quiet machine
WALK_CPU_GOAL = 0.05  # cores: the replicas once a move is over (nothing reruns without end)


def walk_rows(r) -> None:
    """The guided lesson walked (``bench.class_mode.stops``): one row per move."""
    w = r.walk
    if w and w["moves"]:
        _walk_table(w)
    settings_rows(r)


def _walk_table(w: dict) -> None:
    n = w["moves"][0]["followers"]
    print(
        f"\n| lesson {w['lesson']!r}: the console's move to | page | followers on its stop and page (of {n}) "
        "| … p50 / p95 | replicas' CPU per follower | blank pages | page errors | replicas' CPU after it "
        "| reruns meanwhile |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for i, m in enumerate(x for x in w["moves"] if x is not None):
        p50, p95 = p50_p95(m["ms"])
        label = f"stop {m['stop']}" + (" (opened)" if i == 0 else "")
        print(
            f"| {label} | {m['page']} | {m['on_stop']} | {p50:,.0f} / {p95:,.0f} ms "
            f"| {m['move_cpu_s'] / max(1, m['followers']) * 1000:,.0f} ms | {m['blank']} | {m['errors']} "
            f"| {m['cores']:.3f} cores | {m['reruns_after']} |"
        )
    left = w.get("left_ms")
    print(f"\nThe console leaves the lesson (✕): every follower without its bar in {left or float('nan'):,.0f} ms")


def settings_rows(r) -> None:
    """The settings moves (``bench.class_mode.settings``) and the pulses whose plan version did not move."""
    if r.settings:
        print(
            "\n| the console's move | setting | followers showing it | … p50 / p95 | … by a run of the page's fragment "
            "alone |\n|---|---|---:|---:|---:|"
        )
        for m in r.settings:
            p50, p95 = p50_p95(m["ms"])
            print(
                f"| {m['page']} | {m['setting']} | {m['shown']} of {m['followers']} | {p50:,.0f} / {p95:,.0f} ms "
                f"| {m['alone']} of {m['followers']} |"
            )
    if x := r.reads:
        print(
            f"\n{x['pulses']} pulses whose plan version did not move (students joining through the route alone): "
            f"{x['reruns']} reruns sent by {x['tabs']} tabs, {x['reads']} plan reads by the pages (Redis MONITOR)"
        )


def walk_goals(r, goal) -> None:
    """Issue 54's goals for the walk (the moves after the lesson opened)."""
    moves = [m for m in r.walk.get("moves", [])[1:] if m is not None]
    if not moves:
        return
    every = [x for m in moves for x in m["ms"]]
    on, of = sum(m["on_stop"] for m in moves), sum(m["followers"] for m in moves)
    goal(f"lesson: followers on the console's stop and page, every move ({len(moves)})", f"{on} of {of}", on == of)
    p95 = p50_p95(every)[1]
    goal(f"lesson: a move → followers on it, p95 ≤ {WALK_GOAL_MS / 1000:g} s", f"{p95:,.0f} ms", p95 <= WALK_GOAL_MS)
    blank, thrown = sum(m["blank"] for m in moves), sum(m["errors"] for m in moves)
    goal("lesson: blank pages and page errors (goal 0)", f"{blank} / {thrown}", blank == thrown == 0)
    worst = max(m["cores"] for m in moves)
    goal(f"lesson: replicas after each move ≤ {WALK_CPU_GOAL} cores, max", f"{worst:.3f} cores", worst <= WALK_CPU_GOAL)


def settings_goals(r, goal) -> None:
    """Issue 54's goals for the settings moves and the plan reads (each phase may run without the lesson)."""
    if r.settings:
        p95 = p50_p95([x for m in r.settings for x in m["ms"]])[1]
        shown, of = sum(m["shown"] for m in r.settings), sum(m["followers"] for m in r.settings)
        goal(
            f"settings: followers showing the teacher's ruler scale and model shape ({shown} of {of}), p95 ≤ 1 s",
            f"{p95:,.0f} ms",
            shown == of and p95 <= 1000,
        )
    if x := r.reads:
        goal("store reads of the plan per pulse whose version did not move (goal 0)", x["reads"], x["reads"] == 0)
