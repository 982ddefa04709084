"""The decode stage's cost per Step: bytes the browser receives, server CPU, and their ratio to
the model's own compute.

    python -m bench.stage_speed [--steps 12] [--back-to-back 40] [--app-dir PATH] [--smollm | --checkpoint DIR]
    python -m bench.stage_speed --quick

For two cache lengths (the default prompt, ~56 positions, and a 208-token prompt, ~213), a real
`streamlit run` and headless Chromium: open the decode page through a link that prefills and
replays 4 steps, measure the server's idle CPU for 5 s (page open, nobody stepping), then press →
``--steps`` times, waiting each time for the heatmap's new row, and record every websocket frame
the page receives and the server process's CPU time. In the same run, in this process: the model
compute of one Step at the same lengths (the cached step and the full-prefix recompute the
equivalence badge checks against, ``core.decode.session.step``, one torch thread as the server uses),
paced like the browser's Steps (the same pause before each: back to back, on warm caches, the
same compute takes ~30% less CPU). The ratio is the server's CPU per Step less its idle CPU over
the same time, divided by that model compute. A cross-check that needs neither correction:
``--back-to-back N`` more Steps sent back to back over streamlit's websocket protocol (no browser),
against the model compute measured back to back too. ``--app-dir`` runs another checkout's app (e.g. the
previous version) through the same measurement. ``--checkpoint DIR`` runs the server as ``streamlit run main.py --
--model DIR`` (every session starts on that checkpoint) and times its step; ``--smollm`` writes a
random checkpoint in SmolLM2-135M's shape (``bench.pretrained_speed``) to a temporary folder and
uses that, with the shipped tokenizer (so the prompts have the shipped model's cache lengths).
Prints a table; not a test. ``--quick`` (seconds; tests/bench/test_quick_browser.py): the same two
tables from 2 Steps per length, 1 s of idle measurement and 3 Steps back to back.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
import urllib.parse
from pathlib import Path

import torch

from bench.browser import ROOT, browser_page, heatmap_rows, running_server, wait_rows
from bench.procs import cpu_seconds
from core.decode import session
from core.decode import settings as decode_settings
from core.decode.generate import SamplingConfig
from core.model.shipped import load_model, load_shipped_tokenizer
from core.model.tokenizer import decode, encode


def prompts() -> dict[str, str]:
    tok = load_shipped_tokenizer()
    long = decode(tok, encode(tok, (decode_settings.DEFAULT_PROMPT + " ") * 5)[:208])
    return {"default prompt": decode_settings.DEFAULT_PROMPT, "208-token prompt": long}


def browser_steps(url: str, proc, prompt: str, steps: int, idle_s: float = 5.0) -> dict:
    """Bytes received per Step (median) and server CPU per Step over ``steps`` Steps; the server's
    idle CPU measured over ``idle_s`` seconds."""
    with browser_page(1280, 800, fresh=True) as page:
        sockets: list = []
        page.on("websocket", lambda ws: sockets.append(ws))
        page.goto(f"{url}/?" + urllib.parse.urlencode({"prompt": prompt, "step": "4"}))
        page.wait_for_function("() => (" + _rows_js() + ")() > 0", timeout=60000)
        page.wait_for_timeout(min(2000, 400 * idle_s))  # the link's replayed steps settle
        idle = idle_cpu_ms_per_s(proc.pid, idle_s)
        frames: list[int] = []
        sockets[-1].on("framereceived", lambda f: frames.append(len(f) if f else 0))
        per_step, rows0, cpu0, t0 = [], heatmap_rows(page), cpu_seconds(proc.pid), time.perf_counter()
        for k in range(steps):
            frames.clear()
            page.keyboard.press("ArrowRight")
            wait_rows(page, rows0 + k + 1)
            page.wait_for_timeout(600)  # the rest of the rerun's messages
            per_step.append(sum(frames))
        cpu, interval = (cpu_seconds(proc.pid) - cpu0) / steps, (time.perf_counter() - t0) / steps
        return {
            "positions": rows0 + steps,
            "bytes": statistics.median(per_step),
            "cpu_ms": cpu * 1000,
            "idle_ms": idle * interval,
            "interval_s": interval,
        }


async def _protocol_steps(url: str, pid: int, prompt: str, steps: int) -> float:
    import websockets

    from bench import ws_session

    query = urllib.parse.urlencode({"prompt": prompt, "step": "4"})
    ws_url = url.replace("http://", "ws://") + "/_stcore/stream"
    async with websockets.connect(ws_url, subprotocols=["streamlit"], max_size=None, proxy=None) as ws:
        client = ws_session.Client(ws, query)
        reply = await ws_session.rerun(client, "")
        reply = await ws_session.click(client, reply, "Step ▸")  # warm the stage's code paths once
        cpu0 = cpu_seconds(pid)
        for _ in range(steps):
            reply = await ws_session.click(client, reply, "Step ▸")
        return (cpu_seconds(pid) - cpu0) * 1000 / steps


def protocol_steps(url: str, proc, prompt: str, steps: int) -> float:
    """Server CPU ms per Step with Steps sent back to back over streamlit's websocket protocol (no
    browser, no pause: no idle time to subtract, and the server's caches as warm as a back-to-back
    model measurement's). A cross-check of the paced ratio that needs neither correction.

    Runs in a thread of its own: the caller drives Playwright's sync API, whose event loop is running
    in this thread, and ``asyncio.run`` refuses to start a second loop beside it."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, _protocol_steps(url, proc.pid, prompt, steps)).result()


def idle_cpu_ms_per_s(pid: int, seconds: float = 5.0) -> float:
    """The server's CPU ms per second of wall time while the page is open and nobody steps
    (websocket pings, timers): counted in a Step's CPU time, not caused by it."""
    cpu0, t0 = cpu_seconds(pid), time.perf_counter()
    time.sleep(seconds)
    return (cpu_seconds(pid) - cpu0) * 1000 / (time.perf_counter() - t0)


def _rows_js() -> str:
    from bench.browser import HEATMAP_ROWS_JS

    return HEATMAP_ROWS_JS


@torch.no_grad()
def model_step_ms(
    prompt: str, steps: int, checkpoint: Path | None = None, interval_s: float = 0.0
) -> tuple[float, float]:
    """Median CPU ms of this process (the clock the server's cost is read with) for one
    ``core.decode.session.step`` (cached step + recompute check) after 4 replayed steps, and for the
    cached step alone (``core.decode.generate.extend`` of one token, the cache cut back after each), on the
    shipped model or a checkpoint folder. ``interval_s``: wait this long before each, as the server
    meets a Step after the browser's pause (its caches cold: ~30% more CPU than back to back)."""
    from core.decode.generate import extend

    torch.set_num_threads(1)
    if checkpoint is None:
        model, tok = load_model(), load_shipped_tokenizer()
    else:
        from core.checkpoints.load import load

        model, tok, _ = load(checkpoint)
    sess = session.start(model, encode(tok, prompt), SamplingConfig())
    for _ in range(4):
        session.step(model, sess)
    whole, cached = [], []
    for _ in range(steps):
        n = sess.cache.pos
        time.sleep(interval_s)
        c0 = time.process_time()
        extend(model, [sess.pending], sess.cache)
        cached.append((time.process_time() - c0) * 1000)
        sess.cache.truncate(n)
        time.sleep(interval_s)
        c0 = time.process_time()
        session.step(model, sess)
        whole.append((time.process_time() - c0) * 1000)
    return statistics.median(whole), statistics.median(cached)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--app-dir", type=Path, default=ROOT)
    ap.add_argument("--checkpoint", type=Path, help="run the app on this checkpoint folder (--model)")
    ap.add_argument(
        "--back-to-back", type=int, default=40, metavar="N", help="then N Steps over the protocol (0: none)"
    )
    ap.add_argument("--smollm", action="store_true", help="a random checkpoint in SmolLM2-135M's shape")
    ap.add_argument("--quick", action="store_true", help="seconds: 2 Steps per length, 1 s idle, 3 back to back")
    args = ap.parse_args()
    args.idle_s = 5.0
    if args.quick:
        args.steps, args.back_to_back, args.idle_s = min(args.steps, 2), min(args.back_to_back, 3), 1.0
    with tempfile.TemporaryDirectory() as tmp:
        if args.smollm:
            from bench.pretrained_speed import write_checkpoint

            args.checkpoint = Path(tmp) / "SmolLM2-135M-random"
            write_checkpoint(args.checkpoint)
            # The shipped tokenizer (1,024 of the 49,152 ids): both prompts then hold as many
            # positions as in the shipped model's rows, so the two tables compare Step for Step.
            shutil.copy(ROOT / "assets" / "tokenizer.json", args.checkpoint / "tokenizer.json")
        run(args)


def run(args) -> None:
    model = "the shipped model" if args.checkpoint is None else args.checkpoint.name
    print(f"app: {args.app_dir}; model: {model}; {args.steps} Steps per length; one session; 1 torch thread")
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print(
        "| cache length | bytes received per Step | server CPU per Step | of which idle | model compute per Step "
        "(cached step + recompute check; CPU) | of which the cached step | server (less idle) ÷ model |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    app_args, rows = () if args.checkpoint is None else ("--model", str(args.checkpoint)), []
    with running_server(300, root=args.app_dir, app_args=app_args) as (url, proc):
        for name, prompt in prompts().items():
            b = browser_steps(url, proc, prompt, args.steps, args.idle_s)
            m, cached = model_step_ms(prompt, args.steps, args.checkpoint, b["interval_s"])
            print(
                f"| {b['positions']} ({name}) | {b['bytes'] / 1000:,.1f} kB | {b['cpu_ms']:.1f} ms | "
                f"{b['idle_ms']:.1f} ms | {m:.1f} ms | {cached:.1f} ms | {(b['cpu_ms'] - b['idle_ms']) / m:.2f}× |"
            )
            if args.back_to_back:
                back = protocol_steps(url, proc, prompt, args.back_to_back)
                warm, _ = model_step_ms(prompt, args.back_to_back, args.checkpoint)
                rows.append(
                    f"| ~{b['positions'] - args.steps + args.back_to_back // 2} ({name}) | {back:.1f} ms | "
                    f"{warm:.1f} ms | {back / warm:.2f}× |"
                )
    if rows:
        print(f"\n{args.back_to_back} Steps back to back over the websocket protocol (no browser):\n")
        print("| cache length (middle) | server CPU per Step | model compute per Step, back to back | server ÷ model |")
        print("|---:|---:|---:|---:|")
        print("\n".join(rows))
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
