"""What the teacher (or a student alone) changes on the engine, live: chunked prefill and the per-step token budget
prefill chunks and decode tokens share (Sarathi-Serve; vLLM's ``max_num_batched_tokens``), the prefix cache, the
requests running at once, a shared system prompt, a long document (a stall to watch) and simulated classmates.
Each change is one POST the browser makes (``ui.serve_class.client.post``); the engine takes it at its next step."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict

import streamlit as st

from core.serving.engine import BUDGET_RANGE, RUNNING_RANGE, EngineSettings
from serve.engine_routes import SIMULATE_MAX
from serve.engine_service import PROMPT_MAX_CHARS
from ui.page import text_box
from ui.serve_class import client, keys

BUDGET_MAX_SHOWN = 512  # the slider's end (the route takes up to BUDGET_RANGE[1])


def engine_form(settings: dict | None) -> None:
    """The settings form, filled with the engine's current ``settings`` (its defaults before the first pulse)."""
    s = settings or asdict(EngineSettings())
    with st.form("serve-engine-settings", border=True):
        st.markdown("**The engine** (changes apply from its next step)")
        a, b = st.columns(2)
        chunked = a.toggle("Chunked prefill", value=s["chunked_prefill"],
                           help="On: a long prompt's prefill is cut into chunks that share each step's token budget "
                           "with everyone's decode tokens. Off: a prefill runs whole in one step.")  # fmt: skip
        caching = b.toggle("Prefix cache", value=s["prefix_caching"],
                           help="Whole blocks of 16 tokens that match an earlier request's from the start are read, "
                           "not computed again.")  # fmt: skip
        budget = a.slider("Token budget per step (tokens)", BUDGET_RANGE[0], BUDGET_MAX_SHOWN,
                          min(s["token_budget"], BUDGET_MAX_SHOWN), step=8)  # fmt: skip
        running = b.slider("Requests running at once", RUNNING_RANGE[0], 32, min(s["max_running"], 32))
        system = text_box(st, "Shared system prompt (put before every later request)", limit=PROMPT_MAX_CHARS,
                          area=True, height=68)  # fmt: skip
        if st.form_submit_button("Apply to the engine", type="primary"):
            if budget < running:
                st.error(f"A budget of {budget} tokens cannot give {running} running requests a token each.")
            else:
                body = {"chunked_prefill": chunked, "token_budget": budget, "prefix_caching": caching,
                        "max_running": running}  # fmt: skip
                if system is not None:
                    body["system_prompt"] = system
                client.post("settings", body)


def load_buttons(ask_first: Callable | None = None) -> None:
    """Simulated classmates and a long document: requests to watch the engine with. ``ask_first(row)``: a class's
    teacher's question before the document (``ui.classroom.serve_predict``), True when it drew the document's
    buttons itself."""
    row = st.container(horizontal=True, vertical_alignment="bottom")
    n = row.number_input("Simulated classmates", 1, SIMULATE_MAX, key=keys.SERVE_SIMULATE, width=180,
                         persist_state="session")  # fmt: skip
    if row.button("Add classmates", icon=":material/group_add:"):
        client.post("simulate", {"n": int(n), "new_tokens": 24})
    if ask_first is not None and ask_first(row):
        return
    if row.button("Add a long document", icon=":material/description:",
                  help="A request as long as the model's context: without chunked prefill, everyone's next token "
                  "waits for its prefill."):  # fmt: skip
        client.post("settings", {"long_document": True})
