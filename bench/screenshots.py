"""README's screenshots: start the real app, drive it in Chromium, save small PNGs into docs/img/.

    python -m bench.screenshots [--out DIR] [--quick]

Each shot waits on page state (streamlit's script state on the app element, and the element it
shows being visible), never on a fixed sleep. The PNGs are scaled down and reduced to a palette
so that each stays well under 250 KB. ``--out DIR`` writes them elsewhere; ``--quick`` (seconds;
tests/bench/test_quick_browser.py) takes the same three shots with 1 Step in the decode shot, into
``--out`` or a new temporary folder (never docs/img/)."""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
from pathlib import Path

from PIL import Image

from bench.browser import CHROMIUM, HEATMAP_ROWS_JS, ROOT, running_server, wait_app_style, wait_rows

OUT = ROOT / "docs" / "img"
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
STEPS = 6  # Steps after Prefill in the decode shot
PROMPT_ROWS = 51  # rows of the heatmap after Prefill of the default prompt (tests/browser/test_stage.py)


def _idle(page, timeout_ms: int = 60000) -> None:
    """Until streamlit says no script runs for the page."""
    from playwright.sync_api import expect

    expect(page.locator(IDLE)).to_be_visible(timeout=timeout_ms)


def _visible(page, target, timeout_ms: int = 90000) -> None:
    """Until ``target`` is visible; a script error drawn by streamlit instead fails at once, naming it."""
    from playwright.sync_api import expect

    error = page.get_by_test_id("stException")
    expect(target.or_(error).first).to_be_visible(timeout=timeout_ms)
    if error.count():
        raise RuntimeError(f"the app failed on {page.url}: {error.first.inner_text()[:500]}")


def _save(page, name: str, width: int, colors: int = 128) -> Path:
    """Screenshot the viewport, scale it to ``width`` px, reduce to a palette, write ``OUT``/name
    (docs/img/ unless ``--out``)."""
    image = Image.open(io.BytesIO(page.screenshot(scale="css"))).convert("RGB")
    if image.width > width:
        image = image.resize((width, round(image.height * width / image.width)), Image.LANCZOS)
    image = image.quantize(colors=colors, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / name
    image.save(path, optimize=True)
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    print(f"{shown}: {image.width}×{image.height}, {path.stat().st_size // 1024} KB")
    return path


def decode_stage(browser, url: str) -> Path:
    """The decode stage in presenter mode at 1920×1080, after Prefill and a few Steps."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    page.goto(f"{url}/?present=1")
    prefill = page.get_by_role("button", name="Prefill").first
    _visible(page, prefill)
    _idle(page)
    prefill.click()
    wait_rows(page, PROMPT_ROWS, timeout_ms=90000)
    for _ in range(STEPS):
        rows = page.evaluate(HEATMAP_ROWS_JS)
        page.keyboard.press("ArrowRight")
        wait_rows(page, rows + 1)
    _idle(page)
    wait_app_style(page)
    expect(page.locator(".panel-counters")).to_be_visible()
    expect(page.locator(".attn-root")).to_be_visible()
    path = _save(page, "decode-stage.png", 1280)
    page.close()
    return path


def quant_ruler(browser, url: str) -> Path:
    """The quantization ruler page at 1280×800."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(f"{url}/quantize")
    _visible(page, page.get_by_role("combobox", name="The chapters' cases"))
    ruler = page.locator(".js-plotly-plot").first
    expect(ruler).to_be_visible(timeout=90000)
    _idle(page)
    wait_app_style(page)
    # The ruler itself under the controls: scroll so the whole chart is on screen.
    ruler.evaluate("g => g.scrollIntoView({block: 'end'})")
    expect(ruler).to_be_in_viewport(ratio=1.0)
    path = _save(page, "quantization-ruler.png", 1024)
    page.close()
    return path


def practice(browser, url: str) -> Path:
    """The Practice page at 1280×800: exercise 1 with two answers checked, one of them a named mistake
    (TTFT from the start of prefill)."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(f"{url}/practice")
    ttft = page.get_by_role("textbox", name="TTFT")
    _visible(page, ttft)
    _idle(page)
    ttft.fill("110 ms")
    page.get_by_role("textbox", name="TPOT").fill("55 ms")
    page.get_by_role("button", name="Check").click()
    expect(page.get_by_text("Known mistakes met").first).to_be_visible(timeout=60000)
    _idle(page)
    wait_app_style(page)
    path = _save(page, "practice.png", 1024)
    page.close()
    return path


def main() -> int:
    global OUT, STEPS
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="folder for the PNGs (default docs/img/)")
    ap.add_argument("--quick", action="store_true", help="seconds: 1 Step in the decode shot; a temporary folder")
    args = ap.parse_args()
    if args.quick:
        STEPS = 1
    if args.out or args.quick:
        OUT = args.out or Path(tempfile.mkdtemp(prefix="screenshots-"))

    with running_server(timeout_s=120) as (url, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"], headless=True)
        try:
            for shot in (decode_stage, quant_ruler, practice):
                shot(browser, url)
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
