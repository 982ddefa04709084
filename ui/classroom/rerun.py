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
changed since) is dropped, and with none left nothing is asked."""

from __future__ import annotations

from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState, get_script_run_ctx


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
