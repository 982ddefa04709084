"""turns: the decode stage's runs in one process, one at a time, in the order they arrived (in a
class server's replica: ``EXPLAINER_STEPS_IN_LINE=1``, which ``python -m serve`` sets)."""

import contextlib
import threading

import pytest

from serve import step_queue
from tests.helpers.poll import until


def wait_until(condition, timeout_s: float = 10.0) -> None:
    """Poll ``condition`` until it holds (a wait on state, not a fixed pause); fail after ``timeout_s``."""
    until(condition, timeout_s, "the threads to line up", every_s=0.001)


def run_in_threads(n: int, body, arrived=lambda i: step_queue.waiting() > i) -> list[threading.Thread]:
    """Start ``n`` threads calling ``body(i)``, each once the one before has ``arrived`` (by default: it is
    in the line, as the main thread counts it), so their arrival order is 0, 1, …, n − 1; ``arrived=None``
    starts them all at once. Returns them."""
    threads = []
    for i in range(n):
        t = threading.Thread(target=body, args=(i,))
        t.start()
        threads.append(t)
        if arrived is not None and i < n - 1:  # the last one's arrival is not waited for: its turn may be over
            wait_until(lambda i=i: arrived(i))
    return threads


@pytest.fixture
def in_line(monkeypatch):
    monkeypatch.setattr(step_queue, "IN_LINE", True)  # as in a replica started by serve


def test_runs_take_turns_in_arrival_order_never_two_at_once(in_line):
    """Five threads arrive one after another while the first holds the turn until the other four are in
    line: they run 0-4 in that order, one at a time, and while 0 runs the other four are counted as waiting."""
    log, inside, seen_waiting = [], [], []

    @step_queue.one_at_a_time
    def stage(i: int) -> None:
        inside.append(i)
        assert len(inside) == 1, f"{inside} ran at once"
        log.append(i)
        if i == 0:
            wait_until(lambda: step_queue.waiting() == 4)  # holds the turn until all four are in line
            seen_waiting.append(step_queue.waiting())
        inside.remove(i)

    for t in run_in_threads(5, stage):
        t.join(timeout=10)
    assert log == [0, 1, 2, 3, 4]
    assert seen_waiting == [4]
    assert step_queue.waiting() == 0


def test_a_nested_call_keeps_the_turn_and_an_exception_passes_it_on(in_line):
    """A stage called inside itself does not wait for itself; a run that raises (streamlit's rerun
    and stop are exceptions) still lets the next one in."""
    order = []

    @step_queue.one_at_a_time
    def inner(i):
        order.append(("inner", i))

    @step_queue.one_at_a_time
    def outer(i):
        inner(i)
        order.append(("outer", i))
        if i == 0:
            wait_until(lambda: step_queue.waiting() == 1)  # 1 is in line behind this run
            raise RuntimeError("a rerun")

    def body(i):
        with pytest.raises(RuntimeError) if i == 0 else contextlib.nullcontext():
            outer(i)

    for t in run_in_threads(2, body):
        t.join(timeout=10)
    assert order == [("inner", 0), ("outer", 0), ("inner", 1), ("outer", 1)]
    assert step_queue.waiting() == 0


def test_outside_a_replica_runs_overlap_and_nothing_waits():
    """A plain `streamlit run main.py` (no variable): no line, so a second run starts while the first
    is still inside, and nothing is ever counted as waiting."""
    assert not step_queue.IN_LINE
    both_inside = threading.Barrier(2, timeout=5)  # breaks (raises) unless both runs are inside at once
    met = []

    @step_queue.one_at_a_time
    def stage(i):
        both_inside.wait()
        met.append(step_queue.waiting())

    for t in run_in_threads(2, stage, arrived=None):
        t.join(timeout=10)
    assert met == [0, 0]


def test_a_callback_outside_the_line_counts_the_running_stage(in_line):
    """A Step's click callback runs before its stage and outside the line: while one stage runs and
    nobody waits behind it, the callback sees 1 (the server is busy), the stage itself 0."""
    inside, release, seen = threading.Event(), threading.Event(), {}

    @step_queue.one_at_a_time
    def stage(i):
        seen["stage"] = step_queue.waiting()
        inside.set()
        release.wait(timeout=5)

    t = threading.Thread(target=stage, args=(0,))
    t.start()
    assert inside.wait(timeout=5)
    seen["callback"] = step_queue.waiting()
    release.set()
    t.join(timeout=10)
    assert seen == {"stage": 0, "callback": 1} and step_queue.waiting() == 0
