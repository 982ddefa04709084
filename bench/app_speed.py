"""App responsiveness: page reruns, Step-to-new-row in a browser, start-up and model load.

    python -m bench.app_speed [--repeats R] [--quick]

1. Server-side time of one rerun of each page after a typical interaction (streamlit's AppTest,
   median of R). 2. In headless Chromium against a real `streamlit run`: time from clicking Step
   to the heatmap holding the new row, timed inside the page (``performance.now`` at the click,
   checked every animation frame), at a person's pace (0.4 s between clicks) and back to back;
   the same clicks also time the server's reply (click to the last websocket message).
   3. Time from `streamlit run` to the decode page's Prefill button, and the shipped model's load
   time (median of R, in-process after `import torch`, plus a cold subprocess). Prints a table; not a test.
``--quick`` (seconds; tests/bench/test_quick_browser.py): the same tables from one rerun per page,
2 Steps at each pace and one warm model load.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import torch

from bench.browser import HEATMAP_ROWS_JS, browser_page, heatmap_rows, running_app
from bench.fresh_app import new_app
from bench.stats import percentile
from core.model.shipped import load_model

INTERACTIONS = {
    "app_pages/decode.py": lambda at: next(b for b in at.button if b.label == "Step ▸").click(),
    "app_pages/worked.py": lambda at: at.toggle(key="worked.scaled").set_value(
        not at.toggle(key="worked.scaled").value
    ),
    "app_pages/context.py": lambda at: at.slider(key="ctx.window").set_value(
        56 if at.slider(key="ctx.window").value != 56 else 64
    ),
    "app_pages/latency.py": lambda at: at.radio(key="lat.source").set_value(
        "Exercise 1" if at.radio(key="lat.source").value != "Exercise 1" else "Ch. 30 example"
    ),
    "app_pages/cost.py": lambda at: at.number_input[0].set_value(2 if at.number_input[0].value != 2 else 1),
    "app_pages/memory.py": lambda at: at.selectbox(key="memory.preset").set_value(
        "Llama-3-8B (GQA)" if at.selectbox(key="memory.preset").value != "Llama-3-8B (GQA)" else "GPT-2 small (MHA)"
    ),
    "app_pages/weights.py": lambda at: at.text_input[0].set_value(
        "13B, Q8, 4K" if at.text_input[0].value != "13B, Q8, 4K" else "7B, Q4, 8K"
    ),
    "app_pages/quantize.py": lambda at: at.select_slider(key="quant.bits").set_value(
        3 if at.select_slider(key="quant.bits").value != 3 else 4
    ),
    "app_pages/quant_model.py": lambda at: at.select_slider(key="qm.diverge_bits").set_value(
        4 if at.select_slider(key="qm.diverge_bits").value != 4 else 3
    ),
}


def page_reruns(repeats: int) -> list[tuple[str, float]]:
    out = []
    for page, interact in INTERACTIONS.items():
        at = new_app(page)
        if page.endswith("decode.py"):
            next(b for b in at.button if b.label == "Prefill").click().run()
        times = []
        for _ in range(repeats):
            interact(at)
            t0 = time.perf_counter()
            at.run()
            times.append((time.perf_counter() - t0) * 1000)
            assert not at.exception, (page, at.exception)
        out.append((page, statistics.median(times)))
    return out


# Installed before the app's scripts: timestamps every websocket message the page receives.
WS_CLOCK = """
window.__ws = [];
const _WS = window.WebSocket;
window.WebSocket = function (...args) {
  const ws = new _WS(...args);
  ws.addEventListener('message', () => window.__ws.push(performance.now()));
  return ws;
};
window.WebSocket.prototype = _WS.prototype;
"""

# Click Step in the page and wait (one check per animation frame) until the heatmap has `want` rows.
STEP_IN_PAGE = """async (want) => {
  const rows = HEATMAP_ROWS;
  window.__ws.length = 0;
  const button = [...document.querySelectorAll('button')].find(b => b.innerText.startsWith('Step'));
  const t0 = performance.now();
  button.click();
  while (rows() < want) {
    if (performance.now() - t0 > 10000) return [null, null];  // the click was lost
    await new Promise(r => requestAnimationFrame(r));
  }
  const done = performance.now() - t0;
  return [done, window.__ws.length ? window.__ws[window.__ws.length - 1] - t0 : null];
}""".replace("HEATMAP_ROWS", HEATMAP_ROWS_JS)


def browser_step(repeats: int) -> dict[str, float]:
    """Start-up ms to the Prefill button and Step→new-row ms (median, p90) at two click paces."""
    t0 = time.perf_counter()
    with running_app(fresh=True) as url, browser_page(fresh=True) as page:
        page.add_init_script(WS_CLOCK)
        page.goto(url)
        page.get_by_role("button", name=re.compile("^Prefill")).wait_for(timeout=60000)
        startup = (time.perf_counter() - t0) * 1000
        paced, replies, rushed, lost, prompt_rows = [], [], [], 0, None
        # Two requests, so that neither runs into the end token (greedy stops after ~19 tokens).
        for rushing in (False, True):
            page.get_by_role("button", name=re.compile("^Prefill")).click()
            if prompt_rows is None:
                page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 2")
                prompt_rows = heatmap_rows(page)
            else:  # back to the prompt's rows
                page.wait_for_function(f"() => ({HEATMAP_ROWS_JS})() === {prompt_rows}", timeout=30000)
            n = heatmap_rows(page)
            for _ in range(repeats):
                if not rushing:
                    time.sleep(0.4)  # a person's pace; Play's fastest pace is 0.2 s
                done, reply = page.evaluate(STEP_IN_PAGE, n + 1)
                n = heatmap_rows(page)
                if done is None:
                    lost += 1
                elif rushing:
                    rushed.append(done)
                else:
                    paced.append(done)
                    replies.append(reply)
    return {
        "startup": startup,
        "paced": statistics.median(paced),
        "paced_p90": percentile(paced, 90),
        "reply": statistics.median([r for r in replies if r is not None]),
        "rushed": statistics.median(rushed),
        "rushed_p90": percentile(rushed, 90),
        "lost": lost,
    }


def model_load(repeats: int) -> tuple[float, float]:
    warm = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        load_model()
        warm.append((time.perf_counter() - t0) * 1000)
    code = (
        "import time; t=time.perf_counter(); import torch; from core.model.shipped import load_model; "
        "t1=time.perf_counter(); load_model(); print((time.perf_counter()-t1)*1000, (t1-t)*1000)"
    )
    cold = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    return statistics.median(warm), float(cold[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--quick", action="store_true", help="seconds: 1 rerun per page, 2 Steps per pace, 1 load")
    args = ap.parse_args()
    steps = min(15, max(10, args.repeats))  # greedy ends after ~19 tokens
    if args.quick:
        args.repeats, steps = 1, 2
    print(
        f"machine: {os.cpu_count()} cores; torch {torch.__version__}, {torch.get_num_threads()} thread(s) here; "
        "the app itself uses 1 torch thread per request"
    )
    print("\n| page | rerun after a typical interaction (median ms) |\n|---|---:|")
    for page, ms in page_reruns(args.repeats):
        print(f"| {page} | {ms:.1f} |")
    b = browser_step(steps)
    warm, cold = model_load(args.repeats)
    print("\n| measure | ms |\n|---|---:|")
    print(f"| browser: click Step → heatmap has the new row, 0.4 s between clicks (median) | {b['paced']:.0f} |")
    print(f"| … same, p90 | {b['paced_p90']:.0f} |")
    print(f"| … of which click → the server's last message arrives (median) | {b['reply']:.0f} |")
    print(f"| browser: click Step → new row, clicks back to back (median) | {b['rushed']:.0f} |")
    print(f"| … same, p90 | {b['rushed_p90']:.0f} |")
    print(f"| clicks with no new row within 10 s (left out above) | {b['lost']} |")
    print(f"| `streamlit run` → decode page's Prefill button visible | {b['startup']:.0f} |")
    print(f"| model load (safetensors → eval model), warm, median | {warm:.1f} |")
    print(f"| model load in a fresh process (after `import torch`) | {cold:.1f} |")


if __name__ == "__main__":
    main()
