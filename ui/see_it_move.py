"""The "See it move" page's runs: the frames once per prompt, the video once per prompt (shared,
plain data; the shipped model is read-only)."""

from __future__ import annotations

import streamlit as st

from core.decode.see_it_move import Frame, frames
from core.viz.see_it_move_video import export_bytes
from ui.models import model, tokenizer


@st.cache_data(show_spinner="Decoding to the end of the context window…", max_entries=32)
def run(prompt: str) -> list[Frame]:
    """``core.decode.see_it_move.frames`` on the shipped model."""
    return frames(model(), tokenizer(), prompt)


@st.cache_data(show_spinner="Drawing the video, frame by frame…", max_entries=8)
def video(prompt: str) -> tuple[bytes, str]:
    """The animation as a video file's bytes and name (``core.viz.see_it_move_video``)."""
    return export_bytes(run(prompt))
