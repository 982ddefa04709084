"""Serve the class: every student's own request through one engine, streamed live; the room watches the batch."""

import streamlit as st

from serve.engine_service import NEW_TOKENS, PROMPT_MAX_CHARS
from ui.classroom import identity, serve_predict
from ui.page import text_box, title
from ui.present import presenter_mode
from ui.serve_class import client, controls, keys, restart
from ui.serve_class.batch import batch_view

title("serve_class")
if not presenter_mode():
    st.caption(
        'Ch. 30: "Serving many requests introduces another layer: scheduling can reuse context and overlap work '
        "while making one user's wait worse.\" Here the requests are yours: one engine serves everyone in the room "
        "(continuous batching over one paged KV cache; Orca, vLLM), a step at a time."
    )
role = identity.role()
code = identity.code() if role else None
state = st.session_state[keys.SERVE_STATE]
if state and state.get("model"):
    st.caption(f"The engine runs {state['model']}. Times are this server's, measured as it serves.")


def request_box() -> None:
    """The student's prompt, new tokens and Send; the request's live text and numbers under them."""
    client.take_finished()
    with st.form("serve-send", border=False):
        text = text_box(st, "Your prompt", limit=PROMPT_MAX_CHARS, area=True, key=keys.SERVE_PROMPT, height=90,
                        persist_state="session")  # fmt: skip
        new = st.slider("New tokens", *NEW_TOKENS, key=keys.SERVE_NEW_TOKENS, persist_state="session")
        pressed = st.form_submit_button("Send", type="primary", icon=":material/send:", disabled=client.busy())
    if pressed and text is not None:
        if not text.strip():
            st.warning("Type a prompt first: the engine needs at least one token to start from.")
        else:
            client.send(text, int(new))
    refused = client.stream_box("Press Send: your tokens appear here as the engine makes them.")
    if refused:
        st.error(refused, icon=":material/block:")
    finished = st.session_state[keys.SERVE_FINISHED]
    if finished and finished.get("kind") == "refused":
        st.error(finished["error"], icon=":material/block:")


@st.fragment
def room_view() -> None:
    """The engine's batch, blocks and timelines, redrawn on each pulse (this fragment only)."""
    now = client.pulse(code)
    if st.session_state[keys.SERVE_RESTARTED]:
        st.warning(restart.RESTARTED, icon=":material/restart_alt:")
    batch_view(now, key=keys.SERVE_TIMELINE)


@st.fragment
def restarts() -> None:
    """A student's page: the engine's pulse reruns this only when the engine restarted, to say so."""
    client.pulse(code, epoch_only=True)
    if st.session_state[keys.SERVE_RESTARTED]:
        st.warning(restart.RESTARTED, icon=":material/restart_alt:")


if role == identity.DISPLAY:
    room_view()
else:
    left, right = st.columns((2, 3)) if role != "student" else (st.container(), None)
    with left:
        request_box()
    if right is not None:
        with right:
            if role == "teacher" or role is None:
                controls.engine_form((state or {}).get("settings"))
                chunked = ((state or {}).get("settings") or {}).get("chunked_prefill", True)
                ask = (lambda row: serve_predict.ask_first(row, chunked)) if role == "teacher" else None
                controls.load_buttons(ask)
    if role != "student":
        st.divider()
        room_view()
    else:
        restarts()
        st.caption("Your request is yours: classmates see its timeline on the projector, never its text.")
