"""Figures for the handout: a figure as an HTML fragment for one self-contained file."""

from __future__ import annotations

import plotly.graph_objects as go
import plotly.io as pio


def figure_html(fig: go.Figure, include_plotlyjs: bool, div_id: str) -> str:
    """A figure as an HTML fragment (``<div>`` + ``<script>``) for a self-contained file. With
    ``include_plotlyjs`` the plotly.js bundled in the installed ``plotly`` package is inlined
    (~4.8 MB; once per file is enough); otherwise the fragment expects it already loaded. No
    network: no CDN, no MathJax. plotly writes the figure JSON with ``</`` escaped."""
    return pio.to_html(
        fig,
        include_plotlyjs=include_plotlyjs,
        full_html=False,
        div_id=div_id,
        include_mathjax=False,
        config={"displaylogo": False, "responsive": True},
    )
