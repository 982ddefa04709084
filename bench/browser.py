"""Start the real app with `streamlit run` on a free localhost port and drive it in Chromium."""

from __future__ import annotations

import atexit
import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_SHARED: dict = {}  # the one default server of this test run: url, proc, and its context manager


@contextlib.contextmanager
def running_app(timeout_s: float = 60, app_args: tuple[str, ...] = (), env: dict | None = None, fresh: bool = False):
    """Yield the base URL of `streamlit run app.py` on localhost.

    With the default options every caller shares one server, started on first use and stopped when
    the test process exits: each browser page is its own session, as students' are, and a server's
    start-up (~3 s, and a slower first page while it imports torch) is paid once, not per test.
    ``fresh`` (a test of a new server's first visit, a start-up timing), ``app_args`` or ``env``
    start a server of its own, stopped afterwards."""
    if fresh or app_args or env:
        with running_server(timeout_s, app_args=app_args, env=env) as (url, _):
            yield url
        return
    if "proc" not in _SHARED or _SHARED["proc"].poll() is not None:
        server = running_server(timeout_s)
        _SHARED["url"], _SHARED["proc"] = server.__enter__()
        atexit.register(server.__exit__, None, None, None)
    yield _SHARED["url"]


@contextlib.contextmanager
def running_server(timeout_s: float = 60, root: Path = ROOT, app_args: tuple[str, ...] = (), env: dict | None = None):
    """Like ``running_app`` but yields (url, process) so callers can read the server's memory.
    ``root``: the checkout whose app.py to run (a bench may compare another version);
    ``app_args``: the app's own options (``streamlit run app.py -- --model PATH``); ``env``:
    variables to set for the server (e.g. ``HF_HUB_CACHE``)."""
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
    ]
    cmd += ["--", *app_args] if app_args else []
    proc = subprocess.Popen(
        cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + timeout_s
        while True:
            try:
                urllib.request.urlopen(url + "/_stcore/health", timeout=2)
                break
            except OSError:
                if time.time() > deadline or proc.poll() is not None:
                    raise RuntimeError("streamlit did not start") from None
                time.sleep(0.3)
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


_BROWSER: dict = {}  # playwright and the Chromium this test module's pages open in


def _browser():
    """One Chromium for the pages of a test module (``conftest`` closes it when the module ends):
    starting playwright and the browser takes ~1.3 s, a new context ~0.4 s."""
    if "browser" not in _BROWSER or not _BROWSER["browser"].is_connected():
        from playwright.sync_api import sync_playwright

        close_browser()
        playwright = sync_playwright().start()
        _BROWSER["playwright"] = playwright
        _BROWSER["browser"] = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
    return _BROWSER["browser"]


def close_browser() -> None:
    """Close the module's Chromium and stop playwright (a test that drives playwright itself, sync
    or async, needs it stopped first)."""
    browser, playwright = _BROWSER.pop("browser", None), _BROWSER.pop("playwright", None)
    with contextlib.suppress(Exception):
        if browser is not None:
            browser.close()
    if playwright is not None:
        playwright.stop()


@contextlib.contextmanager
def browser_page(width: int = 1280, height: int = 800, scale: float = 1.0):
    """A page in a browser context of its own (its own cookies, storage and cache: a student's
    fresh browser), in the module's one Chromium."""
    context = _browser().new_context(viewport={"width": width, "height": height}, device_scale_factor=scale)
    try:
        yield context.new_page()
    finally:
        context.close()


# The decode stage's heatmap (frontend/attention_heatmap.js) says how many rows it holds in
# data-rows. Elsewhere plotly 7 ships numpy arrays as base64 typed arrays: z is then {dtype, bdata,
# shape}; both heatmap traces of an attention figure span every row, so the first is read.
HEATMAP_ROWS_JS = """() => {
  let n = 0;
  const stage = document.querySelector('.attn-root');
  if (stage && stage.dataset.rows) {
    n = parseInt(stage.dataset.rows);
  } else {
    for (const g of document.querySelectorAll('.js-plotly-plot')) {
      const t = (g.data || []).find((trace) => trace.type === 'heatmap');
      if (t) { n = (t.z && t.z.length !== undefined) ? t.z.length : parseInt(String(t.z.shape).split(',')[0]); break; }
    }
  }
  return n;
}"""


def heatmap_rows(page) -> int:
    return page.evaluate(HEATMAP_ROWS_JS)


def wait_rows(page, rows: int, timeout_ms: int = 30000) -> None:
    page.wait_for_function(
        HEATMAP_ROWS_JS.replace("() => {", f"() => {{ const want = {rows};", 1).replace(
            "return n;", "return n >= want;"
        ),
        timeout=timeout_ms,
    )


# The app's own style sheet (assets/style/a11y.css, and presenter.css after it in presenter mode) reaches the page
# as one <style> in a markdown element (ui.style_sheet), which streamlit draws with code it loads on first use: on
# a fresh tab the style arrives up to ~1.5 s after the page's first text (with st.html, up to ~5 s: a reloaded
# ?present=1 tab kept laptop-size headings meanwhile). A measurement of sizes or of focus rings waits for it.
APP_STYLE_MARK = (ROOT / "assets" / "style" / "a11y.css").read_text(encoding="utf-8").splitlines()[0][:60]


def wait_app_style(page, timeout_ms: int = 30000) -> None:
    page.wait_for_function(
        "mark => Array.from(document.querySelectorAll('style')).some(s => s.textContent.includes(mark))",
        arg=APP_STYLE_MARK,
        timeout=timeout_ms,
    )


# streamlit shows its status widget ("Running…") while a script runs for the page.
IDLE_JS = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"


def wait_idle(page, settle_ms: int = 500, timeout_ms: int = 60000) -> None:
    """Wait ``settle_ms`` (a rerun just asked for may not show its status yet), then until no
    script runs for the page."""
    page.wait_for_timeout(settle_ms)
    page.wait_for_function(IDLE_JS, timeout=timeout_ms)


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
