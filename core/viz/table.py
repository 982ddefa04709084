"""A figure's numbers as a table: what "Show as table" lists under every chart (the text alternative's
long form, for screen readers and for anyone who wants the exact values).

Read from the figure itself, so the table can never disagree with what is drawn. Labels went to plotly
escaped (``theme.safe``); the table shows them as typed.
"""

from __future__ import annotations

import base64
import html

import numpy as np
import plotly.graph_objects as go


def _array(v):
    """A trace's array as the figure holds it: a list, a numpy array, or plotly's typed array (a dict of
    ``dtype``, base64 ``bdata`` and optional ``shape`` "rows, columns") that a figure rebuilt from its dict keeps
    (``ui.figures``); anything else as it is."""
    if isinstance(v, dict) and "bdata" in v and "dtype" in v:
        a = np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"])
        shape = v.get("shape")
        return a.reshape([int(n) for n in str(shape).split(",")]) if shape else a
    return v


def _plain(v):
    if isinstance(v, str):
        return html.unescape(v).replace("<br>", " ")
    if isinstance(v, np.generic):
        return v.item()
    return v


def _axis_title(fig: go.Figure, ref: str | None, axis: str, default: str) -> str:
    """The title of the axis a trace is drawn on (``ref``: ``"x"``, ``"x2"`` …; else ``axis``), or
    ``default``."""
    name = (ref or axis)[0] + "axis" + (ref or axis)[1:]
    layout_axis = fig.layout[name] if name in fig.layout else None
    text = layout_axis.title.text if layout_axis is not None and layout_axis.title is not None else None
    return _plain(text) if text else default


def _heatmap_rows(fig: go.Figure, t, y_title: str) -> list[dict]:
    z = np.asarray(_array(t.z), dtype=float)
    xs = list(_array(t.x)) if t.x is not None else list(range(z.shape[1]))
    ys = list(_array(t.y)) if t.y is not None else list(range(z.shape[0]))
    rows = []
    for i, y in enumerate(ys):
        if np.all(np.isnan(z[i])):
            continue  # this trace does not draw that row (cached and new rows are two traces)
        row = {"series": _plain(t.name or ""), y_title: _plain(y)}
        row |= {str(_plain(x)): (None if np.isnan(v) else round(float(v), 4)) for x, v in zip(xs, z[i], strict=True)}
        rows.append(row)
    return rows


def figure_table(fig: go.Figure) -> list[dict]:
    """The numbers ``fig`` draws, one row per point (a heatmap: one row per y, one column per x), with
    columns named after the axes. Traces drawn only as decoration (``hoverinfo="skip"``, no name) are
    left out; a trace with per-point ``hovertext`` (e.g. the paged pool's blocks) gives that text."""
    rows: list[dict] = []
    for t in fig.data:
        # An axis without a title names its column by its role (the table showed bare "x" and "y").
        x_title = _axis_title(fig, getattr(t, "xaxis", None), "x", "")
        y_title = _axis_title(fig, getattr(t, "yaxis", None), "y", "")
        if t.type == "heatmap":
            rows += _heatmap_rows(fig, t, y_title or "row")
        elif getattr(t, "hovertext", None) is not None and not isinstance(t.hovertext, str):
            rows += [{"details": _plain(h)} for h in t.hovertext]
        elif t.hoverinfo == "skip" or t.x is None or t.y is None:
            continue
        else:
            rows += _point_rows(t, x_title, y_title)
    return rows


def _per_point(values, n: int) -> list:
    """A per-point property (a list), or the same value for every point, or Nones."""
    if values is None or isinstance(values, str | int | float):
        return [values] * n
    return list(_array(values))


def _point_rows(t, x_title: str, y_title: str) -> list[dict]:
    horizontal = t.type == "bar" and t.orientation == "h"
    value, where = (x_title, y_title) if horizontal else (y_title, x_title)
    value, where = value or "value", where or "label"
    xs, ys = list(_array(t.x)), list(_array(t.y))
    ws, vs = (ys, xs) if horizontal else (xs, ys)
    bases = _per_point(getattr(t, "base", None), len(ws))
    texts = _per_point(t.text, len(ws))
    rows = []
    for w, v, b, label in zip(ws, vs, bases, texts, strict=True):
        row = {"series": _plain(t.name or ""), where: _plain(w), value: _plain(v)}
        if b is not None:
            row["starts at"] = _plain(b)
        if label not in (None, ""):  # the text drawn on the point; "label" may already name the category
            row["text shown" if "label" in row else "label"] = _plain(label)
        rows.append(row)
    return rows
