"""A full class at once: N concurrent browser sessions through one lesson, against one server.

    python -m bench.classroom_load --sessions 40 --steps 20 [--ramp S] [--think S] [--quick]

Starts `streamlit run main.py` on a free localhost port and drives N Playwright pages in headless
Chromium concurrently: open the decode page through a shared link with its own prompt and seed
(sampling, temperature 1), Prefill, Step N times (optionally waiting --think seconds before each
click, as a student reading the new row would), then open the bill-per-token and quantization-ruler
pages and move a slider. Reports sessions completed, errors, p50/p95 time from clicking Step to the
heatmap holding the new row, the server's peak memory (VmHWM), CPU time of the server and of the
browsers, and cross-talk: whether each session's text equals a solo run of its prompt and seed
computed here with core/. Traffic goes to 127.0.0.1 only, bounded in count and time.
``--quick`` (seconds; tests/bench/test_quick_browser.py): the same lesson and table, 3 sessions × 3 Steps (the
quick-mode test asserts on it what CI checks of a classroom in browsers: all complete, no errors, no cross-talk,
the server under 2 GiB).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from bench.browser import CHROMIUM, CHROMIUM_ARGS, HEATMAP_ROWS_JS, running_server
from bench.procs import cpu_seconds
from bench.stats import p50_p95
from core.decode.generate import SamplingConfig, generate_cached
from core.model.shipped import load_model, load_shipped_tokenizer
from core.model.tokenizer import decode, encode
from ui.decode import keys as decode_keys

TIMEOUT_MS = 120_000
# Checked on a timer, not on animation frames: with 40 pages in one headless browser most are in
# the background, where Chromium throttles animation frames and a rAF check could wait forever.
POLL_MS = 50
# ... and the renderers of background pages are not put to sleep.
LOAD_ARGS = [
    *CHROMIUM_ARGS,
    "--disable-renderer-backgrounding",
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
]


@dataclass
class Result:
    completed: int = 0
    errors: list[str] = field(default_factory=list)
    step_ms: list[float] = field(default_factory=list)
    crosstalk: list[int] = field(default_factory=list)
    repeated_clicks: int = 0


NAMES = ["Mira", "Sara", "Tom", "Ana", "Li", "Omar", "Yuki", "Ravi"]
CITIES = ["Lyon", "Paris", "Prague", "Rome", "Oslo"]


def lesson_prompt(i: int) -> str:
    """Session i's prompt: its own traveller and city, so that every session's text differs (the
    model is confident enough that seeds alone give near-identical text), and a reply long enough
    for 20+ steps before the end token."""
    return f"User: Hello, my name is {NAMES[i % 8]}. I am planning a trip to {CITIES[i % 5]}.\nAssistant:"


def expected_text(i: int, steps: int) -> str:
    """What a solo run of session i must show: its prompt and 1 + steps sampled tokens."""
    tok, model = load_shipped_tokenizer(), load_model()
    ids = encode(tok, lesson_prompt(i))
    sampling = SamplingConfig("sample", 1.0, decode_keys.DEFAULTS[decode_keys.DECODE_TOP_K], 1000 + i)
    return decode(tok, ids + generate_cached(model, ids, steps + 1, sampling).tokens)


def lesson_url(url: str, i: int) -> str:
    query = urllib.parse.urlencode(
        {"prompt": lesson_prompt(i), "strategy": "sample", "temperature": "1.0", "seed": 1000 + i}
    )
    return f"{url}/?{query}"


async def wait_rows(page, rows: int) -> None:
    js = HEATMAP_ROWS_JS.replace("() => {", f"() => {{ const want = {rows};", 1).replace(
        "return n;", "return n >= want;"
    )
    await page.wait_for_function(js, timeout=TIMEOUT_MS, polling=POLL_MS)


async def prefill(page, out: Result) -> None:
    """Click Prefill until the heatmap appears. Under a heavy load a click that lands while the
    page's first run is still drawing can go unanswered in the browser (the server, driven by
    bench.ws_session, answers every one); a student would click again, and so does this, up
    to three times. Repeated clicks are counted and reported."""
    for attempt in range(3):
        await page.get_by_role("button", name="Prefill").last.click(timeout=TIMEOUT_MS)
        try:
            await page.wait_for_function(
                "() => document.querySelectorAll('.js-plotly-plot').length >= 2", timeout=40_000, polling=POLL_MS
            )
            return
        except Exception:  # noqa: BLE001 — playwright's TimeoutError: click again
            if attempt == 2:
                raise
            out.repeated_clicks += 1


async def shows_text(page, expected: str, wait_s: float = 15.0) -> bool:
    """Whether the page's whole-text block shows ``expected``. The block is drawn after the stage
    in the same run, so under load it can arrive a moment after the heatmap's new row: read it
    until it matches or ``wait_s`` passes (a session showing another's text never matches)."""
    block = page.locator(".st-key-stage-fulltext").get_by_test_id("stCode")
    want = expected.rstrip("\n")  # a code block drops a trailing new line
    deadline = time.perf_counter() + wait_s
    while True:
        if (await block.inner_text(timeout=TIMEOUT_MS)).rstrip("\n") == want:
            return True
        if time.perf_counter() > deadline:
            return False
        await asyncio.sleep(POLL_MS / 1000)


async def one_session(
    i: int,
    browser,
    url: str,
    steps: int,
    expected: str,
    out: Result,
    shots: Path | None,
    delay_s: float = 0.0,
    think_s: float = 0.0,
):
    await asyncio.sleep(delay_s)  # students arrive over a few seconds, not in the same millisecond
    ctx = await browser.new_context(viewport={"width": 1280, "height": 800})
    page = await ctx.new_page()
    stage = "open the decode page"
    try:
        await page.goto(lesson_url(url, i), timeout=TIMEOUT_MS)
        stage = "prefill"
        await prefill(page, out)
        n = await page.evaluate(HEATMAP_ROWS_JS)
        for k in range(1, steps + 1):
            await asyncio.sleep(think_s)  # a student reads the new row before the next click
            stage = f"step {k}"
            t0 = time.perf_counter()
            await page.get_by_role("button", name="Step ▸").click(timeout=TIMEOUT_MS)
            await wait_rows(page, n + k)
            out.step_ms.append((time.perf_counter() - t0) * 1000)
        stage = "read the text"
        if not await shows_text(page, expected):
            out.crosstalk.append(i)
        stage = "the other pages"
        await page.get_by_text("Cost & memory").click(timeout=TIMEOUT_MS)  # the top bar's menu
        await page.get_by_role("menuitem", name="The bill per token").click(timeout=TIMEOUT_MS)
        await page.get_by_text("Scores grow quadratically").first.wait_for(timeout=TIMEOUT_MS)
        await page.get_by_text("Quantization", exact=True).click(timeout=TIMEOUT_MS)
        await page.get_by_role("menuitem", name="The quantization ruler").click(timeout=TIMEOUT_MS)
        await page.get_by_text("4-bit symmetric").first.wait_for(timeout=TIMEOUT_MS)
        await page.get_by_role("slider").first.press("ArrowLeft")
        await page.get_by_text("3-bit symmetric").first.wait_for(timeout=TIMEOUT_MS)
        if await page.get_by_test_id("stException").count():
            raise RuntimeError("an exception element is on screen")
        if shots is not None and i == 0:
            await page.screenshot(path=str(shots / "load-session-0.png"))
        out.completed += 1
    except Exception as err:  # noqa: BLE001 — every failure is counted and reported, not raised
        out.errors.append(f"session {i}, {stage}: {type(err).__name__}: {str(err).splitlines()[0][:160]}")
    finally:
        await ctx.close()


def machine_busy_seconds() -> float:
    """CPU seconds all cores have spent busy since boot (``/proc/stat``: all but idle and iowait)."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def run(sessions: int, steps: int, shots: Path | None, ramp_s: float = 0.0, think_s: float = 0.0) -> dict:
    from playwright.async_api import async_playwright

    expected = {i: expected_text(i, steps) for i in range(sessions)}
    busy_before = machine_busy_seconds()
    me_before = resource.getrusage(resource.RUSAGE_SELF)
    out = Result()
    with running_server(timeout_s=120) as (url, proc):
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=LOAD_ARGS, headless=True)
            t0 = time.perf_counter()
            await asyncio.gather(
                *(
                    one_session(i, browser, url, steps, expected[i], out, shots, ramp_s * i / sessions, think_s)
                    for i in range(sessions)
                )
            )
            elapsed = time.perf_counter() - t0
            await browser.close()
        rss, server_cpu = peak_rss_mib(proc.pid), cpu_seconds(proc.pid)
    busy = machine_busy_seconds() - busy_before
    me = resource.getrusage(resource.RUSAGE_SELF)
    p50, p95 = p50_p95(out.step_ms)
    return {
        "sessions": sessions,
        "steps": steps,
        "completed": out.completed,
        "errors": out.errors,
        "crosstalk": out.crosstalk,
        "repeated_clicks": out.repeated_clicks,
        "step_p50_ms": p50,
        "step_p95_ms": p95,
        "peak_rss_mib": rss,
        "elapsed_s": elapsed,
        "server_cpu_s": server_cpu,
        # Chromium's renderers are not our children (its zygote forks them), so the browsers' share
        # is the whole machine's busy time minus the server and this driver script.
        "browser_cpu_s": busy - server_cpu - (me.ru_utime + me.ru_stime - me_before.ru_utime - me_before.ru_stime),
        "machine_busy_s": busy,
    }


QUICK = {"sessions": 2, "steps": 3, "ramp": 0.0, "think": 0.0}  # --quick: a smoke run of the same lesson
# In browsers, --quick runs three pages: cross-talk needs two sessions at once, and the third makes CI's one
# browser classroom (tests/bench/test_quick_browser.py) as busy as the test it replaced.
BROWSER_QUICK = {**QUICK, "sessions": 3}


def lesson_arguments(doc: str, extra=None, quick: dict = QUICK) -> argparse.Namespace:
    """The command line both load scripts share: sessions, steps, ramp and think time, and
    ``--quick`` (``quick``'s values); ``extra`` adds a script's own options to the parser."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=40)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--ramp", type=float, default=0.0, help="seconds over which the sessions start")
    ap.add_argument("--think", type=float, default=0.0, help="seconds a session waits before each Step")
    ap.add_argument(
        "--quick", action="store_true", help=f"seconds: {quick['sessions']} sessions × {quick['steps']} Steps, no ramp"
    )
    if extra:
        extra(ap)
    args = ap.parse_args()
    if args.quick:
        vars(args).update(quick)
    return args


def main() -> None:
    args = lesson_arguments(__doc__, quick=BROWSER_QUICK)
    r = asyncio.run(run(args.sessions, args.steps, None, args.ramp, args.think))
    print(
        f"machine: {os.cpu_count()} cores; {r['sessions']} concurrent browser sessions × {r['steps']} steps, "
        f"started over {args.ramp:g} s, {args.think:g} s before each Step; "
        "the browsers run on the same cores as the server"
    )
    print("| measure | value |\n|---|---:|")
    print(f"| sessions completed | {r['completed']} of {r['sessions']} |")
    print(f"| errors | {len(r['errors'])} |")
    print(f"| Prefill clicks repeated after 40 s without an answer | {r['repeated_clicks']} |")
    print(f"| sessions whose text differs from a solo run (cross-talk) | {len(r['crosstalk'])} |")
    print(f"| click Step → new heatmap row, p50 | {r['step_p50_ms']:.0f} ms |")
    print(f"| click Step → new heatmap row, p95 | {r['step_p95_ms']:.0f} ms |")
    print(f"| server peak memory (VmHWM) | {r['peak_rss_mib']:.0f} MiB |")
    print(f"| wall time for the whole lesson | {r['elapsed_s']:.0f} s |")
    print(
        f"| CPU time: server / the {r['sessions']} browser pages and their driver / whole machine "
        f"({os.cpu_count()} cores) | {r['server_cpu_s']:.0f} s / {r['browser_cpu_s']:.0f} s / "
        f"{r['machine_busy_s']:.0f} s |"
    )
    for e in r["errors"][:10]:
        print("error:", e)


if __name__ == "__main__":
    main()
