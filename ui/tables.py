"""Tables handed to streamlit as Arrow tables, built once per rerun without pandas.

``st.table`` and ``st.dataframe`` turn a dict of columns or a list of rows into a pandas DataFrame,
then into Arrow, on every rerun; a ``pyarrow.Table`` built directly skips both (measured:
docs/benchmarks.md, "Figures and tables built once"). The quantization ruler's page load draws six
tables and every page the sidebar's model card, and each rerun holds up the other students' Steps
on that server process.
"""

from __future__ import annotations

import pyarrow as pa
import streamlit as st

from ui.present import presenter_mode


def arrow(rows):
    """``rows`` — a dict of equal-length columns, or a list of dicts with the same keys — as a
    ``pyarrow.Table`` with the same columns in the same order and the same values. Returns ``rows``
    unchanged when Arrow cannot give a column one type (numbers mixed with text, or rows whose
    keys differ): streamlit then converts it as before, showing such a column as text."""
    try:
        if isinstance(rows, dict):
            return pa.table(rows)
        if any(row.keys() != rows[0].keys() for row in rows):
            return rows  # from_pylist would keep only the first row's keys
        return pa.Table.from_pylist(rows)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return rows


def widths(large=(), medium=()) -> dict:
    """``st.dataframe``'s ``column_config`` giving the ``large`` columns (a request's generated text,
    the proposed tokens) more room and the ``medium`` ones (a status) enough: with equal shares their
    text was cut mid-word at 1280 px. In presenter mode the grid is zoomed and sized to its content,
    and streamlit's "large" cut the text after a few words, so there they get 520 and 200 px."""
    big, mid = (520, 200) if presenter_mode() else ("large", "medium")
    return {n: st.column_config.Column(width=big) for n in large} | {
        n: st.column_config.Column(width=mid) for n in medium
    }
