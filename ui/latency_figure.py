"""The latency page's Figure 30.1 section: the figure for one request of the trace, its caption, and the
chapter's sentences about what the trace's numbers are (``core.serving.figure_30_1``)."""

from __future__ import annotations

import streamlit as st

from core.cost.kv_shape import KVShape
from core.serving.figure_30_1 import bytes_source, figure_30_1, notes
from core.serving.latency import RequestTrace
from core.viz.figure_30_1 import fig_figure_30_1
from ui import figures
from ui.page import chart, put_back, settings_now, show_settings

LAT_MEASURED = "lat.measured"

LAT_SOURCE = "lat.source"

LAT_N_NEW = "lat.n_new"

# The latency page's edited rows per trace (a list of row dicts), kept when the page is left: the editor's
# own state is dropped by streamlit whenever another page runs. A lesson stop on the page clears them.
LATENCY_EDITS = "lat.edits."  # + the trace's name

LAT_FIGURE_30_1 = "lat.figure_30_1"

LAT_FIGURE_REQUEST = "lat.figure_request"  # which request of several Figure 30.1 draws (its index)

LAT_TIMELINE_FIG = "lat.timeline_fig"

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    LAT_SOURCE: "Ch. 30 example",
    LAT_N_NEW: 12,
    LAT_MEASURED: None,
}
# The page's settings (core.lesson.pages.PAGES["latency"]) -> their session keys.
SETTINGS = {
    "source": LAT_SOURCE,
    "n_new": LAT_N_NEW,
}
# Objects computed with one model: back to their defaults when a session switches models.
MODEL_BOUND = (LAT_MEASURED,)


# Ch. 30 §30.2, the paragraph after the figure.
JOINS = (
    "Figure 30.1 joins the input and output timeline. The cache contains layer-specific numerical context, not "
    "previously written answer strings. It avoids old K/V recomputation, but the new query still interacts with "
    "retained context in ordinary full attention. Longer prefixes can therefore increase decode work even with "
    "caching."
)


def section(traces: list[RequestTrace], shape: KVShape, supplied: bool) -> None:
    """Figure 30.1 for one of ``traces`` (a choice when there are several), its bytes from M with ``shape``'s
    terms; ``supplied``: the traces were typed in (a teaching scenario), not measured here."""
    st.subheader("Figure 30.1, whole: what goes in, what the model holds, what comes out")
    pick = 0
    if len(traces) > 1:
        pick = st.selectbox(
            "Request drawn", range(len(traces)), format_func=lambda i: f"{i + 1}. {traces[i].name}",
            key=LAT_FIGURE_REQUEST,
        )  # fmt: skip
    t = traces[min(pick, len(traces) - 1)]
    cached = not t.name.endswith("(recompute)")  # the measured batch's second way keeps no cache
    columns = figure_30_1(t, shape, cached)
    chart(figures.figure(fig_figure_30_1, columns, f"{t.name}: {bytes_source(shape)}"), key=LAT_FIGURE_30_1)
    st.caption(JOINS)
    for note in notes(t, supplied, cached):
        st.caption(note)  # the chapter's words and this trace's numbers: no typed text


def snapshot():
    """The page's settings as this session has them (a class's plan carries them to followers)."""
    return settings_now("latency", SETTINGS)


def show(settings) -> None:
    """Show ``settings`` (a lesson stop's, a class's plan's) on the page, before it runs. The trace's edited rows
    go: the chapter's trace as a stop's note has it, not the class's edits of it."""
    for key in [key for key in st.session_state if str(key).startswith((LATENCY_EDITS, "lat.editor."))]:
        del st.session_state[key]
    show_settings(SETTINGS, DEFAULTS, settings)


def forget_model(cfg, checkpoint: bool) -> None:
    """A switch of model: what this page computed with the previous one goes (``ui.session.forget_model_state``)."""
    put_back(DEFAULTS, MODEL_BOUND)
