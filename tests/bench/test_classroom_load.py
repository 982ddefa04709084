"""Reduced classroom load (CI): five concurrent sessions through a lesson against one server,
in browsers and at the protocol level."""

import asyncio

import pytest

from bench.classroom_load import run

pytestmark = pytest.mark.browser


def test_five_sessions_no_errors_no_crosstalk():
    """5 sessions × 5 steps: all complete, zero errors, every session's text equals its solo run."""
    r = asyncio.run(run(sessions=5, steps=5, shots=None))
    assert r["errors"] == [] and r["completed"] == 5
    assert r["crosstalk"] == []
    assert r["peak_rss_mib"] < 2048


def test_five_protocol_sessions_against_the_server():
    """The same lesson through streamlit's websocket protocol (no browsers): all complete, each
    Step returns the heatmap with exactly one more row, and no session sees another's text."""
    from bench.ws_session import run as run_protocol

    r = asyncio.run(run_protocol(sessions=5, steps=5))
    assert r["errors"] == [] and r["completed"] == 5
    assert r["crosstalk"] == [] and len(r["step_ms"]) == 25


BLOCK_CAPTION = "The ruler above is the chapters' teaching format"  # ui.gguf.ruler_block, outside the fragment


def test_the_bit_width_slider_reruns_only_the_ruler():
    """On the quantization ruler, a bit-width move is a fragment rerun (app_pages/quantize.py): the
    reply redraws the ruler at 3 bits but not the real-format block below it, which the page load
    drew; the server spends less on it than on the page load (CPU time from /proc)."""
    from bench.browser import running_shared_app
    from bench.procs import total_cpu_seconds
    from bench.ws_session import Client, rerun

    async def lesson(url: str, pid: int) -> tuple:
        ws_url = url.replace("http://", "ws://") + "/_stcore/stream"
        import websockets

        async with websockets.connect(ws_url, subprotocols=["streamlit"], max_size=None, proxy=None) as ws:
            client = Client(ws, "")
            await rerun(client, "")
            t0 = total_cpu_seconds([pid])
            page = await rerun(client, client.pages["quantize"])
            t1 = total_cpu_seconds([pid])
            slider_id, options, fragment = page.sliders["Bit width"]

            def three_bits(w):
                w.id = slider_id
                w.string_array_value.data.append(options[options.index("3")])

            moved = await rerun(client, client.page_hash, fragment, [three_bits])
            return page, moved, t1 - t0, total_cpu_seconds([pid]) - t1

    with running_shared_app() as (url, proc):  # the test process's one app server (no other page open on it now)
        asyncio.run(lesson(url, proc.pid))  # warm: the first visit imports and caches
        # CPU time from /proc counts in 10 ms ticks, about one page load here: summed over five
        # sessions, so one tick more or less cannot decide the comparison (30 ms against 30 ms once).
        runs = [asyncio.run(lesson(url, proc.pid)) for _ in range(5)]
    page, moved = runs[-1][:2]
    page_cpu, moved_cpu = sum(r[2] for r in runs), sum(r[3] for r in runs)
    assert any(t.startswith(BLOCK_CAPTION) for t in page.texts) and any("4-bit symmetric" in t for t in page.texts)
    assert page.sliders["Bit width"][2] != ""  # drawn inside a fragment
    assert any("3-bit symmetric" in t for t in moved.texts) and moved.exception is None
    assert not any(t.startswith(BLOCK_CAPTION) for t in moved.texts)
    assert moved_cpu < page_cpu
