"""Predict first on Serve the class (issue 56): before the long document goes to the engine, the teacher asks
the class what will happen to everyone's stream; the reveal sends the document, so the class sees the answer
happen on the projector's timeline. The answer follows the engine's chunked-prefill setting: off, every stream
stops while the document's prefill runs in one step; on, the prefill is cut into chunks that share each step's
token budget with everyone's decode token, so the streams slow a little and keep going (Sarathi-Serve)."""

from __future__ import annotations

import dataclasses

import streamlit as st

from core.classroom.plan import Question
from ui.classroom import keys as class_keys
from ui.classroom import pose
from ui.classroom import question as class_question
from ui.serve_class import client

TEXT = (
    "A long document (as long as the model's context) is about to join the engine while your requests stream. "
    "What happens to everyone's stream?"
)
OPTIONS = ("Every stream stops for a while", "Every stream slows a little", "Nothing changes")
EXPLAIN = {
    False: "Chunked prefill is off: the document's whole prefill is one engine step, and everyone's next token waits "
    "for it (the long gap on every timeline).",
    True: "Chunked prefill is on: the document's prefill is cut into chunks that share each step's token budget "
    "with everyone's decode token, so every step is a little longer and no stream stops.",
}


def question(chunked: bool, n: int, revealed: bool = False) -> Question:
    """The class's question before long document ``n``, for an engine with chunked prefill ``chunked``; its answer
    and explanation only once ``revealed``."""
    base = Question(id=f"serve:long-document:{n}", kind="serve", text=TEXT, options=OPTIONS)
    if not revealed:
        return base
    return dataclasses.replace(base, revealed=True, answer=1 if chunked else 0, explain=EXPLAIN[chunked])


def ask_first(row, chunked: bool) -> bool:
    """The teacher's "Ask the class first" beside *Add a long document*, and the question's buttons once posed;
    whether the question flow took the document over (the plain button is then not drawn)."""
    posed = pose.posed_now()
    if posed is not None and posed.id.startswith("serve:long-document:"):
        n = int(posed.id.rsplit(":", 1)[1])
        if not posed.revealed:
            row.caption("Asked: the count is above the page.")
            row.button("Reveal and send the document", type="primary", icon=":material/description:",
                       on_click=_reveal, args=(chunked, n))  # fmt: skip
            return True
        with st.container(border=True):  # the class's histogram beside the buttons' row would squeeze both
            st.caption(f"{class_question.class_answers(posed)} {posed.explain}")
            st.button("Done", on_click=pose.put, args=(None,), help="Take the question off the class's screens")
        return True
    if row.toggle("Ask the class first", key=class_keys.CLASS_SERVE_ASK, persist_state="session",
                  help="Before the document goes, the class predicts what happens to everyone's stream; the "
                  "reveal sends it."):  # fmt: skip
        row.button("Ask about a long document", icon=":material/quiz:", on_click=_ask, args=(chunked,))
        return True
    return False


def _ask(chunked: bool) -> None:
    st.session_state[class_keys.CLASS_SERVE_ASKED] += 1
    pose.put(question(chunked, st.session_state[class_keys.CLASS_SERVE_ASKED]))


def _reveal(chunked: bool, n: int) -> None:
    pose.put(question(chunked, n, revealed=True))
    client.post("settings", {"long_document": True})
