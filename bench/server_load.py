"""A full class against the server alone: N light clients speaking streamlit's websocket protocol.

    python -m bench.server_load --sessions 40 --steps 20 [--ramp S] [--think S]

`bench.classroom_load` drives real browsers, but on this 2-core machine 40 headless Chromium pages
need far more CPU than the server (in a classroom every student's browser runs on their own
device). This script isolates the server: each client opens a websocket to `/_stcore/stream` and
sends the same protobuf messages a browser sends (``BackMsg.rerun_script`` with the clicked
button's trigger and its fragment id, a page change, a slider value), reading the server's
``ForwardMsg`` replies without drawing anything. The lesson is the same as the browser script's:
the decode page through a shared link with the session's own prompt and seed, Prefill, N Steps,
then the bill-per-token page and the quantization ruler with the bit-width slider moved to 3.

Reports sessions completed, errors, p50/p95 time from sending a Step to receiving the heatmap
with the new row (add the browser's own drawing, ~0.1 s on a laptop, for what a student sees),
the server's peak memory and CPU time, and cross-talk: each session's text against a solo run
computed with core/. Traffic goes to 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import urllib.parse
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.classroom_load import cpu_seconds, expected_text, lesson_arguments, lesson_prompt, p50_p95, peak_rss_mib
from tests.browser_util import running_server

TIMEOUT_S = 120


@dataclass
class Reply:
    """What one script run sent back: the parts of the page a lesson checks."""

    buttons: dict[str, tuple[str, str]] = field(default_factory=dict)  # label -> (widget id, fragment id)
    sliders: dict[str, tuple[str, list[str]]] = field(default_factory=dict)  # label -> (id, options)
    heatmap_rows: int | None = None
    rows_ms: float | None = None  # request sent -> heatmap received
    texts: list[str] = field(default_factory=list)  # code blocks, markdown, chart titles
    exception: str | None = None


@dataclass
class Client:
    ws: object
    query: str
    main_hash: str = ""
    pages: dict[str, str] = field(default_factory=dict)  # url path -> page script hash
    page_hash: str = ""


def heatmap_rows(spec: str) -> int:
    """Rows of the attention figure (each of its heatmap traces spans every row)."""
    for trace in json.loads(spec)["data"]:
        if trace.get("type") == "heatmap":
            z = trace["z"]
            return len(z) if isinstance(z, list) else int(str(z["shape"]).split(",")[0])
    return 0


def read_element(fm: ForwardMsg, reply: Reply, t0: float) -> None:
    el = fm.delta.new_element
    kind = el.WhichOneof("type")
    if kind == "button":
        reply.buttons[el.button.label] = (el.button.id, fm.delta.fragment_id)
    elif kind == "slider":
        reply.sliders[el.slider.label] = (el.slider.id, list(el.slider.options))
    elif kind == "plotly_chart":
        spec = el.plotly_chart.spec
        reply.texts.append(json.loads(spec).get("layout", {}).get("title", {}).get("text", ""))
        rows = heatmap_rows(spec)
        if rows and reply.heatmap_rows is None:
            reply.heatmap_rows, reply.rows_ms = rows, (time.perf_counter() - t0) * 1000
    elif kind == "bidi_component" and el.bidi_component.component_name == "explainer_attention":
        # The decode stage draws its heatmap in the browser: a full drawing, or one more row.
        payload = json.loads(el.bidi_component.json)
        reply.texts.append(payload.get("title", ""))
        rows = len(payload["rows"]) if payload["kind"] == "full" else payload["base"] + 1
        if reply.heatmap_rows is None:
            reply.heatmap_rows, reply.rows_ms = rows, (time.perf_counter() - t0) * 1000
    elif kind == "code":
        reply.texts.append(el.code.code_text)
    elif kind == "markdown":
        reply.texts.append(el.markdown.body)
    elif kind == "exception":
        reply.exception = el.exception.message


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
            read_element(fm, reply, t0)
        elif kind == "script_finished":
            if fm.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                continue  # the script asked for a rerun (st.rerun): its elements follow in the next run
            client.page_hash = page_hash or client.main_hash
            return reply


async def click(client: Client, reply: Reply, label: str) -> Reply:
    widget_id, fragment = reply.buttons[label]

    def trigger(w):
        w.id, w.trigger_value = widget_id, True

    return await rerun(client, client.page_hash, fragment, [trigger])


async def lesson(i: int, url: str, steps: int, think_s: float, expected: str, out: dict) -> None:
    query = urllib.parse.urlencode(
        {"prompt": lesson_prompt(i), "strategy": "sample", "temperature": "1.0", "seed": 1000 + i}
    )
    ws_url = url.replace("http://", "ws://") + "/_stcore/stream"
    async with websockets.connect(ws_url, subprotocols=["streamlit"], max_size=None) as ws:
        client = Client(ws, query)
        reply = await rerun(client, "")
        reply = await click(client, reply, "Prefill")
        n = reply.heatmap_rows
        for k in range(1, steps + 1):
            await asyncio.sleep(think_s)
            reply = await click(client, reply, "Step ▸")
            if reply.heatmap_rows != n + k or reply.exception:
                raise RuntimeError(f"step {k}: heatmap has {reply.heatmap_rows} rows, not {n + k}")
            out["step_ms"].append(reply.rows_ms)
        if expected not in reply.texts:
            out["crosstalk"].append(i)
        reply = await rerun(client, client.pages["cost"])
        if not any(t.startswith("Scores grow quadratically") for t in reply.texts) or reply.exception:
            raise RuntimeError("the bill-per-token page did not draw its chart")
        reply = await rerun(client, client.pages["quantize"])
        slider_id, options = reply.sliders["Bit width"]

        def three_bits(w):
            w.id = slider_id
            w.string_array_value.data.append(options[options.index("3")])

        reply = await rerun(client, client.page_hash, "", [three_bits])
        if not any("3-bit symmetric" in t for t in reply.texts) or reply.exception:
            raise RuntimeError("moving the bit-width slider to 3 did not redraw the ruler")


async def one_session(i: int, url: str, steps: int, think_s: float, delay_s: float, expected: str, out: dict):
    await asyncio.sleep(delay_s)
    try:
        await lesson(i, url, steps, think_s, expected, out)
        out["completed"] += 1
    except Exception as err:  # noqa: BLE001 — every failure is counted and reported, not raised
        out["errors"].append(f"session {i}: {type(err).__name__}: {str(err)[:160]}")


async def run(sessions: int, steps: int, ramp_s: float = 0.0, think_s: float = 0.0) -> dict:
    expected = {i: expected_text(i, steps) for i in range(sessions)}
    out = {"completed": 0, "errors": [], "crosstalk": [], "step_ms": []}
    with running_server(timeout_s=120) as (url, proc):
        cpu0, t0 = cpu_seconds(proc.pid), time.perf_counter()
        await asyncio.gather(
            *(one_session(i, url, steps, think_s, ramp_s * i / sessions, expected[i], out) for i in range(sessions))
        )
        elapsed, server_cpu, rss = time.perf_counter() - t0, cpu_seconds(proc.pid) - cpu0, peak_rss_mib(proc.pid)
    p50, p95 = p50_p95(out["step_ms"])
    return {
        **out,
        "sessions": sessions,
        "steps": steps,
        "step_p50_ms": p50,
        "step_p95_ms": p95,
        "peak_rss_mib": rss,
        "elapsed_s": elapsed,
        "server_cpu_s": server_cpu,
    }


def main() -> None:
    args = lesson_arguments(__doc__)
    r = asyncio.run(run(args.sessions, args.steps, args.ramp, args.think))
    print(
        f"machine: {os.cpu_count()} cores; {r['sessions']} concurrent protocol-level sessions × {r['steps']} steps, "
        f"started over {args.ramp:g} s, {args.think:g} s before each Step; no browsers"
    )
    print("| measure | value |\n|---|---:|")
    print(f"| sessions completed | {r['completed']} of {r['sessions']} |")
    print(f"| errors | {len(r['errors'])} |")
    print(f"| sessions whose text differs from a solo run (cross-talk) | {len(r['crosstalk'])} |")
    print(f"| send Step → heatmap with the new row received, p50 | {r['step_p50_ms']:.0f} ms |")
    print(f"| send Step → heatmap with the new row received, p95 | {r['step_p95_ms']:.0f} ms |")
    print(f"| server peak memory (VmHWM) | {r['peak_rss_mib']:.0f} MiB |")
    print(f"| wall time for the whole lesson | {r['elapsed_s']:.0f} s |")
    print(f"| server CPU time during the lesson | {r['server_cpu_s']:.0f} s |")
    for e in r["errors"][:10]:
        print("error:", e)


if __name__ == "__main__":
    main()
