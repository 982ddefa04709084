"""Reduced classroom load (CI): five concurrent browser sessions through a lesson, one server."""

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
