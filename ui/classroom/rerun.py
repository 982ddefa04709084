"""Rerunning one of this session's fragments from another one's run (streamlit 1.67 internals).

Why: a following student's poll (``ui.classroom.strip``) notices the teacher's Step; a full app run
to show it redrew the whole decode page for every student (page, sidebar, the two-speeds figure
below the stage) and took most of a follow's time under a class's load. Only the stage changes (the
poll draws the class line itself), so the poll asks for the stage's fragment alone, as
``st.rerun(scope="fragment")`` does for the calling fragment
(``streamlit.commands.execution_control.rerun``): a ``RerunData`` whose ``fragment_id_queue`` names
it, marked fragment-scoped. The browser is told which fragments run
(``new_session.fragment_ids_this_run``) and keeps everything else on the page as it is.

``st.rerun`` takes another fragment only by its key and only from a widget callback, hence the
internals here, kept in this one module; a fragment id no longer in the session's storage (the page
changed since) is dropped, and with none left nothing is asked.

A run's elements can be lost on their way to the browser (``deliver_before_stopping``): the stage's
run drawn, its session noting the step, and the browser never told (6–8 of 790 follows in
``bench.class_mode`` before it)."""

from __future__ import annotations

import asyncio
import threading

from streamlit import runtime
from streamlit.runtime.scriptrunner import ScriptRunner, ScriptRunnerEvent
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState, get_script_run_ctx

HAND_OVER_S = 5.0  # the longest a finished run waits for the event loop to take its messages (s)
_ENDS = {
    ScriptRunnerEvent.SCRIPT_STOPPED_WITH_SUCCESS,
    ScriptRunnerEvent.FRAGMENT_STOPPED_WITH_SUCCESS,
    ScriptRunnerEvent.SCRIPT_STOPPED_WITH_COMPILE_ERROR,
}
_POLLS = "_class_polls"  # on a ScriptRunner whose runs wait: the poll fragments whose own runs do not


def this_fragment() -> str | None:
    """The id of the fragment whose run calls this (None: outside a fragment, or no script run)."""
    try:
        return ThreadState.get().fragment_id
    except RuntimeError:  # no script run on this thread (a bare test)
        return None


def known(fragment_id: str | None) -> bool:
    """Whether ``fragment_id`` is registered in this session now (drawn by its last full run)."""
    ctx = get_script_run_ctx(suppress_warning=True)
    return bool(fragment_id) and ctx is not None and ctx.fragment_storage.contains(fragment_id)


def rerun_fragments(ids: list[str | None]) -> bool:
    """Ask for a run of these fragments alone once the calling fragment's run ends (it then ends
    "early for rerun"). Only from a fragment's own run: inside a full run the request would cut that
    run short (the page below is drawn by it anyway). Returns whether anything was asked."""
    ctx = get_script_run_ctx(suppress_warning=True)
    queue = list(dict.fromkeys(i for i in ids if known(i)))
    if ctx is None or ctx.script_requests is None or not ctx.fragment_ids_this_run or not queue:
        return False
    return ctx.script_requests.request_rerun(
        RerunData(
            query_string=ctx.query_string,
            page_script_hash=ctx.page_script_hash,
            fragment_id_queue=queue,
            is_fragment_scoped_rerun=True,
            cached_message_hashes=ctx.cached_message_hashes,
            context_info=ctx.context_info,
        )
    )


def deliver_before_stopping(redrawn_anyway: bool = False) -> None:
    """Make this run's ScriptRunner wait, at the end of each run that drew more than a poll, until the
    session's event loop has taken every message the run sent; a no-op outside a server (AppTest).
    ``redrawn_anyway``: the calling fragment is a poll that draws everything again every 0.5 s (the
    class strip): its own runs do not wait.

    Why (streamlit 1.67): a ScriptRunner hands each message to ``AppSession`` through
    ``call_soon_threadsafe`` (``AppSession._on_scriptrunner_event``) and, once its last run ends with
    no request pending, stops accepting reruns (``ScriptRequests.on_scriptrunner_ready``: STOP). A
    browser request the event loop handles in that gap (the strip's 0.5-s timer) gets a new
    ScriptRunner (``AppSession.request_rerun``: ``request_rerun`` returned False), and every event of
    the old one still queued is then dropped (``_handle_scriptrunner_event_on_event_loop``: "sender is
    not self._scriptrunner"): a stage run's elements, Step drawn, never sent. Waiting here keeps the
    runner taking reruns until its messages are in the session's browser queue; a fragment run
    starting after that keeps other fragments' deltas (``ForwardMsgQueue.clear``), and a full run
    draws the stage again."""
    ctx = get_script_run_ctx(suppress_warning=True)
    runner = getattr(getattr(ctx, "_enqueue", None), "__self__", None)  # ScriptRunner._enqueue_forward_msg
    if not isinstance(runner, ScriptRunner) or not runtime.exists():
        return
    polls = getattr(runner, _POLLS, None)
    if polls is None:
        polls = set()
        setattr(runner, _POLLS, polls)
        loop = runtime.get_instance()._get_async_objs().eventloop  # the loop every AppSession event runs on
        if not isinstance(loop, asyncio.AbstractEventLoop) or not loop.is_running():
            return  # AppTest: a mocked runtime, no loop; the test reads the run's messages directly
        runner.on_event.connect(hand_over(loop, polls), weak=False)  # a weak link would drop the closure at once
    if redrawn_anyway and (fragment := this_fragment()):
        polls.add(fragment)


def hand_over(loop, polls: set[str] | frozenset[str] = frozenset()):
    """A ScriptRunner ``on_event`` receiver: at the end of a run, unless it ran only fragments in
    ``polls``, wait (≤ ``HAND_OVER_S`` s) until ``loop`` has run every callback queued before it (the
    run's messages, queued by ``AppSession``'s receiver, connected first: receivers run in the order
    they connected); at SHUTDOWN, disconnect."""

    def receiver(sender, event=None, run_descriptor=None, **_) -> None:
        if event in _ENDS:
            ran = set(run_descriptor.fragment_ids) if run_descriptor is not None else set()
            if ran and ran <= polls:  # a poll alone: lost, it is drawn again by the next one
                return
            if not loop.is_running():  # the server is stopping: nothing would take them
                return
            taken = threading.Event()
            try:
                loop.call_soon_threadsafe(taken.set)
            except RuntimeError:  # the loop is closed: the server is stopping
                return
            taken.wait(HAND_OVER_S)
        elif event is ScriptRunnerEvent.SHUTDOWN:
            sender.on_event.disconnect(receiver)

    return receiver
