"""The browser side of "Serve the class": two components (code in ``frontend/``, served by the app's route).

- ``stream_box``: the student's request (``frontend/serve_stream.js``). A Send set here (``send``) is POSTed once by
  the browser, which then streams the request's tokens from the engine and writes them with the request's own TTFT,
  gaps (ITL) and TPOT as they come: no rerun per token. Its end, and any other POST's answer (``post``: simulated
  classmates, the engine's settings), come back as the component's values.
- ``pulse``: the room's state from the engine's pulse (``frontend/serve_pulse.js``), which reruns only the fragment
  that draws the batch, at most 4 times a second while the engine works and never while it is idle.
"""

from __future__ import annotations

import secrets

import streamlit as st

from ui.serve_class import keys
from ui.static import loader

CSS = """
.serve-root { font-size: 1rem; }
.serve-root .serve-status { color: #31333f; margin-bottom: 0.4em; }
.serve-root .serve-text { white-space: pre-wrap; word-break: break-word; font-family: "Source Code Pro", monospace;
  background: #f6f7f9; border: 1px solid #d6d9df; border-radius: 0.4em; padding: 0.6em 0.8em; min-height: 3.2em;
  margin: 0; }
.serve-root .serve-numbers { margin-top: 0.4em; font-variant-numeric: tabular-nums; }
"""
_stream = st.components.v2.component(
    "explainer_serve_stream", js=loader("serve_stream.js"), css=CSS, isolate_styles=False
)
_pulse = st.components.v2.component("explainer_serve_pulse", js=loader("serve_pulse.js"), isolate_styles=False)


def send(text: str, new_tokens: int) -> None:
    """Have the browser send this request at the stream box's next drawing (once: a new nonce)."""
    st.session_state[keys.SERVE_SEND] = {"nonce": secrets.token_hex(8), "text": text, "new_tokens": new_tokens}
    st.session_state[keys.SERVE_FINISHED] = None
    st.session_state[keys.SERVE_RESTARTED] = False  # said until this session sends again


def post(action: str, body: dict) -> None:
    """Have the browser POST ``body`` to the engine's route ``action`` (``simulate``, ``settings``) once: the page
    runs again at once, since the stream box that makes it may already be drawn above the control."""
    st.session_state[keys.SERVE_POST] = {"nonce": secrets.token_hex(8), "action": action, "body": body}
    st.rerun()


def take_finished() -> None:
    """Note the end of this session's request from the stream box's value before anything is drawn (the Send button
    above the box is drawn enabled in the run its end triggered)."""
    ss = st.session_state
    state = ss.get(keys.SERVE_STREAM)
    finished = state.get("finished") if isinstance(state, dict) else None
    if isinstance(finished, dict) and ss[keys.SERVE_SEND] is not None and ss[keys.SERVE_FINISHED] is None:
        ss[keys.SERVE_FINISHED] = finished


def busy() -> bool:
    """Whether this session's last Send has not ended yet."""
    ss = st.session_state
    return ss[keys.SERVE_SEND] is not None and ss[keys.SERVE_FINISHED] is None


def stream_box(idle: str) -> str | None:
    """Draw the request's live text and numbers (``idle``: what it says before any Send); returns the refusal of
    the last POST, if one was refused."""
    ss = st.session_state
    result = _stream(
        data={"send": ss[keys.SERVE_SEND], "post": ss[keys.SERVE_POST], "idle": idle, "busy": busy()},
        key=keys.SERVE_STREAM,
        on_finished_change=lambda: None,
        on_posted_change=lambda: None,
    )
    finished = getattr(result, "finished", None) if result is not None else None
    if isinstance(finished, dict) and ss[keys.SERVE_SEND] is not None and ss[keys.SERVE_FINISHED] is None:
        ss[keys.SERVE_FINISHED] = finished
    posted = getattr(result, "posted", None) if result is not None else None
    pending = ss[keys.SERVE_POST]
    if isinstance(posted, dict) and pending is not None and posted.get("nonce") == pending["nonce"]:
        ss[keys.SERVE_POST] = None
        return posted.get("error")
    return None


def pulse(code: str | None, epoch_only: bool = False) -> dict | None:
    """The room's state (``serve.engine_state``) from the engine's pulse: a class's (``code``) or this browser's
    own; the last one this session saw when something else ran it. ``epoch_only``: run only when the engine
    restarted (a student's page, which draws no batch)."""
    ss = st.session_state
    last = ss[keys.SERVE_STATE]
    seen = f"{last['epoch']}:{last['version']}" if last else None
    data = {"code": code, "seen": seen, "epoch_only": epoch_only}
    result = _pulse(data=data, key=keys.SERVE_PULSE, on_pulse_change=lambda: None)
    got = getattr(result, "pulse", None) if result is not None else None
    if isinstance(got, dict) and isinstance(got.get("state"), dict):
        if last and last["epoch"] != got.get("epoch"):
            ss[keys.SERVE_RESTARTED] = True
        ss[keys.SERVE_STATE] = {**got["state"], "epoch": got.get("epoch"), "version": got.get("version")}
    return ss[keys.SERVE_STATE]
