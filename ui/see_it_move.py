"""The "See it move" page's runs: the frames once per prompt, the video once per prompt (shared,
plain data; the shipped model is read-only)."""

from __future__ import annotations

import streamlit as st

from core.decode.see_it_move import Frame, frames
from core.viz.see_it_move_video import export_bytes
from ui.models import model, tokenizer
from ui.page import followable

SEE_PROMPT = "see.prompt"  # str: the prompt "See it move" runs to the context window

SEE_REDUCE_MOTION = "see.reduce_motion"  # bool: jump between frames instead of sliding

SEE_ANIMATION = "see.animation"

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    SEE_PROMPT: "User: Hello, my name is Mira",
    SEE_REDUCE_MOTION: False,
}
# The page's settings (core.lesson.pages.PAGES["see_it_move"]) -> their session keys.
SETTINGS = {
    "reduce_motion": SEE_REDUCE_MOTION,
}


@st.cache_data(show_spinner="Decoding to the end of the context window…", max_entries=32)
def run(prompt: str) -> list[Frame]:
    """``core.decode.see_it_move.frames`` on the shipped model."""
    return frames(model(), tokenizer(), prompt)


@st.cache_data(show_spinner="Drawing the video, frame by frame…", max_entries=8)
def video(prompt: str) -> tuple[bytes, str]:
    """The animation as a video file's bytes and name (``core.viz.see_it_move_video``)."""
    return export_bytes(run(prompt))


snapshot, show = followable("see_it_move", SETTINGS, DEFAULTS)  # the page you can follow (ui.session)
