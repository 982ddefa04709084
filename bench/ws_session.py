"""Streamlit's websocket protocol spoken by N light clients (``Probe``, ``drive``, ``run``): the
measuring half of ``python -m bench.server_load``, whose docstring says what is measured and why."""

from __future__ import annotations

import asyncio
import gc
import json
import re
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.classroom_load import expected_text, lesson_prompt
from bench.procs import kernel_cpu_seconds, memory_mib, total_cpu_seconds
from bench.stats import p50_p95

TIMEOUT_S = 120


@dataclass
class Reply:
    """What one script run sent back: the parts of the page a lesson checks."""

    buttons: dict[str, tuple[str, str]] = field(default_factory=dict)  # label -> (widget id, fragment id)
    sliders: dict[str, tuple[str, list[str], str]] = field(default_factory=dict)  # label -> (id, options, fragment)
    attention_rows: int | None = None  # rows of the attention figure, if the reply carried it
    texts: list[str] = field(default_factory=list)  # code blocks, markdown, chart titles
    exception: str | None = None
    ms: float = 0.0  # request sent -> the run's script_finished received


@dataclass
class Client:
    ws: object
    query: str
    main_hash: str = ""
    pages: dict[str, str] = field(default_factory=dict)  # url path -> page script hash
    page_hash: str = ""


def attention_rows(element) -> int | None:
    """Rows of the decode page's attention figure when ``element`` (a ``proto Element``) is that
    figure, else None. The one place that knows how the figure travels: the decode stage's custom
    component (``frontend/attention_heatmap.js``) receives a full drawing or one more row; other
    pages' plotly charts have heatmap traces that span every row (z is a list, or plotly 7's typed
    array with a shape)."""
    kind = element.WhichOneof("type")
    if kind == "bidi_component" and element.bidi_component.component_name == "explainer_attention":
        payload = json.loads(element.bidi_component.json)
        return len(payload["rows"]) if payload["kind"] == "full" else payload["base"] + 1
    if kind != "plotly_chart":
        return None
    for trace in json.loads(element.plotly_chart.spec)["data"]:
        if trace.get("type") == "heatmap":
            z = trace["z"]
            return len(z) if isinstance(z, list) else int(str(z["shape"]).split(",")[0])
    return None


def page_steps(texts: list[str]) -> int | None:
    """The decode steps the page reports in its status line (``decode steps k``)."""
    for t in texts:
        m = re.search(r"decode steps:?\** (\d+)", t)
        if m:
            return int(m.group(1))
    return None


def step_problem(reply: Reply, prompt_rows: int, k: int) -> str | None:
    """None when Step k was answered: its rerun finished without an exception, the page reports
    step k, and the attention figure, when it came with the reply, has ``prompt_rows + k`` rows."""
    if reply.exception:
        return f"step {k}: exception on the page: {reply.exception[:120]}"
    if page_steps(reply.texts) != k:
        return f"step {k}: the page reports step {page_steps(reply.texts)}"
    if reply.attention_rows is not None and reply.attention_rows != prompt_rows + k:
        return f"step {k}: the attention figure has {reply.attention_rows} rows, not {prompt_rows + k}"
    return None


def read_element(fm: ForwardMsg, reply: Reply) -> None:
    el = fm.delta.new_element
    kind = el.WhichOneof("type")
    if kind == "button":
        reply.buttons[el.button.label] = (el.button.id, fm.delta.fragment_id)
    elif kind == "slider":
        reply.sliders[el.slider.label] = (el.slider.id, list(el.slider.options), fm.delta.fragment_id)
    elif kind == "plotly_chart":
        reply.texts.append(json.loads(el.plotly_chart.spec).get("layout", {}).get("title", {}).get("text", ""))
    elif kind == "code":
        reply.texts.append(el.code.code_text)
    elif kind == "markdown":
        reply.texts.append(el.markdown.body)
    elif kind == "exception":
        reply.exception = el.exception.message
    rows = attention_rows(el)
    if rows is not None and reply.attention_rows is None:
        reply.attention_rows = rows


async def rerun(client: Client, page_hash: str, fragment: str = "", widgets=()) -> Reply:
    """Send one ``rerun_script`` (as a click or page change would) and read until it finishes."""
    msg = BackMsg()
    msg.rerun_script.query_string = client.query if page_hash in ("", client.main_hash) else ""
    msg.rerun_script.page_script_hash = page_hash
    msg.rerun_script.fragment_id = fragment
    for set_state in widgets:
        set_state(msg.rerun_script.widget_states.widgets.add())
    reply, t0 = Reply(), time.perf_counter()
    await client.ws.send(msg.SerializeToString())
    while True:
        fm = ForwardMsg()
        fm.ParseFromString(await asyncio.wait_for(client.ws.recv(), TIMEOUT_S))
        kind = fm.WhichOneof("type")
        if kind == "new_session":
            client.main_hash = client.main_hash or fm.new_session.main_script_hash
        elif kind == "navigation":
            client.pages = {p.url_pathname: p.page_script_hash for p in fm.navigation.app_pages}
        elif kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
            read_element(fm, reply)
        elif kind == "script_finished":
            if fm.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                continue  # the script asked for a rerun (st.rerun): its elements follow in the next run
            reply.ms = (time.perf_counter() - t0) * 1000
            client.page_hash = page_hash or client.main_hash
            return reply


async def click(client: Client, reply: Reply, label: str) -> Reply:
    widget_id, fragment = reply.buttons[label]

    def trigger(w):
        w.id, w.trigger_value = widget_id, True

    return await rerun(client, client.page_hash, fragment, [trigger])


def affinity_cookie(url: str, pinned: str | None = None) -> str | None:
    """Load the page's health URL as a browser's first request does and return the cookie a class
    server's nginx sets (``name=replica``), or ``pinned`` if given; None from a plain server."""
    if pinned:
        return pinned
    with urllib.request.urlopen(url + "/_stcore/health", timeout=TIMEOUT_S) as r:
        cookies = [c.split(";")[0] for c in r.headers.get_all("Set-Cookie") or []]
    return next((c for c in cookies if c.startswith("class_replica=")), None)


@dataclass
class Probe:
    """Hooks around one session's Steps: server CPU spent in them (single-session runs only)."""

    pids: list[int]
    cpu_s: float = 0.0
    steps: int = 0
    _t0: float = 0.0

    def before(self) -> None:
        self._t0 = total_cpu_seconds(self.pids)

    def after(self, steps: int) -> None:
        self.cpu_s += total_cpu_seconds(self.pids) - self._t0
        self.steps += steps


async def lesson(i: int, url: str, steps: int, think_s: float, expected: str, out: dict, opts: dict) -> None:
    query = urllib.parse.urlencode(
        {"prompt": lesson_prompt(i), "strategy": "sample", "temperature": "1.0", "seed": 1000 + i}
    )
    cookie = await asyncio.to_thread(affinity_cookie, url, opts.get("pin"))
    out["replica_of"][i] = cookie.split("=", 1)[1] if cookie else "-"
    ws_url = url.replace("http://", "ws://").replace("https://", "wss://") + "/_stcore/stream"
    headers = {"Cookie": cookie} if cookie else None
    async with websockets.connect(
        ws_url,
        subprotocols=["streamlit"],
        max_size=None,
        additional_headers=headers,
        proxy=None,
        open_timeout=TIMEOUT_S,
    ) as ws:
        client = Client(ws, query)
        reply = await rerun(client, "")
        reply = await click(client, reply, "Prefill")
        n = reply.attention_rows if reply.attention_rows is not None else 0
        if page_steps(reply.texts) != 0:
            raise RuntimeError(f"Prefill: the page reports step {page_steps(reply.texts)}, not 0")
        probe = opts.get("probe")
        probe and probe.before()
        for k in range(1, steps + 1):
            await asyncio.sleep(think_s)
            reply = await click(client, reply, "Step ▸")
            problem = step_problem(reply, n, k)
            if problem:
                raise RuntimeError(problem)
            out["step_ms"].append(reply.ms)
        probe and probe.after(steps)
        # A code block drops a trailing new line: compare the texts without it.
        if expected.rstrip("\n") not in [t.rstrip("\n") for t in reply.texts]:
            out["crosstalk"].append(i)
        reply = await rerun(client, client.pages["cost"])
        if not any(t.startswith("Scores grow quadratically") for t in reply.texts) or reply.exception:
            raise RuntimeError("the bill-per-token page did not draw its chart")
        reply = await rerun(client, client.pages["quantize"])
        slider_id, options, fragment = reply.sliders["Bit width"]

        def three_bits(w):
            w.id = slider_id
            w.string_array_value.data.append(options[options.index("3")])

        reply = await rerun(client, client.page_hash, fragment, [three_bits])  # as a browser sends it
        if not any("3-bit symmetric" in t for t in reply.texts) or reply.exception:
            raise RuntimeError("moving the bit-width slider to 3 did not redraw the ruler")
        out["completed"] += 1
        await out["all_done"].arrive()  # stay connected until every session is done (memory)


class AllDone:
    """Counts sessions that finished (or failed); when the last one does, measures the servers'
    memory while every completed session is still connected, then lets them all close."""

    def __init__(self, sessions: int, pids: list[int], out: dict):
        self.left, self.pids, self.out, self.event = sessions, pids, out, asyncio.Event()

    async def arrive(self, wait: bool = True) -> None:
        self.left -= 1
        if self.left == 0:
            self.out["memory"] = {pid: memory_mib(pid) for pid in self.pids}
            self.event.set()
        if wait:
            await self.event.wait()


async def one_session(i: int, url: str, steps: int, think_s: float, delay_s: float, expected: str, out, opts):
    await asyncio.sleep(delay_s)
    try:
        await lesson(i, url, steps, think_s, expected, out, opts)
    except Exception as err:  # noqa: BLE001 — every failure is counted and reported, not raised
        out["errors"].append(f"session {i}: {type(err).__name__}: {str(err)[:160]}")
        await out["all_done"].arrive(wait=False)


async def drive(
    url: str, sessions: int, steps: int, ramp_s: float = 0.0, think_s: float = 0.0, pids=(), others=(), first=0, **opts
) -> dict:
    """One lesson for each of ``sessions`` concurrent sessions (numbered from ``first``) against
    ``url``; CPU and memory of the server processes ``pids`` (and CPU of ``others``, e.g. nginx)."""
    out = {"completed": 0, "errors": [], "crosstalk": [], "step_ms": [], "replica_of": {}, "memory": {}}
    out["all_done"] = AllDone(sessions, list(pids), out)
    expected = {i: expected_text(i, steps) for i in range(first, first + sessions)}
    # Clocks start after the solo runs above (~0.1 s of CPU per session): the clients' CPU is
    # what they spend during the lesson, competing with the server for the same cores.
    cpu0, other0, t0 = total_cpu_seconds(list(pids)), total_cpu_seconds(list(others)), time.perf_counter()
    client0, kernel0 = time.process_time(), kernel_cpu_seconds(list(pids))
    # All the clients share this one event loop, so a pause here delays every reply in flight, and a
    # full collection of this process took 79-107 ms during hammering runs (gc.callbacks). A student's
    # browser pauses only its own page, so the clients' cyclic GC waits until the lesson is over.
    gc.collect()
    gc.disable()
    try:
        await asyncio.gather(
            *(
                one_session(i, url, steps, think_s, ramp_s * (i - first) / sessions, expected[i], out, opts)
                for i in range(first, first + sessions)
            )
        )
    finally:
        gc.enable()
    out.pop("all_done")
    p50, p95 = p50_p95(out["step_ms"])
    return {
        **out,
        "sessions": sessions,
        "steps": steps,
        "step_p50_ms": p50,
        "step_p95_ms": p95,
        "elapsed_s": time.perf_counter() - t0,
        "server_cpu_s": total_cpu_seconds(list(pids)) - cpu0,
        "server_kernel_s": kernel_cpu_seconds(list(pids)) - kernel0,
        "other_cpu_s": total_cpu_seconds(list(others)) - other0,
        "client_cpu_s": time.process_time() - client0,  # this process: the clients (and their threads)
    }


async def run(sessions: int, steps: int, ramp_s: float = 0.0, think_s: float = 0.0, url: str | None = None) -> dict:
    """One run against ``url``, or against a fresh `streamlit run main.py` started here."""
    if url:
        return await drive(url, sessions, steps, ramp_s, think_s)
    from bench.browser import running_server

    with running_server(timeout_s=120) as (server_url, proc):
        return await drive(server_url, sessions, steps, ramp_s, think_s, pids=[proc.pid])
