"""The class bench's own instruments (``bench.class_mode``), each checked against what it must see: Redis's
MONITOR counting the plan reads (``reads.PlanReads``: a read of the plan counts, a pulse's read and another
class's plan do not), and a tab telling a fragment run of a page it left (``Tab._take``: the run the frontend
answers by dropping the page's body)."""

from __future__ import annotations

import time

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.class_mode.reads import PlanReads
from bench.class_mode.tab import Tab
from core.classroom.plan import Plan
from core.classroom.store import open_store
from tests.helpers import redis_server


@pytest.fixture(scope="module")
def redis_url():
    with redis_server.url_or_skip() as url:
        yield url


def test_plan_reads_counts_each_read_of_this_class_plan_and_nothing_else(redis_url):
    store = open_store(redis_url)
    code, key = store.open_class()
    other, other_key = store.open_class()
    store.publish(code, key, Plan(step=1))
    store.publish(other, other_key, Plan(step=2))
    reads = PlanReads(redis_url, code)
    try:
        assert reads.sync()  # MONITOR answering: every read from here on is seen
        t0 = time.monotonic()
        assert store.plan(code)[0] == 1
        assert store.plan(code)[1].step == 1
        store.plan(other)  # another class's plan
        store.pulse(code)  # the pulse reads the version, not the plan
        store.info(code)
        assert reads.sync()  # every command Redis ran before the marker has been seen
        assert reads.between(t0, time.monotonic()) == 2
    finally:
        reads.close()


def _message(kind: str, page: str, fragments=()) -> ForwardMsg:
    fm = ForwardMsg()
    if kind == "navigation":
        fm.navigation.page_script_hash = page
    else:
        fm.new_session.page_script_hash = page
        fm.metadata.run.fragment_ids.extend(fragments)
    return fm


def test_a_tab_counts_a_fragment_run_of_the_page_it_left_and_no_other():
    tab = Tab("student")
    tab._take(_message("navigation", "page-b"))
    tab._take(_message("new_session", "page-b", ["strip"]))  # the shown page's fragment
    tab._take(_message("new_session", "main-script"))  # a full run names the main script
    assert tab.stale_runs == []
    tab._take(_message("new_session", "page-a", ["strip"]))  # the page it moved from: the body is dropped
    assert [h for _, h in tab.stale_runs] == ["page-a"]
