"""Reduced classroom load (CI): concurrent sessions through a lesson against one server at the protocol level
(five); the three in browsers are bench.classroom_load's quick mode.

How many sessions and Steps: what these tests assert (every session completes, none sees another's text, each
Step adds one heatmap row, the server stays under 2 GiB) needs sessions interleaving on one server, not a given
count: cross-talk shows with two sessions at once and one Step after Prefill, a lost Step at any count. Three
concurrent browser pages × 3 Steps keep that (the 40-session load is bench.classroom_load's own run, not CI's); the
pages are what costs (a page load is ~4 s of Chromium's CPU on these 2-core machines: five × 5 took 52 s of this
file's 94 s). The browser classroom is bench.classroom_load's --quick run (tests/bench/test_quick_browser.py: 3
pages × 3 Steps at once, on a server of their own; it was a second run of the same lesson here). The protocol
lesson, cheap per session, keeps five sessions, 3 Steps each, on the test process's shared app server instead of
one started for it."""

import asyncio

import pytest

pytestmark = pytest.mark.browser


def test_five_protocol_sessions_against_the_server():
    """The same lesson through streamlit's websocket protocol (no browsers), 5 sessions × 3 Steps on the test
    process's shared app server: all complete, each Step returns the heatmap with exactly one more row, and no
    session sees another's text."""
    from bench.browser import running_app
    from bench.ws_session import run as run_protocol

    with running_app() as url:
        r = asyncio.run(run_protocol(sessions=5, steps=3, url=url))
    assert r["errors"] == [] and r["completed"] == 5
    assert r["crosstalk"] == [] and len(r["step_ms"]) == 15


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
