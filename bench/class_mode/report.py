"""The run's tables: the machine, one row per measure (the issue's goals named), one per question; the exit
status (1 when anything was wrong)."""

from __future__ import annotations

import os
import sys

from bench.class_mode.answers import ANSWER_WITHIN_S
from bench.class_mode.measures import Run
from bench.class_mode.phases import goal_rows, kill_rows, outage_rows, walk_rows, wrong_code_rows
from bench.stats import p50_p95

IDLE_GOAL = 0.05  # cores: 40 students following a class that sits still


def ms(values) -> str:
    p50, p95 = p50_p95(values)
    return f"{p50:,.0f} / {p95:,.0f} ms"


def row(label: str, value) -> None:
    print(f"| {label} | {value} |")


def report(res: dict, args) -> int:
    r: Run = res["run"]
    n = args.students
    load = "/".join(f"{x:.1f}" for x in res["load_before"])
    after = "/".join(f"{x:.1f}" for x in res.get("load_after", ()))
    print(f"command: python -m bench.class_mode {' '.join(sys.argv[1:])}".rstrip())
    print(
        f"machine: {os.cpu_count()} cores, load average (1/5/15 min) {load} before, {after} after; "
        f"{args.replicas} replicas behind nginx (started in {res['started_s']:.0f} s), class store {res['store']}; "
        f"1 teacher + {n} students + 1 display, each a protocol-level tab in this process with its cookies and its "
        f"class event stream (GET /explainer/class/events through nginx; each new pulse sent once as the listener's "
        f"trigger value); the class opened and joined through the pages' forms and the class routes; {args.steps} "
        f"Steps, {args.questions} asked first, students joined over {args.ramp:g} s\n"
    )
    print("| measure | value |\n|---|---:|")
    row("students seated through the join form (store: students)", f"{r.seated} of {n}")
    if sv := r.serving:
        row(
            f"Serve the class meanwhile (from the quiet phase to the last Step): {sv['students']} students' requests "
            "back to back on the larger preset, served / refused",
            f"{sv['served']} / {sv['refused']}: {sv['tokens']:,} tokens in {sv['seconds']:.0f} s, the engine's "
            f"process {sv['engine_cores']:.2f} cores",
        )
    row("join: the form's Join → the seat line on the class's page, p50 / p95", ms(r.join_ms))
    row("… of it, the join route's answer (POST → the seat cookie), p50 / p95", ms(r.join_post_ms))
    row("… from the class's link opened (the page, the form, Join, the class's page), p50 / p95", ms(r.join_link_ms))
    row("the display's address opened → its stage at the teacher's step", f"{r.display_ms:,.0f} ms")
    row(
        "Steps followed (followers × Steps that reached the teacher's step; goal: all)",
        f"{r.followed} of {r.to_follow}",
    )
    row("follow: teacher's Step click → a student's stage shows it, p50 / p95 (goal p95 ≤ 1 s)", ms(r.follow_ms))
    row("… the display's stage, p50 / p95", ms(r.display_follow_ms))
    row("… from the teacher's own stage showing it, p50 / p95", ms(r.follow_from_teacher_ms))
    row("… teacher's click → the pulse reaches the follower's browser, p50 / p95", ms(r.notice_ms))
    row("… that pulse → its stage shows the Step, p50 / p95", ms(r.page_ms))
    row("… Steps shown by a run of the stage alone (no full app run)", f"{r.without_full_run} of {r.followed}")
    per_step = p50_p95(r.step_reruns)
    row(
        f"pulse reruns sent by all {n + 2} tabs per plain Step, p50 / max",
        f"{per_step[0]:.0f} / {max(r.step_reruns, default=float('nan')):.0f}",
    )
    q = r.quiet
    if q:
        row(
            f"a class sitting still, {n} students and the display following: replicas' CPU over {q['s']:.0f} s "
            f"(goal ≤ {IDLE_GOAL} cores)",
            f"{q['cores']:.3f} cores",
        )
        row("… reruns / pulses / messages to all tabs meanwhile", f"{q['reruns']} / {q['pulses']} / {q['messages']}")
    qs = r.questions
    sent = sum(x["sent"] for x in qs)
    row("questions asked", len(qs))
    row(
        f"answers sent within {ANSWER_WITHIN_S} s of the question",
        f"{sum(x['within'] for x in qs)} of {sum(x['students'] for x in qs)}",
    )
    row("question opened → its buttons on a student's page, p50 / p95", ms(r.buttons_ms))
    row("… of them double clicks (the same button twice, 50 ms apart)", sum(x["double"] for x in qs))
    once = all(x["tally"] == x["expected"] and x["answered"] == x["sent"] for x in qs)
    row(
        "answers counted by the store (tally) / exactly once",
        f"{sum(sum(x['tally']) for x in qs)} of {sent} / {'yes' if once and qs else 'NO'}",
    )
    row("each seat's my_answer equals its pick", f"{sum(x['mine_ok'] for x in qs)} of {sent}")
    counts = [x["count_ms"] for x in qs if x["count_ms"] is not None]
    row(f'last answer sent → the console shows "{n} of {n} answered", p50 / p95 (goal p95 ≤ 1 s)', ms(counts))
    kill_rows(r, row, ms)
    outage_rows(r, row)
    wrong_code_rows(r, row)
    row("pulses the tabs' streams brought / sent on as trigger values (whole run)", f"{r.pulses} / {r.forwarded}")
    row("fragment runs / full runs finished, all tabs", f"{r.fragment_runs} / {r.full_runs}")
    row("the console's full runs that drew its page but sent no script_finished", r.unfinished)
    row("tracebacks on any page (exception elements, or ui.errors' sentence for one; goal 0)", r.tracebacks)
    row("tabs that said the class store was out of reach (ui.errors.LOST_CLASS), whole run", r.lost_shown)
    row("errors", len(r.errors))
    wall, server, client = res["elapsed_s"], res["server_cpu_s"], res["client_cpu_s"]
    row(
        "wall time of the class / replicas' CPU / this process's CPU (the simulated browsers, which in a class run "
        "on the students' own laptops)",
        f"{wall:.0f} s / {server:.0f} s ({server / wall:.2f} cores) / {client:.0f} s ({client / wall:.2f} cores)",
    )
    if qs:
        print(
            "\n| question (before Step) | answers sent | last one after | store tally | sent | last answer → count "
            "| pulse reruns, all tabs | replicas' CPU, open → count |"
        )
        print("|---|---:|---:|---|---|---:|---:|---:|")
        for x in qs:
            c = "—" if x["count_ms"] is None else f"{x['count_ms']:,.0f} ms"
            reruns = "—" if x["reruns"] is None else x["reruns"]
            print(
                f"| {x['step']} | {x['sent']} of {x['students']} | {x['last_after_open_s']:.1f} s | {x['tally']} | "
                f"{x['expected']} | {c} | {reruns} | {x['cores']:.2f} cores |"
            )
    walk_rows(r)
    goal_rows(r, IDLE_GOAL)
    for e in r.errors[:40]:
        print("error:", e)
    return 1 if r.errors else 0
