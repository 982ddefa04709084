"""The latency page's Figure 30.1 section: the figure for one request of the trace, its caption, and the
chapter's sentences about what the trace's numbers are (``core.serving.figure_30_1``)."""

from __future__ import annotations

import streamlit as st

from core import state
from core.cost.kv_shape import KVShape
from core.serving.figure_30_1 import bytes_source, figure_30_1, notes
from core.serving.latency import RequestTrace
from core.viz.figure_30_1 import fig_figure_30_1
from ui.page import chart

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
            key=state.LAT_FIGURE_REQUEST,
        )  # fmt: skip
    t = traces[min(pick, len(traces) - 1)]
    cached = not t.name.endswith("(recompute)")  # the measured batch's second way keeps no cache
    columns = figure_30_1(t, shape, cached)
    chart(fig_figure_30_1(columns, f"{t.name}: {bytes_source(shape)}"), key=state.LAT_FIGURE_30_1)
    st.caption(JOINS)
    for note in notes(t, supplied, cached):
        st.caption(note)  # the chapter's words and this trace's numbers: no typed text
