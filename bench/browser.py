"""Start the real app with `streamlit run` on a free localhost port and drive it in Chromium."""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
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
    """Yield the base URL of `streamlit run main.py` on localhost.

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
def running_shared_app(timeout_s: float = 60):
    """``running_app``'s shared server as (url, process), for a test that reads the server's CPU time."""
    with running_app(timeout_s) as url:
        yield url, _SHARED["proc"]


@contextlib.contextmanager
def running_server(timeout_s: float = 60, root: Path = ROOT, app_args: tuple[str, ...] = (), env: dict | None = None):
    """Like ``running_app`` but yields (url, process) so callers can read the server's memory.
    ``root``: the checkout whose app to run (a bench may compare another version: its main.py, or app.py where
    it has none); ``app_args``: the app's own options (``streamlit run main.py -- --model PATH``); ``env``:
    variables to set for the server (e.g. ``HF_HUB_CACHE``)."""
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "main.py" if (root / "main.py").is_file() else "app.py",
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
    # Each server its own class store (class mode): a test's classes never meet another server's.
    store = f"sqlite:///{tempfile.mkdtemp(prefix='class-store-')}/classes.db"
    env = {**os.environ, "EXPLAINER_CLASS_STORE": store, **(env or {})}
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, env=env)
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


_BROWSER: dict = {}  # playwright and the Chromium this test process's pages open in


def _browser():
    """One Chromium for the pages of a test process (``conftest`` closes it before a module that drives
    playwright itself): starting playwright and the browser takes ~1.3 s, a new context ~0.4 s."""
    if "browser" not in _BROWSER or not _BROWSER["browser"].is_connected():
        from playwright.sync_api import sync_playwright

        close_browser()
        playwright = sync_playwright().start()
        _BROWSER["playwright"] = playwright
        _BROWSER["browser"] = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
    return _BROWSER["browser"]


def close_browser() -> None:
    """Close the process's Chromium and stop playwright (a test that drives playwright itself, sync
    or async, needs it stopped first)."""
    _CONTEXTS.clear()
    browser, playwright = _BROWSER.pop("browser", None), _BROWSER.pop("playwright", None)
    with contextlib.suppress(Exception):
        if browser is not None:
            browser.close()
    if playwright is not None:
        playwright.stop()


# streamlit marks its app element with the state of the page's script run, ``data-test-script-state`` ("initial"
# before the first run, "running", "notRunning", "rerunRequested"), as streamlit's own end-to-end tests read it. It
# cannot tell which run ended: a rerun asked for by a click starts only when the server answers, so "notRunning"
# just after a click is still the run before it, and a short run can start and end within one React render, the
# attribute never reading "running". SCRIPT_RUNS_JS, run in every document of ``browser_page``'s contexts before the
# app's code, watches the app's websocket instead: it counts the messages the page sends (``window.__wsSent``: a
# rerun asked for is one, sent while the key or click is handled) and, for every run the server says has finished
# (ForwardMsg field 6, script_finished: a whole run or a fragment's, not one cut short for a rerun), notes how many
# messages the page had sent by then (``window.__finishedAfter``). ``rerun(page)`` around an action waits for a run
# that finished after the action's first message.
SCRIPT_RUNS_JS = """(() => {
  window.__wsSent = 0;
  window.__finishedAfter = -1;
  const varint = (b, at) => {
    let x = 0, s = 1, c;
    do { c = b[at.i++]; x += (c & 0x7f) * s; s *= 128; } while (c & 0x80);
    return x;
  };
  const finished = (data) => {  // the script_finished status of a ForwardMsg, or null
    if (!(data instanceof ArrayBuffer)) return null;
    const b = new Uint8Array(data), at = {i: 0};
    while (at.i < b.length) {
      const tag = varint(b, at), field = Math.floor(tag / 8), wire = tag & 7;
      if (wire === 0) { const v = varint(b, at); if (field === 6) return v; }
      else if (wire === 2) { const n = varint(b, at); at.i += n; }
      else if (wire === 1) at.i += 8;
      else if (wire === 5) at.i += 4;
      else return null;
    }
    return null;
  };
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (...args) {
    if (!this.__watched) {
      this.__watched = true;
      this.addEventListener('message', (e) => {
        const status = finished(e.data);  // 0: finished, 3: a fragment's run finished (2: cut short for a rerun)
        if (status === 0 || status === 3) window.__finishedAfter = window.__wsSent;
      });
    }
    window.__wsSent += 1;
    return send.apply(this, args);
  };
})();"""
SCRIPT_STATE_JS = "() => document.querySelector('[data-testid=\"stApp\"]')?.getAttribute('data-test-script-state')"
IDLE_JS = f"() => ({SCRIPT_STATE_JS})() === 'notRunning'"

# On a failure inside ``browser_page``: a screenshot of each of its pages and the context's Playwright trace
# (open it with ``playwright show-trace``) under FAILURES/<test>/. tests/conftest.py turns ``RECORD["on"]`` on
# (bench scripts time pages and record nothing) and names the files in the test's failure report.
FAILURES = ARTIFACTS / "failures"
RECORD: dict = {"on": False, "saved": []}


def _failure_folder() -> Path:
    test = os.environ.get("PYTEST_CURRENT_TEST", "browser").split(" (")[0]
    name = "".join(c if c.isalnum() or c in "-_.[]" else "_" for c in test.replace("::", "__"))[-150:]
    return FAILURES / name


_CLEARED: set = set()  # the failure folders this process has emptied of an earlier run's files


def _save_failure(context) -> list[Path]:
    folder = _failure_folder()
    if folder not in _CLEARED:
        _CLEARED.add(folder)
        shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    n = len(list(folder.glob("trace-*.zip")))
    saved = []
    for i, page in enumerate(context.pages):
        with contextlib.suppress(Exception):  # a crashed page: the trace still says what happened
            path = folder / f"page-{n}-{i}.png"  # the screen as it was (a full-page shot takes long on a busy machine)
            page.screenshot(path=str(path), timeout=30000)
            saved.append(path)
    with contextlib.suppress(Exception):
        path = folder / f"trace-{n}.zip"
        context.tracing.stop_chunk(path=str(path))
        saved.append(path)
    RECORD["saved"] += saved
    return saved


def take_saved_failures() -> list[Path]:
    """The failure files saved since the last call (tests/conftest.py puts them in the report)."""
    saved, RECORD["saved"] = RECORD["saved"], []
    return saved


# The contexts this test process's pages share, one per device scale: a page in a fresh context costs Chromium
# ~3.6 s of CPU to load the app (streamlit's and plotly's scripts fetched and compiled again: a new context has
# an empty cache), one in a context that loaded it before ~2.5 s, and the server ~0.35 → 0.05 s (measured in
# docs/testing.md). Each page is still its own streamlit session (its own websocket).
_CONTEXTS: dict = {}
_TRACE: dict = {"depth": 0, "failed": False}
# ... but each test's pages start with what a fresh browser has: streamlit keeps the sidebar's state (and its width)
# in localStorage, so a page opened after one that opened the sidebar would find it open. A tab's first document at
# an origin clears that origin's localStorage; a reload of the tab (its sessionStorage kept) keeps it, as a browser
# does. Cookies are cleared when a test opens its first page (``_traced_chunk``).
FRESH_TAB_JS = """(() => {
  try {
    if (!sessionStorage.getItem('__freshTab')) { localStorage.clear(); sessionStorage.setItem('__freshTab', '1'); }
  } catch (e) {}
})();"""


def _shared_context(scale: float):
    context = _CONTEXTS.get(scale)
    if context is None or not context.browser.is_connected():
        context = _browser().new_context(viewport={"width": 1280, "height": 800}, device_scale_factor=scale)
        context.add_init_script(FRESH_TAB_JS)
        context.add_init_script(SCRIPT_RUNS_JS)
        if RECORD["on"]:
            # DOM snapshots at each action, no screencast: the screencast's frames doubled Chromium's CPU time over
            # a Prefill and six Steps (2.5 → 4.7 s), snapshots cost ~15 %; the failure's own screenshot shows the
            # screen. One trace for the context; each test's part of it is a chunk (``browser_page``).
            context.tracing.start(snapshots=True, screenshots=False)
        _CONTEXTS[scale] = context
    return context


@contextlib.contextmanager
def _traced_chunk(context):
    """Around the outermost ``browser_page`` of a test (a test may open several pages at once): a trace chunk,
    saved with the open pages' screenshots if an exception leaves the block, dropped otherwise."""
    record = RECORD["on"]
    outermost = _TRACE["depth"] == 0
    if outermost:  # what an earlier test's pages may have changed in the shared context
        context.clear_cookies()
        context.set_offline(False)
        context.unroute_all(behavior="ignoreErrors")
    if record and outermost:
        _TRACE["failed"] = False
        context.tracing.start_chunk()
    _TRACE["depth"] += 1
    try:
        yield
    except BaseException:
        if record and not _TRACE["failed"]:
            _TRACE["failed"] = True
            _save_failure(context)
        raise
    finally:
        _TRACE["depth"] -= 1
        if record and outermost and not _TRACE["failed"]:
            with contextlib.suppress(Exception):
                context.tracing.stop_chunk()  # passed: nothing kept


@contextlib.contextmanager
def browser_page(width: int = 1280, height: int = 800, scale: float = 1.0, fresh: bool = False):
    """A page of ``width`` × ``height`` CSS px in the process's one Chromium: its own streamlit session, in a
    browser context shared with the process's other pages of the same ``scale`` (cookies, storage and the
    cache of the app's scripts: one browser's tabs). ``fresh``: a context of its own, closed after the block
    (a first visit with an empty cache, as a timing of it needs). With ``RECORD["on"]`` the pages are traced,
    and an exception inside the block saves their screenshots and trace (``_save_failure``)."""
    if fresh:
        context = _browser().new_context(viewport={"width": width, "height": height}, device_scale_factor=scale)
        context.add_init_script(SCRIPT_RUNS_JS)
        if RECORD["on"]:
            context.tracing.start(snapshots=True, screenshots=False)
    else:
        context = _shared_context(scale)
    page = context.new_page()
    try:
        page.set_viewport_size({"width": width, "height": height})
        with _traced_chunk(context):
            yield page
    finally:
        with contextlib.suppress(Exception):
            page.close()
        if fresh:
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


def wait_idle(page, timeout_ms: int = 60000) -> None:
    """Wait until the page's state says "notRunning" (after a page load: its first run has ended, the state reads
    "initial" before it). Right after an action, use ``rerun``: the run it asks for may not have started."""
    page.wait_for_function(IDLE_JS, timeout=timeout_ms)


def open_from_menu(page, section: str, title: str) -> None:
    """To page ``title`` through the top bar's menu ``section`` (the same session, no page load), once the page's
    run has ended; waits for the new page's heading."""
    wait_idle(page)
    page.get_by_test_id("stTopNavSection").filter(has_text=re.compile(f"^{re.escape(section)}$")).click()
    page.get_by_test_id("stTopNavDropdownLink").filter(has=page.get_by_text(title, exact=True)).click()
    page.get_by_role("heading", level=1, name=title, exact=True).wait_for(timeout=60000)


@contextlib.contextmanager
def rerun(page, timeout_ms: int = 60000):
    """Around an action that reruns the page's script (a click, a key, an upload): wait for the page to be idle
    first, then, after the block, for a run that the server finished after the action's first message to it,
    and for the page to show it ended."""
    wait_idle(page, timeout_ms)
    sent = page.evaluate("() => window.__wsSent")
    yield
    page.wait_for_function(f"(sent) => window.__finishedAfter > sent && ({IDLE_JS})()", arg=sent, timeout=timeout_ms)


def settled(page) -> None:
    """Let the page finish what its event loop has queued: an animation frame, then a task after it (no
    clock: what a handler started, it has done, timers and network replies aside)."""
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)))")


def wait_still(page, value_js: str, arg=None, frames: int = 5, timeout_ms: int = 30000):
    """Wait until a measurement of the page (``value_js``, a JS function of ``arg`` returning JSON) has stayed
    the same over ``frames`` animation frames in a row (figures that are still drawing or a panel still sliding
    change it from frame to frame), and return it."""
    handle = page.wait_for_function(
        f"""(arg) => {{ const v = JSON.stringify(({value_js})(arg));
            if (v !== window.__stillValue) {{ window.__stillValue = v; window.__stillFrames = 0; return false; }}
            window.__stillFrames += 1;
            return window.__stillFrames >= {frames} ? {{v: JSON.parse(v)}} : false; }}""",
        arg=arg,
        timeout=timeout_ms,
        polling="raf",
    )
    page.evaluate("() => { window.__stillValue = undefined; }")
    return handle.json_value()["v"]


def wait_until(page, value_js: str, ok_js: str, arg=None, timeout_ms: int = 15000, what: str = "") -> object:
    """Auto-retrying assertion on a measurement of the page (Playwright's ``expect`` for values it has no
    matcher for): wait until ``ok_js`` (a JS function of the value) holds for ``value_js`` (a JS function of
    ``arg``), and return the value; at the deadline an AssertionError names the last value."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        handle = page.wait_for_function(
            f"(arg) => {{ const v = ({value_js})(arg); return ({ok_js})(v) ? {{v}} : false; }}",
            arg=arg,
            timeout=timeout_ms,
        )
    except PlaywrightTimeout:
        last = page.evaluate(value_js, arg)
        raise AssertionError(f"{what or ok_js} not reached in {timeout_ms} ms; last value: {last!r}") from None
    return handle.json_value()["v"]


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
