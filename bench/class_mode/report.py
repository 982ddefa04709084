"""The run's tables: one row per measure, then one per question; the exit status."""

from __future__ import annotations

import os

from bench.class_mode.answers import ANSWER_WITHIN_S
from bench.class_mode.lesson import Run
from bench.stats import p50_p95


def ms(values) -> str:
    p50, p95 = p50_p95(values)
    return f"{p50:,.0f} / {p95:,.0f} ms"


def report(res: dict, args) -> int:
    r: Run = res["run"]
    n = args.students
    print(
        f"machine: {os.cpu_count()} cores, load average before {res['load_before']:.1f}; {args.replicas} replicas "
        f"behind nginx (started in {res['started_s']:.0f} s), class store {res['store']}; 1 teacher + {n} students, "
        f"each a protocol-level tab in this process that keeps the browser's fragment timers (auto-rerun every "
        f"0.5 s); the class was opened through the store by this bench (open_class: code and teacher key), "
        f"everything else through nginx; {args.steps} Steps, {args.questions} asked first, students joined over "
        f"{args.ramp:g} s\n"
    )
    print("| measure | value |\n|---|---:|")
    print(f"| students seated through the join form (store: students) | {r.seated} of {n} |")
    print(f"| join: send Join → the seat line, p50 / p95 | {ms(r.join_ms)} |")
    print(f"| Steps followed (followers × Steps that reached the teacher's step) | {r.followed} of {r.to_follow} |")
    print(
        f"| follow: teacher's Step click → follower's stage shows it, p50 / p95 (goal p95 ≤ 1 s) | {ms(r.follow_ms)} |"
    )
    print(f"| … from the teacher's own stage showing it, p50 / p95 | {ms(r.follow_from_teacher_ms)} |")
    print(f"| … teacher's click → the follower's poll sees the new plan, p50 / p95 | {ms(r.notice_ms)} |")
    print(f"| … that poll → its stage shows the Step, p50 / p95 | {ms(r.page_ms)} |")
    print(f"| … Steps shown by a run of the stage alone (no full app run) | {r.without_full_run} of {r.followed} |")
    print(
        f"| a class sitting still, every tab polling every 0.5 s: replicas' CPU over {args.idle:g} s | "
        f"{r.idle_cores:.2f} cores |"
    )
    qs = r.questions
    sent = sum(q["sent"] for q in qs)
    print(f"| questions asked | {len(qs)} |")
    print(
        f"| answers sent within {ANSWER_WITHIN_S} s of the question | {sum(q['within'] for q in qs)} of "
        f"{sum(q['students'] for q in qs)} |"
    )
    print(f"| question opened → its buttons on a student's page, p50 / p95 | {ms(r.buttons_ms)} |")
    print(f"| … of them double clicks (the same button twice, 50 ms apart) | {sum(q['double'] for q in qs)} |")
    once = all(q["tally"] == q["expected"] and q["answered"] == q["sent"] for q in qs)
    print(
        f"| answers counted by the store (tally) / exactly once | {sum(sum(q['tally']) for q in qs)} of {sent} / "
        f"{'yes' if once and qs else 'NO'} |"
    )
    print(f"| each seat's my_answer equals its pick | {sum(q['mine_ok'] for q in qs)} of {sent} |")
    counts = [q["count_ms"] for q in qs if q["count_ms"] is not None]
    print(
        f'| last answer sent → the teacher\'s strip shows "{n} of {n} answered", p50 / p95 (goal p95 ≤ 1 s) | '
        f"{ms(counts)} |"
    )
    k = r.kill
    if "replica" in k:
        back = k["back_s"]
        print(f"| replica killed (SIGKILL) after Step {k['after_step']} | {k['replica']}, {k['students']} students |")
        print(
            f"| … its students' websockets closed / back at the teacher's step | {k['closed']} / {k['back']} of "
            f"{k['students']} |"
        )
        print(
            f"| … kill → back at the teacher's step, p50 / max | {p50_p95(back)[0]:.1f} / "
            f"{max(back, default=float('nan')):.1f} s |"
        )
        print(f"| … the replicas they came back on | {', '.join(k['moved_to'])} |")
        print(
            f"| … same seat / answers kept (my_answer) | {k['seat_kept']} of {k['students']} / {k['answers_kept']} "
            f"of {k['answers']} |"
        )
        print(f"| … shown the restarted-session note (ui.frame.note_lost_session) | {k['warned']} of {k['students']} |")
        print(f"| other students' following meanwhile ({k['steps_meanwhile']} Steps), p50 / p95 | {ms(r.window_ms)} |")
    print(f"| errors | {len(r.errors)} |")
    wall, server, client = res["elapsed_s"], res["server_cpu_s"], res["client_cpu_s"]
    print(
        f"| wall time of the class / replicas' CPU / this process's CPU (the simulated browsers, which in a "
        f"class run on the students' own laptops) | {wall:.0f} s / {server:.0f} s ({server / wall:.2f} cores) / "
        f"{client:.0f} s ({client / wall:.2f} cores) |"
    )
    if qs:
        print("\n| question (before Step) | answers sent | last one after | store tally | sent | last answer → count |")
        print("|---|---:|---:|---|---|---:|")
        for q in qs:
            c = "—" if q["count_ms"] is None else f"{q['count_ms']:,.0f} ms"
            print(
                f"| {q['step']} | {q['sent']} of {q['students']} | {q['last_after_open_s']:.1f} s | {q['tally']} | "
                f"{q['expected']} | {c} |"
            )
    for e in r.errors[:15]:
        print("error:", e)
    return 1 if r.errors else 0
