"""bench.step_profile's event-loop view: the main thread's samples sorted into blocked / idle / running.

The stacks are lines of a real ``py-spy record --idle --threads --format raw`` recording of a replica
while 40 sessions hammered Step (shortened in the middle: only the frames the sorting reads matter);
the sample counts are chosen here, so each share is known by hand."""

from bench.step_profile import EVENT_LOOP_PARTS, event_loop_shares

MAIN = "thread (3509): MainThread"
STARTING = (
    f"{MAIN};Runtime.handle_backmsg (streamlit/runtime/runtime.py:642);AppSession._create_scriptrunner "
    "(streamlit/runtime/app_session.py:788);ScriptRunner.start (streamlit/runtime/scriptrunner/script_runner.py:367);"
    "Thread.start (threading.py:969);Event.wait (threading.py:629);Condition.wait (threading.py:327)"
)
IDLE = (
    f"{MAIN};_run_server_loop (streamlit/web/bootstrap.py:156);BaseEventLoop._run_once "
    "(asyncio/base_events.py:1884);EpollSelector.select (selectors.py:468)"
)
SENDING = (
    f"{MAIN};BaseEventLoop._run_once (asyncio/base_events.py:1922);StarletteSessionClient._sender "
    "(streamlit/web/server/starlette/starlette_websocket.py:355);_SelectorSocketTransport.write "
    "(asyncio/selector_events.py:1057)"
)
SCRIPT = (
    "thread (4521): ScriptRunner.scriptThread;Thread._bootstrap (threading.py:1002);"
    "ScriptRunner._run_script (streamlit/runtime/scriptrunner/script_runner.py:961)"
)


def test_main_thread_samples_sorted_by_hand(tmp_path):
    stacks = tmp_path / "stacks.txt"
    lines = [f"{STARTING} 30", f"{IDLE} 45", f"{IDLE} 5", f"{SENDING} 20", f"{SCRIPT} 99", "a line without a count"]
    stacks.write_text("\n".join(lines) + "\n")
    # 30 blocked in Thread.start, 45 + 5 in epoll, 20 running; the script thread's 99 are not the event loop's.
    assert event_loop_shares(stacks) == list(zip(EVENT_LOOP_PARTS, [30, 50, 20], strict=True))


def test_a_selector_frame_above_the_leaf_is_not_idle(tmp_path):
    """Only an innermost epoll frame is waiting; Thread.start anywhere in the stack counts as blocked."""
    stacks = tmp_path / "stacks.txt"
    stacks.write_text(f"{IDLE};Handle._run (asyncio/events.py:80) 7\n{STARTING};Thread._wait (threading.py:1) 3\n")
    assert event_loop_shares(stacks) == list(zip(EVENT_LOOP_PARTS, [3, 0, 7], strict=True))
