"""A full class against the server alone: N light clients speaking streamlit's websocket protocol.

    python -m bench.server_load --sessions 40 --steps 20 [--ramp S] [--think S]   # one process
    python -m bench.server_load --url http://127.0.0.1:8501 [...]                  # a running server
    python -m bench.server_load --replicas 2 [--profile]       # 1 process vs a class server, same run
    python -m bench.server_load --quick [--replicas 1]         # seconds: 2 sessions × 3 Steps

`bench.classroom_load` drives real browsers, but on this 2-core machine 40 headless Chromium pages
need far more CPU than the server (in a classroom every student's browser runs on their own
device). This script isolates the server: each client opens a websocket to `/_stcore/stream`
(after one plain request, as a browser's page load, that gives it the class server's affinity
cookie) and sends the same protobuf messages a browser sends (``BackMsg.rerun_script`` with the
clicked button's trigger and its fragment id, a page change, a slider value), reading the server's
``ForwardMsg`` replies without drawing anything. The lesson: the decode page through a shared link
with the session's own prompt and seed, Prefill, N Steps, then the bill-per-token page and the
quantization ruler with the bit-width slider moved to 3.

A Step counts as answered when its rerun has finished and the page reports the new step (see
``step_problem``); its latency is send → the rerun's last message (add the browser's drawing,
~0.1 s on a laptop, for what a student sees). Reports sessions completed, errors, Step p50/p95,
the server's CPU time and memory, and cross-talk: each session's text against a solo run computed
with core/. ``--replicas N`` runs, in one go on this machine: single sessions (Step p50 and the
server CPU per Step c), then the issue's two goal scenarios against one process and against N
replicas behind nginx (``serve.replicas.class_server``), with ``--profile`` a py-spy breakdown of the
Steps on a replica (``bench.step_profile``). Traffic goes to 127.0.0.1 only, unless ``--url``.
``--quick`` (tests/bench/test_quick_model.py runs it without ``--replicas``): the same tables from
2 sessions × 3 Steps; with ``--replicas``, one single session and ``QUICK_SCENARIOS``' shorter ramp
and pause.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections import Counter

from bench import step_profile
from bench.classroom_load import lesson_arguments
from bench.procs import children
from bench.stats import p50_p95
from bench.ws_session import Probe, drive, run

# The two goal scenarios: (name, seconds over which sessions start, pause before each Step).
SCENARIOS = (("following along (start over 10 s, 1 s pause)", 10.0, 1.0), ("hammering Step (no pause)", 0.0, 0.0))
# --quick: the same two scenarios, their ramp and pause shortened.
QUICK_SCENARIOS = (("following along (start over 1 s, 0.1 s pause)", 1.0, 0.1), ("hammering Step (no pause)", 0.0, 0.0))
SOLO_SESSIONS = 3  # single-session runs, one after another, for the Step p50 and c
COOKIE = "class_replica"


async def solo(
    url: str,
    steps: int,
    pids: list[int],
    pin: str | None = None,
    profile_pid: int | None = None,
    n: int = SOLO_SESSIONS,
) -> dict:
    """``n`` single sessions one after another: Step p50/p95, c = server CPU over the Steps ÷ Steps,
    and (``profile_pid``) a py-spy breakdown of one more session's Steps on that process."""
    probe, step_ms, errors = Probe(pids), [], []
    for i in range(n):
        r = await drive(url, 1, steps, pids=pids, first=i, probe=probe, pin=pin)
        step_ms += r["step_ms"]
        errors += r["errors"]
    p50, p95 = p50_p95(step_ms)
    out = {"step_p50_ms": p50, "step_p95_ms": p95, "c_ms": 1000 * probe.cpu_s / max(probe.steps, 1), "errors": errors}
    if profile_pid:
        prof = step_profile.ProfiledSteps(profile_pid)
        r = await drive(url, 1, steps, first=n, probe=prof, pin=pin)
        if prof.stacks is None:  # the session failed before its Steps were recorded: say why
            raise RuntimeError(f"the profiled session failed: {'; '.join(r['errors'])}")
        out["profile"], out["profile_waiting"] = step_profile.breakdown(prof.stacks)
        out["profile_top"] = step_profile.top_frames(prof.stacks)
        shutil.rmtree(prof.stacks.parent, ignore_errors=True)
    return out


async def load(url, sessions, steps, ramp, think, pids, others=()) -> dict:
    return await drive(url, sessions, steps, ramp, think, pids=pids, others=others)


async def compare(
    replicas: int, sessions: int, steps: int, profile: bool, pin: bool = False, quick: bool = False
) -> dict:
    """1 process vs ``replicas`` behind nginx, in one run: single sessions, then both scenarios
    (``quick``: one single session, ``QUICK_SCENARIOS``)."""
    from bench.browser import running_server
    from serve.nginx import free_port
    from serve.replicas import class_server

    scenarios, n_solo = (QUICK_SCENARIOS, 1) if quick else (SCENARIOS, SOLO_SESSIONS)
    res: dict = {"1": {}, "N": {}, "pinned": pin, "load_before": os.getloadavg()[0], "scenarios": scenarios}
    res["solo_sessions"] = n_solo
    with running_server(timeout_s=120) as (url, proc):
        res["1"]["solo"] = await solo(url, steps, [proc.pid], n=n_solo)
        for name, ramp, think in scenarios:
            res["1"][name] = await load(url, sessions, steps, ramp, think, [proc.pid])
    with class_server(replicas, port=free_port(), pin=pin) as srv:
        pids = [r.proc.pid for r in srv.replicas]
        res["names"] = {r.proc.pid: r.name for r in srv.replicas}
        for r in srv.replicas:  # each replica's first session loads the model and imports the pages
            await drive(srv.url, 1, 2, first=90, pin=f"{COOKIE}={r.name}")
        pin = f"{COOKIE}={srv.replicas[0].name}"
        res["N"]["solo"] = await solo(srv.url, steps, pids, pin, pids[0] if profile else None, n_solo)
        nginx = [srv.nginx.pid, *children(srv.nginx.pid)]
        for name, ramp, think in scenarios:
            if profile and not think:  # hammering: where the first replica's event loop waits
                recorder = step_profile.start(pids[0], event_loop=True)
                await asyncio.sleep(1.0)  # py-spy attaches
            res["N"][name] = await load(srv.url, sessions, steps, ramp, think, pids, nginx)
            if profile and not think:
                stacks = step_profile.finish(recorder)
                res["N"]["event_loop"] = step_profile.event_loop_shares(stacks)
                shutil.rmtree(stacks.parent, ignore_errors=True)
    return res


def row(label: str, cells) -> None:
    print(f"| {label} | " + " | ".join(cells) + " |")


def report(res: dict, replicas: int, sessions: int, steps: int) -> None:
    cores = os.cpu_count()
    one, many = res["1"], res["N"]
    where = "on any core"
    if res.get("pinned"):  # serve.pinned_cpus: replica i on allowed core i mod cores
        where = "each pinned to one core, replica i on core i mod cores (--pin)"
    print(f"machine: {cores} cores; protocol-level clients on the same machine; {steps} Steps per session;")
    print(f"the {replicas} replicas {where}; load average before: {res['load_before']:.1f}\n")
    print(f"Single sessions ({res['solo_sessions']} one after another):\n")
    print(f"| | 1 process | {replicas} replicas behind nginx |\n|---|---:|---:|")
    row("Step p50 / p95", [f"{s['step_p50_ms']:.0f} / {s['step_p95_ms']:.0f} ms" for s in (one["solo"], many["solo"])])
    row("server CPU per Step, c", [f"{s['c_ms']:.1f} ms" for s in (one["solo"], many["solo"])])
    row("errors", [str(len(s["errors"])) for s in (one["solo"], many["solo"])])
    base_p50, c = one["solo"]["step_p50_ms"], one["solo"]["c_ms"]
    limit = sessions * c / cores
    print(f"\n{sessions} sessions × {steps} Steps. Queueing limit N·c/cores = {sessions} × {c:.1f} ms / {cores} =")
    print(f"{limit:.0f} ms; single-session Step p50 = {base_p50:.0f} ms (both from the 1-process column above).\n")
    names = [n for n, _, _ in res["scenarios"]]
    print("| | " + " | ".join(f"{n}: 1 process | {replicas} replicas" for n in names) + " |")
    print("|---|" + "---:|" * (2 * len(names)))
    runs = [r for n in names for r in (one[n], many[n])]
    row("sessions completed", [f"{r['completed']} of {r['sessions']}" for r in runs])
    row("errors / cross-talk", [f"{len(r['errors'])} / {len(r['crosstalk'])}" for r in runs])
    row("Step p50 / p95", [f"{r['step_p50_ms']:,.0f} / {r['step_p95_ms']:,.0f} ms" for r in runs])
    row("p95 ÷ single-session p50 (goal 1: ≤ 3)", [f"{r['step_p95_ms'] / base_p50:.1f}×" for r in runs])
    row("p95 ÷ queueing limit (goal 2: ≤ 1.5)", [f"{r['step_p95_ms'] / limit:.2f}×" for r in runs])
    row("wall time / server CPU", [f"{r['elapsed_s']:.0f} s / {r['server_cpu_s']:.0f} s" for r in runs])
    row("server CPU per Step (whole lesson)", [f"{1000 * r['server_cpu_s'] / (sessions * steps):.0f} ms" for r in runs])
    row("… of which kernel time", [f"{1000 * r['server_kernel_s'] / (sessions * steps):.1f} ms" for r in runs])
    row("nginx CPU / these clients' CPU", [f"{r['other_cpu_s']:.1f} s / {r['client_cpu_s']:.1f} s" for r in runs])
    row(
        "sessions per replica",
        [", ".join(f"{k}: {v}" for k, v in sorted(Counter(r["replica_of"].values()).items())) for r in runs],
    )
    for label, r in zip([f"{n}, {w}" for n in names for w in ("1 process", "replicas")], runs, strict=True):
        for e in r["errors"][:3]:
            print(f"error ({label}): {e}")
    print(
        "\nMemory with every session still connected (MiB; PSS divides each shared page among the processes"
        " mapping it):\n"
    )
    print("| run | process | sessions | RSS | PSS | weights file PSS |\n|---|---|---:|---:|---:|---:|")
    for n in names:
        for label, r in (("1 process", one[n]), (f"{replicas} replicas", many[n])):
            counts = Counter(r["replica_of"].values())
            for pid, m in r["memory"].items():
                who = res.get("names", {}).get(pid, "-") if label != "1 process" else "-"
                print(
                    f"| {n}, {label} | {who} | {counts[who] if who != '-' else r['completed']} | "
                    f"{m['rss']:.0f} | {m['pss']:.0f} | {m['weights_pss']:.2f} |"
                )
    prof = many["solo"].get("profile")
    if prof:
        total = sum(n for _, n in prof) or 1
        c_n = many["solo"]["c_ms"]
        print(
            f"\nOne Step's server CPU on a replica: py-spy, {total} samples of running threads in "
            f"{steps} Steps ({many['solo']['profile_waiting']} of waiting threads left out); "
            f"ms = share × c = {c_n:.1f} ms (measured without py-spy):\n"
        )
        print("| part | share | ms per Step |\n|---|---:|---:|")
        for part, n in prof:
            print(f"| {part} | {n / total:.0%} | {c_n * n / total:.1f} |")
        print("\nbusiest functions:", "; ".join(f"{f} {n}" for f, n in many["solo"]["profile_top"]))
    if many.get("event_loop"):
        total = sum(n for _, n in many["event_loop"]) or 1
        print(f"\nThe first replica's event loop (main thread) while hammering: py-spy, {total} samples of its time:\n")
        print("| the main thread is | share |\n|---|---:|")
        for part, n in many["event_loop"]:
            print(f"| {part} | {n / total:.0%} |")


def options(ap) -> None:
    ap.add_argument("--url", help="a running server or class server (no CPU or memory figures)")
    ap.add_argument("--replicas", type=int, help="compare 1 process with this many replicas behind nginx")
    ap.add_argument("--profile", action="store_true", help="with --replicas: py-spy breakdown of a Step")
    ap.add_argument("--pin", action="store_true", help="with --replicas: each replica on its own core (serve --pin)")


def main(doc: str) -> None:
    args = lesson_arguments(doc, options)
    if args.replicas:
        report(
            asyncio.run(compare(args.replicas, args.sessions, args.steps, args.profile, args.pin, args.quick)),
            args.replicas,
            args.sessions,
            args.steps,
        )
        return
    r = asyncio.run(run(args.sessions, args.steps, args.ramp, args.think, args.url))
    print(
        f"machine: {os.cpu_count()} cores; {r['sessions']} concurrent protocol-level sessions × {r['steps']} steps, "
        f"started over {args.ramp:g} s, {args.think:g} s before each Step; {args.url or 'one streamlit process'}"
    )
    print("| measure | value |\n|---|---:|")
    print(f"| sessions completed | {r['completed']} of {r['sessions']} |")
    print(f"| errors | {len(r['errors'])} |")
    print(f"| sessions whose text differs from a solo run (cross-talk) | {len(r['crosstalk'])} |")
    print(f"| send Step → the Step's rerun finished, p50 | {r['step_p50_ms']:.0f} ms |")
    print(f"| send Step → the Step's rerun finished, p95 | {r['step_p95_ms']:.0f} ms |")
    print(f"| wall time for the whole lesson | {r['elapsed_s']:.0f} s |")
    for m in r["memory"].values():
        print(f"| server memory at the end: RSS / PSS | {m['rss']:.0f} / {m['pss']:.0f} MiB |")
        print(f"| server CPU time during the lesson | {r['server_cpu_s']:.0f} s |")
    for e in r["errors"][:10]:
        print("error:", e)


if __name__ == "__main__":
    main(__doc__)
