"""The handout download: the running lesson's stops (or, without a lesson, the pages this session
drew) with each figure as the learner left it, and the exercises tried (``core.lesson.handout`` writes
the HTML). Streamlit glue: figures are kept by ``ui.page.chart`` under the slots set here each run.

The file is built only when the button is pressed (a deferred ``st.download_button``: the ~5 MB
document is not made on every rerun). That build runs outside the script's thread, so it reads a
snapshot of this session's state taken when the button was drawn, never ``st.session_state``.
"""

from __future__ import annotations

import re

import streamlit as st

from core.decode import session_view, two_speeds
from core.decode import settings as decode_settings
from core.lesson.handout import HandoutStop, build_handout, lesson_stops
from core.lesson.pages import PAGES
from core.model.tokenizer import token_labels
from core.viz.attention import fig_attention
from core.viz.two_speeds import fig_two_speeds
from ui import frame, models, practice_saved
from ui import page as page_ui
from ui.decode import keys as decode_keys
from ui.frame import TITLES
from ui.lesson import keys as lesson_keys

DECODE_TITLE = TITLES["decode"]
# What a handout is made of (read from session state into the snapshot).
NEEDED = (
    lesson_keys.LESSON,
    lesson_keys.LESSON_NAME,
    lesson_keys.LESSON_STOP,
    page_ui.HANDOUT_FIGURES,
    practice_saved.PRACTICE_TALLY,
    decode_keys.DECODE_SESSION,
    decode_keys.DECODE_LAYER,
    decode_keys.DECODE_HEAD,
)


def stop_title(lesson, k: int) -> str:
    return PAGES[lesson.stops[k].page].title


def decode_figure(ss, tok):
    """The decode stage's attention heatmap for the handout, built here from the session's own
    attention rows (the stage draws in the browser): ``core.viz.fig_attention`` of the layer and
    head on screen, or None before a Prefill. ``ss``: session state or a snapshot of it."""
    sess = ss.get(decode_keys.DECODE_SESSION)
    if sess is None:
        return None

    head = ss.get(decode_keys.DECODE_HEAD)
    index = None if head == decode_settings.MEAN_HEADS else int(head)
    layer = int(ss.get(decode_keys.DECODE_LAYER))
    att = session_view.attention_matrix(sess, layer, index)
    where = "prefill" if sess.n_steps == 0 else f"decode step {sess.n_steps}"
    who = "mean over heads" if index is None else f"head {index}"
    title = f"Layer {layer}, {who}, {where}: the attention as you left it"
    return fig_attention(att, token_labels(tok, sess.consumed), sess.passes[-1][0].shape[1], title)


SPEEDS_TITLE = "Two speeds, one model: your decode request"
SPEEDS_TEXT = (
    "Ch. 19's two-phase figure drawn from your own request on the decode page: the prefill's one parallel "
    "pass, then one token per step (the engine clock's times)."
)


def two_speeds_stop(ss, tok) -> HandoutStop | None:
    """The decode request's two speeds (``core.viz.two_speeds``) as a handout stop, or None before
    its first Step. ``ss``: session state or a snapshot of it."""
    sess = ss.get(decode_keys.DECODE_SESSION)
    passes = None if sess is None else two_speeds.from_session(sess, tok)
    return None if passes is None else HandoutStop(SPEEDS_TITLE, SPEEDS_TEXT, fig_two_speeds(passes))


def keep_decode_stop(k: int) -> None:
    """Leaving decode stop ``k``: keep its heatmap as it is now (the next stop may prefill anew)."""
    fig = decode_figure(st.session_state, _decode_tokenizer(st.session_state))
    if fig is not None:
        st.session_state[page_ui.HANDOUT_FIGURES][("stop", k)] = fig


def snapshot() -> dict:
    """What the handout needs from this session, read now (the build runs later, off the script)."""
    ss = st.session_state
    snap = {k: ss.get(k) for k in NEEDED}
    snap[page_ui.HANDOUT_FIGURES] = dict(snap[page_ui.HANDOUT_FIGURES] or {})
    snap["tokenizer"] = _decode_tokenizer(ss)
    return snap


def _decode_tokenizer(ss):
    """The tokenizer of the decode request's model (a checkpoint chosen in the sidebar has its own)."""
    sess = ss.get(decode_keys.DECODE_SESSION)
    return models.tokenizer_for(sess.model_key.source if sess is not None else None)


def build(snap) -> str:
    """The handout (HTML) from a snapshot (``snapshot()``, or any mapping of session state with a
    ``tokenizer`` entry): the lesson's stops with their figures, else every page that drew one."""
    figures, lesson = snap[page_ui.HANDOUT_FIGURES], snap[lesson_keys.LESSON]
    tally = snap[practice_saved.PRACTICE_TALLY]
    attempts = tally.latest() if tally is not None else []
    decode = decode_figure(snap, snap["tokenizer"])
    speeds = two_speeds_stop(snap, snap["tokenizer"])
    if lesson is not None:
        now = snap[lesson_keys.LESSON_STOP]
        per_stop = {}
        for k, stop in enumerate(lesson.stops):
            fig = figures.get(("stop", k))
            if stop.page == "decode" and k == now:  # the stop on screen: the stage as it is now
                fig = decode or fig
            per_stop[k] = fig
        stops = lesson_stops(lesson, per_stop) + ([speeds] if speeds is not None else [])
        return build_handout(lesson.title, stops, attempts, lesson.description)
    stops = []
    for _, title, _ in frame.PAGES:
        fig = decode if title == DECODE_TITLE else figures.get(("page", title))
        if fig is not None:
            stops.append(HandoutStop(title, "", fig))
        if title == DECODE_TITLE and speeds is not None:
            stops.append(speeds)
    intro = "The figures as you left them on each page you opened, and the exercises you tried."
    return build_handout("Inference, efficiently: your session", stops, attempts, intro)


def file_name(snap) -> str:
    name = snap[lesson_keys.LESSON_NAME] or ("my-lesson" if snap[lesson_keys.LESSON] is not None else "session")
    return f"handout-{re.sub(r'[^a-z0-9-]+', '-', name.lower())}.html"


def download_button(key: str) -> None:
    """ "Download handout": one self-contained HTML file, made when pressed."""
    snap = snapshot()
    st.download_button(
        "Download handout",
        data=lambda: build(snap),
        file_name=file_name(snap),
        mime="text/html",
        key=key,
        on_click="ignore",
        icon=":material/download:",
        help="One HTML file that opens offline: the lesson's stops with your figures, and the exercises you tried "
        "with your answers and the right ones.",
    )
