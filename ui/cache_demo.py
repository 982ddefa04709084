"""The cache page's runs, computed once per distinct text and shared (the shipped model is read-only;
each result is plain data): two speeds, the reuse checks, a chat transcript continued."""

from __future__ import annotations

import streamlit as st

from core.decode.cache_not import ChatTurn, ReuseCheck, continue_chat, reuse_checks
from core.decode.two_speeds import FIVE_POSITIONS_PROMPT, REPEATS, Pass, noisy_steps, run
from core.evaluate.machine_speed.timing import clock
from core.viz.two_speeds import fig_two_speeds
from ui.models import model, tokenizer
from ui.page import chart, followable

CACHE_PROMPT = "cache.prompt"  # str: the two-speeds figure's prompt (five positions: Ch. 19's figure)

CACHE_TEXT = "cache.text"  # str: the reference text of the reuse checks

CACHE_EDITED = "cache.edited"  # str: the same text edited (Ch. 30 §30.4: 600 → 750 yuan)

CACHE_TRANSCRIPT = "cache.transcript"  # str: a stored chat transcript (a text record)

CACHE_TWO_SPEEDS = "cache.two_speeds"

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    CACHE_PROMPT: FIVE_POSITIONS_PROMPT,
    CACHE_TEXT: "User: The limit is 600 yuan.",
    CACHE_EDITED: "User: The limit is 750 yuan.",
    CACHE_TRANSCRIPT: "User: Hello, my name is Mira.\nAssistant: Hello Mira!\nUser: Is 620 yuan allowed?\nAssistant:",
}
# The page's settings (core.lesson.pages.PAGES["cache"]) -> their session keys.
SETTINGS = {
    "prompt": CACHE_PROMPT,
    "text": CACHE_TEXT,
}


@st.cache_data(show_spinner="Prefilling and stepping the shipped model…", max_entries=64)
def two_speeds(prompt: str, steps: int = 3) -> list[Pass]:
    """``core.decode.two_speeds.run`` on the shipped model, greedy, timed by ``timing.clock`` (this thread's CPU
    time while torch runs on one thread, as the app does: a pass waiting for a core on a busy server is not
    counted as its work)."""
    return run(model(), tokenizer(), prompt, steps, clock=clock()[0])


def two_speeds_chart(passes: list[Pass], key: str, present_max_px: int | None = None) -> None:
    """Ch. 19's two-speeds figure of ``passes`` (``two_speeds``) and how its times were taken."""
    chart(fig_two_speeds(passes), key=key, present_max_px=present_max_px)
    noisy = noisy_steps(passes)
    said = ""
    if noisy:
        steps = ", ".join(f"t+{i} ({passes[i].ms:.2f} ms)" for i in noisy)
        said = (
            f" This machine was busy: {'a decode step' if len(noisy) == 1 else 'decode steps'} {steps} measured "
            f"longer than the whole prefill before {'it' if len(noisy) == 1 else 'them'} ({passes[0].ms:.2f} ms), "
            "which computes more positions; that is another process taking the core, not decode's cost, so the "
            "figure writes “busy” there. Measure again when the machine is quiet."
        )
    st.caption(
        f"Each time is the median of {REPEATS} runs of the whole request, by {clock()[1]}. Compare them per "
        f"position: the prefill's one pass covers every prompt position, a decode step's covers one.{said}"
    )


@st.cache_data(show_spinner="Prefilling the text seven ways…", max_entries=32)
def checks(text: str, edited: str) -> list[ReuseCheck]:
    """``core.decode.cache_not.reuse_checks`` on the shipped model."""
    return reuse_checks(model(), tokenizer(), text, edited)


@st.cache_data(show_spinner="Prefilling the transcript…", max_entries=32)
def chat(transcript: str) -> ChatTurn:
    """``core.decode.cache_not.continue_chat`` on the shipped model."""
    return continue_chat(model(), tokenizer(), transcript)


snapshot, show = followable("cache", SETTINGS, DEFAULTS)  # the page you can follow (ui.session)
