"""Class mode's two browser components (components v2, code in ``frontend/``, served by the app's route):

- ``listen``: the class's event stream (``frontend/class_events.js``). Each pulse (the plan's version and the
  counts, as data) becomes the component's trigger value, which reruns only the fragment that drew it: a page in a
  class runs when the class changes, never on a timer (only while it holds what the store refused). Drawn once per
  page, in the fragment that must follow. A page that shows no count watches the plan's version only: a classmate's
  join or answer does not rerun it.
- ``post``: one POST to a class route (``frontend/class_post.js``: open, join, pair, leave) whose answer sets this
  browser's cookie; the browser then opens the class's address. A refusal comes back as the component's value.
"""

from __future__ import annotations

import json
import secrets

import streamlit as st

from ui.classroom import keys as class_keys
from ui.static import loader

RETRY_MS = 2000  # a page holding what the store refused tries again this often (ms), until the store takes it
_listen = st.components.v2.component("explainer_class_events", js=loader("class_events.js"), isolate_styles=False)
_post = st.components.v2.component("explainer_class_post", js=loader("class_post.js"), isolate_styles=False)


def listen(code: str, watch: tuple[str, ...] | None = None, retry: bool = False) -> dict | None:
    """Follow class ``code``'s event stream from here: the pulse that triggered this run (a dict: ``version``,
    ``students``, ``answered``, ``question``, ``round``; or ``unavailable`` / ``ended``), or None when something
    else ran it. ``watch``: the pulse's fields whose change reruns this page (with ``unavailable`` and ``ended``;
    None: any change). ``retry``: this page holds what the store could not take (an answer, the console's plan):
    the browser runs it again in ``RETRY_MS`` with the last pulse (and again while each run says so), as no pulse
    comes while the store reads but does not write. Call it once per page, in the fragment (or the full run) that
    shows the class."""
    ss = st.session_state
    # The browser sends only what this session has not run for (a new one, after a reload or a replica's restart,
    # has run for none, so the stream's latest pulse runs it once): the pulse running it now counts as run for.
    ran_for(peek())
    # ``run``: new each run, so the browser knows a run drew the listener (it holds later pulses until then).
    data = {"code": code, "seen": ss.get(class_keys.CLASS_PULSE_SEEN), "run": secrets.token_hex(4)}
    if watch is not None:
        data["watch"] = list(watch)
    if retry:  # a new value each run: the browser's timer starts afresh
        ss[class_keys.CLASS_RETRIES] += 1
        data.update(retry=ss[class_keys.CLASS_RETRIES], retry_ms=RETRY_MS)
    result = _listen(data=data, key=class_keys.CLASS_LISTENER, on_pulse_change=lambda: None)
    pulse = getattr(result, "pulse", None) if result is not None else None
    if not isinstance(pulse, dict):
        return None
    ss[class_keys.CLASS_PULSE_SEEN] = json.dumps(pulse, separators=(",", ":"))  # as the stream wrote it
    return pulse


def peek() -> dict | None:
    """The pulse that triggered this run, read before the listener is drawn (None: something else ran it). A run
    that will rerun the whole page decides it from here: drawn, the listener would hand the browser's next pulse to
    this fragment's page while the whole page moves on (``frontend/class_events.js``)."""
    state = st.session_state.get(class_keys.CLASS_LISTENER)
    pulse = state.get("pulse") if isinstance(state, dict) else None
    return pulse if isinstance(pulse, dict) else None


def ran_for(pulse: dict | None) -> None:
    """Count ``pulse`` as run for: the listener, drawn next with it as ``seen``, does not hand it over again (a run
    that reran the whole page for it would otherwise be followed by a second run for the same pulse)."""
    if pulse is not None:
        st.session_state[class_keys.CLASS_PULSE_SEEN] = json.dumps(pulse, separators=(",", ":"))  # as streamed


def post(action: str, body: dict, then: dict[str, str]) -> str | None:
    """POST ``body`` to the class route ``action`` once, then open this page with the query ``then`` (``"{code}"``
    stands for the class code the route answers); returns the route's refusal, when it refused."""
    ss = st.session_state
    pending = ss.get(class_keys.CLASS_POSTING)
    if pending is None or pending["action"] != action or pending["body"] != body:
        pending = ss[class_keys.CLASS_POSTING] = {"action": action, "body": body, "nonce": secrets.token_hex(8)}
    result = _post(data={**pending, "then": then}, key=f"{class_keys.CLASS_POST}-{action}")
    refused = getattr(result, "refused", None) if result is not None else None
    if isinstance(refused, dict) and refused.get("nonce") == pending["nonce"]:
        ss[class_keys.CLASS_POSTING] = None
        return str(refused.get("error") or "refused")
    return None
