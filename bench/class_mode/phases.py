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
    print("\n| goal (issue 49) | measured | met |\n|---|---:|---|")

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
    if w := r.wrong:
        goal(
            f"{w['attempts']} wrong codes delay a classmate's join ≤ {DELAY_GOAL_S:g} s",
            f"{w['delay_s']:.2f} s",
            w["delay_s"] <= DELAY_GOAL_S,
        )
