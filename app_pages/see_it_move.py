"""Ch. 19 "See it move": the four moments played from the real model's run, and a video for slides."""

import streamlit as st

from core.viz.see_it_move import fig_see_it_move
from ui import see_it_move
from ui.models import shipped_only_note
from ui.page import chart_in, refuse, text_box, title
from ui.present import beside, presenter_mode

title("see_it_move")
shipped_only_note("see_it_move")
controls, right = beside()  # presenter mode: the text and prompt left, the animation right, on the first screen
controls.caption(
    "Ch. 19 “See it move”: the counter climbs while attention redraws every earlier link from scratch; the violet "
    "shelf of stored keys and values stops that climb at one new box per token; the shelf runs into the wall of "
    "the context window; a 32-bit number shrinks to 8 so four times as much fits. Computed from the shipped "
    "model decoding this prompt to the end of its window. Play ▶, Pause, or drag the frame slider."
)
a, b = [controls] * 2 if presenter_mode() else controls.columns([3, 1], vertical_alignment="bottom")
prompt = text_box(a, "Prompt", limit=2_000, key=see_it_move.SEE_PROMPT, persist_state="session")
reduce = b.toggle(
    "Reduce motion",
    key=see_it_move.SEE_REDUCE_MOTION,
    persist_state="session",
    help="Jump from frame to frame instead of sliding (for viewers sensitive to motion).",
)
if prompt is None:
    st.stop()
try:
    frames = see_it_move.run(prompt)
except ValueError as err:
    refuse(err)
    st.stop()
chart_in(right, fig_see_it_move(frames, reduce), key=see_it_move.SEE_ANIMATION)
if st.button("Make a video for slides", icon=":material/movie:"):
    data, name = see_it_move.video(prompt)
    kind = "video/mp4" if name.endswith(".mp4") else "image/gif"
    st.download_button(
        f"Download {name} ({len(data) / 1024:,.0f} KiB)", data, file_name=name, mime=kind, on_click="ignore"
    )
