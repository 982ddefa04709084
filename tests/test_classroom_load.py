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
    from bench.server_load import run as run_protocol

    r = asyncio.run(run_protocol(sessions=5, steps=5))
    assert r["errors"] == [] and r["completed"] == 5
    assert r["crosstalk"] == [] and len(r["step_ms"]) == 25
