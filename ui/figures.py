"""Figures built once per distinct arguments and shared: a ``core.viz`` figure is kept as its plotly
dict, and every caller gets a new ``go.Figure`` of its own (``ui.page.chart`` changes fonts in
presenter mode; a shared object would carry that to another session).

Why: building a figure validates every property through plotly's graph objects; the dict was
validated when it was built, so the copy skips that (``_validate=False``: a private keyword of
plotly's ``BaseFigure``; plotly 7.1.0 has no public way to build a figure without validating it;
tests/ui/test_figures.py checks the copy draws the same JSON). A class that follows the teacher
asks for the same figures again and again (the same preset, the same bit width), and each of
those reruns holds up every other student's Step on that server process.

The cache is keyed by the arguments' pickle, not by the arguments: ``st.cache_data`` hashes a list
element by element, and hashes bytes in one go. Equal pickles unpickle to equal arguments, so a hit
is always the right figure; two equal arguments pickled differently only cost a rebuild. What each
saves, measured: docs/benchmarks.md, "Figures and tables built once"."""

from __future__ import annotations

import pickle
from collections.abc import Callable

import plotly.graph_objects as go
import streamlit as st


# At most 128 figures per server process: the largest, a ruler of 1,000 values (the most it takes),
# is 0.22 MB pickled, so the cache stays under ~30 MB whatever a class types. ``_build`` is not
# hashed (streamlit skips a parameter whose name starts with ``_``): ``name``, its qualified name,
# keys the cache in its place.
@st.cache_data(show_spinner=False, max_entries=128)
def _figure_dict(_build: Callable[..., go.Figure], name: str, args_pickle: bytes) -> dict:
    return _build(*pickle.loads(args_pickle)).to_dict()  # bytes this module pickled


def figure(build: Callable[..., go.Figure], *args) -> go.Figure:
    """``build(*args)`` (a ``core.viz`` figure function, passed itself: ``figure(viz.fig_ruler, r)``),
    built once per distinct ``args`` (``st.cache_data`` keyed by the function's qualified name and
    the arguments' pickle: numbers, strings, lists, tuples, numpy arrays and dataclasses of them).
    Raises pickle's error for arguments it cannot pickle."""
    name = f"{build.__module__}.{build.__qualname__}"
    return go.Figure(_figure_dict(build, name, pickle.dumps(args)), _validate=False)
