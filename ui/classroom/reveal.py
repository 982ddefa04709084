"""The reveal on the teacher's stage: the class's answers beside the model's own share (drawn once,
at the reveal: the buttons on students' screens are closed by then)."""

from __future__ import annotations

import html

import streamlit as st

from core import state
from core.classroom.plan import Question
from core.viz.class_answers import describe_class_answers, fig_class_answers
from ui.classroom import link
from ui.present import presenter_mode


def class_answers(q: Question) -> str:
    """At the reveal, on the teacher's stage: the class's histogram (every round) beside the model's
    own share, the right answer marked; returns the verdict line ("Class: 31 of 38 right")."""
    store, code = link.store(), link.code()
    n = len(q.options)
    tallies = [store.tally(code, q.id, r, n) for r in range(1, q.round + 1)]
    fig = fig_class_answers(q.options, tallies, q.answer, q.shares, height=230)
    if presenter_mode():
        fig.update_layout(font_size=18, title_font_size=20, height=260)
    st.plotly_chart(fig, theme=None, key=f"{state.CLASS_ANSWERS}.{q.id}")
    words = describe_class_answers(q.options, tallies, q.answer, q.shares)
    st.html(f'<p class="chart-desc">{html.escape(words)}</p>')
    last = tallies[-1]
    return f"Class: {last[q.answer]} of {sum(last)} right."
