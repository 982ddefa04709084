"""The cache page's runs, computed once per distinct text and shared (the shipped model is read-only;
each result is plain data): two speeds, the reuse checks, a chat transcript continued."""

from __future__ import annotations

import streamlit as st

from core.decode.cache_not import ChatTurn, ReuseCheck, continue_chat, reuse_checks
from core.decode.two_speeds import Pass, run
from ui.models import model, tokenizer


@st.cache_data(show_spinner="Prefilling and stepping the shipped model…", max_entries=64)
def two_speeds(prompt: str, steps: int = 3) -> list[Pass]:
    """``core.decode.two_speeds.run`` on the shipped model, greedy."""
    return run(model(), tokenizer(), prompt, steps)


@st.cache_data(show_spinner="Prefilling the text seven ways…", max_entries=32)
def checks(text: str, edited: str) -> list[ReuseCheck]:
    """``core.decode.cache_not.reuse_checks`` on the shipped model."""
    return reuse_checks(model(), tokenizer(), text, edited)


@st.cache_data(show_spinner="Prefilling the transcript…", max_entries=32)
def chat(transcript: str) -> ChatTurn:
    """``core.decode.cache_not.continue_chat`` on the shipped model."""
    return continue_chat(model(), tokenizer(), transcript)
