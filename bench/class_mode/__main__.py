"""The command line: ``python -m bench.class_mode [--quick] …`` (the options in the package's docstring)."""

from __future__ import annotations

import argparse
import asyncio

from bench import class_mode
from bench.class_mode.report import report
from bench.class_mode.server import main_async
from bench.class_mode.stores import StoreError

QUICK = {
    "replicas": 2,
    "students": 6,
    "steps": 4,
    "questions": 1,
    "answer_s": 3.0,
    "kill_after": 2,
    "ramp": 1.0,
    "quiet": 1.5,
    "wrong_codes": 50,
    "outage_s": 3.0,
    "lesson_stops": 2,
    "lesson_cpu_s": 0.5,
    "late_joins": 2,
}


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.class_mode", description=class_mode.__doc__.splitlines()[0])
    ap.add_argument("--replicas", type=int, default=4)
    ap.add_argument("--students", type=int, default=40)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--questions", type=int, default=5)
    ap.add_argument("--answer-s", type=float, default=6.0, help="students answer 0.5 s … this long after a question")
    ap.add_argument("--kill-after", type=int, default=None, help="the Step after which a replica is killed (0: none)")
    ap.add_argument("--ramp", type=float, default=10.0, help="seconds over which the students open the link")
    ap.add_argument("--quiet", type=float, default=10.0, help="seconds the class sits still before Step 1 (its CPU)")
    ap.add_argument(
        "--store",
        default="sqlite",
        help="sqlite (a new file, default), redis (a redis-server this bench starts), or a running store's URL",
    )
    ap.add_argument("--outage", choices=("redis", "sqlite"), help="the store unavailable during the last question")
    ap.add_argument("--outage-s", type=float, default=10.0, help="how long the store is unavailable (s)")
    ap.add_argument("--wrong-codes", type=int, default=200, help="join attempts with wrong codes from one browser")
    ap.add_argument("--lesson", default="fifteen-minutes", help="the shipped lesson walked at the end (none: no walk)")
    ap.add_argument("--lesson-stops", type=int, default=None, help="walk to this stop and back (default: the last)")
    ap.add_argument("--lesson-cpu-s", type=float, default=5.0, help="the replicas' CPU measured this long per move")
    ap.add_argument(
        "--no-settings", dest="settings", action="store_false", help="skip the ruler's scale and the memory page"
    )
    ap.add_argument(
        "--late-joins", type=int, default=5, help="joins through the route alone at the end (a Redis store: plan reads)"
    )
    ap.add_argument(
        "--serving",
        type=int,
        default=0,
        help="students who send Serve the class requests back to back from the quiet phase to the last Step "
        "(the engine then runs the larger preset)",
    )
    ap.add_argument("--quick", action="store_true", help="; ".join(f"{k} {v}" for k, v in QUICK.items()))
    args = ap.parse_args()
    if args.quick:
        for k, v in QUICK.items():
            if getattr(args, k) == ap.get_default(k):
                setattr(args, k, v)
    if args.kill_after is None:
        args.kill_after = args.steps // 2
    if args.outage and args.store != args.outage:
        ap.error(f"--outage {args.outage} needs --store {args.outage} (a store this bench starts and can stop)")
    if args.serving > args.students:
        ap.error(f"--serving {args.serving}: at most the {args.students} students")
    if args.outage and not args.questions:
        ap.error("--outage happens during a question: --questions must be at least 1")
    try:
        res = asyncio.run(main_async(args))
    except StoreError as err:
        raise SystemExit(f"class_mode: {err}") from None
    raise SystemExit(report(res, args))


if __name__ == "__main__":
    main()
