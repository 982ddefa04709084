"""App responsiveness: page reruns, Step-to-new-row in a browser, start-up and model load.

    python -m bench.app_speed [--repeats R]

1. Server-side time of one rerun of each page after a typical interaction (streamlit's AppTest,
   median of R). 2. In headless Chromium against a real `streamlit run`: time from clicking Step
   to the heatmap holding the new row (median of R steps). 3. Time from `streamlit run` to the
   decode page's Prefill button, and the shipped model's load time (median of R, in-process after
   `import torch`, plus a cold subprocess). Prints a table; not a test.
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

from core.assets import load_model
from tests.app_util import new_app
from tests.browser_util import browser_page, heatmap_rows, running_app, wait_rows

INTERACTIONS = {
    "lessons/decode.py": lambda at: next(b for b in at.button if b.label == "Step ▸").click(),
    "lessons/worked.py": lambda at: at.toggle(key="worked.scaled").set_value(not at.toggle(key="worked.scaled").value),
    "lessons/context.py": lambda at: at.slider(key="ctx.window").set_value(
        56 if at.slider(key="ctx.window").value != 56 else 64
    ),
    "lessons/latency.py": lambda at: at.radio(key="lat.source").set_value(
        "Exercise 1" if at.radio(key="lat.source").value != "Exercise 1" else "Ch. 30 example"
    ),
    "lessons/cost.py": lambda at: at.number_input[0].set_value(2 if at.number_input[0].value != 2 else 1),
    "lessons/memory.py": lambda at: at.selectbox(key="memory.preset").set_value(
        "Llama-3-8B (GQA)" if at.selectbox(key="memory.preset").value != "Llama-3-8B (GQA)" else "GPT-2 small (MHA)"
    ),
    "lessons/weights.py": lambda at: at.text_input[0].set_value(
        "13B, Q8, 4K" if at.text_input[0].value != "13B, Q8, 4K" else "7B, Q4, 8K"
    ),
    "lessons/quantize.py": lambda at: at.select_slider(key="quant.bits").set_value(
        3 if at.select_slider(key="quant.bits").value != 3 else 4
    ),
    "lessons/quant_model.py": lambda at: at.select_slider(key="qm.diverge_bits").set_value(
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


def browser_step(repeats: int) -> tuple[float, float, float]:
    """(start-up ms to the Prefill button, median Step→new-row ms, p90) in one real server."""
    t0 = time.perf_counter()
    with running_app() as url, browser_page() as page:
        page.goto(url)
        page.get_by_role("button", name=re.compile("^Prefill")).wait_for(timeout=60000)
        startup = (time.perf_counter() - t0) * 1000
        page.get_by_role("button", name=re.compile("^Prefill")).click()
        page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 2", timeout=30000)
        n, times = heatmap_rows(page), []
        for i in range(1, repeats + 1):
            t = time.perf_counter()
            page.get_by_role("button", name="Step ▸").click()
            wait_rows(page, n + i)
            times.append((time.perf_counter() - t) * 1000)
        times.sort()
    return startup, statistics.median(times), times[int(0.9 * (len(times) - 1))]


def model_load(repeats: int) -> tuple[float, float]:
    warm = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        load_model()
        warm.append((time.perf_counter() - t0) * 1000)
    code = (
        "import time; t=time.perf_counter(); import torch; from core.assets import load_model; "
        "t1=time.perf_counter(); load_model(); print((time.perf_counter()-t1)*1000, (t1-t)*1000)"
    )
    cold = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    return statistics.median(warm), float(cold[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args()
    print(
        f"machine: {os.cpu_count()} cores; torch {torch.__version__}, {torch.get_num_threads()} thread(s) here; "
        "the app itself uses 1 torch thread per request"
    )
    print("\n| page | rerun after a typical interaction (median ms) |\n|---|---:|")
    for page, ms in page_reruns(args.repeats):
        print(f"| {page} | {ms:.1f} |")
    startup, step_med, step_p90 = browser_step(max(10, args.repeats))
    warm, cold = model_load(args.repeats)
    print("\n| measure | ms |\n|---|---:|")
    print(f"| browser: click Step → heatmap has the new row (median) | {step_med:.0f} |")
    print(f"| browser: click Step → new row (p90) | {step_p90:.0f} |")
    print(f"| `streamlit run` → decode page's Prefill button visible | {startup:.0f} |")
    print(f"| model load (safetensors → eval model), warm, median | {warm:.1f} |")
    print(f"| model load in a fresh process (after `import torch`) | {cold:.1f} |")


if __name__ == "__main__":
    main()
