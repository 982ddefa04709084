"""The command line: ``python -m bench.class_mode [--quick] …`` (the options in the package's docstring)."""

from __future__ import annotations

import argparse
import asyncio

from bench import class_mode
from bench.class_mode.report import report
from bench.class_mode.server import main_async

QUICK = {"replicas": 2, "students": 6, "steps": 3, "questions": 1, "kill_after": 2, "ramp": 1.0, "idle": 2.0}


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.class_mode", description=class_mode.__doc__.splitlines()[0])
    ap.add_argument("--replicas", type=int, default=4)
    ap.add_argument("--students", type=int, default=40)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--questions", type=int, default=5)
    ap.add_argument("--kill-after", type=int, default=None, help="the Step after which a replica is killed (0: none)")
    ap.add_argument("--ramp", type=float, default=10.0, help="seconds over which the students open the link")
    ap.add_argument("--idle", type=float, default=5.0, help="seconds the class sits still, polling, before Step 1")
    ap.add_argument("--store", help="the class store's URL (default: a new SQLite file in a temporary folder)")
    ap.add_argument("--quick", action="store_true", help="seconds: " + ", ".join(f"{k} {v}" for k, v in QUICK.items()))
    args = ap.parse_args()
    if args.quick:
        vars(args).update(QUICK)
    if args.kill_after is None:
        args.kill_after = args.steps // 2
    raise SystemExit(report(asyncio.run(main_async(args)), args))


if __name__ == "__main__":
    main()
