"""The shared look of every figure: one registered plotly template, the palette, escaping.

No streamlit. Text that came from a user (tokens of a prompt) is
escaped before it reaches plotly, whose labels otherwise interpret a subset of HTML.
Colour scale: Cividis, designed to be readable with colour-vision deficiency.
"""

from __future__ import annotations

import html

import plotly.graph_objects as go
import plotly.io as pio

TEMPLATE = "explainer"
COLORSCALE = "Cividis"
NEW_WORK = "#d55e00"  # Okabe-Ito vermillion: the one new thing this step
CACHED = "#0072b2"  # Okabe-Ito blue: read from the KV cache
MUTED = "#999999"

pio.templates[TEMPLATE] = go.layout.Template(
    layout=go.Layout(
        font=dict(family="Source Sans Pro, Arial, sans-serif", size=14),
        paper_bgcolor="white",
        plot_bgcolor="white",
        margin=dict(l=10, r=10, t=50, b=10),
        hoverlabel=dict(font_size=14),
        xaxis=dict(automargin=True),
        yaxis=dict(automargin=True),
        title=dict(x=0, xanchor="left", font=dict(size=17)),
    )
)


def safe(text: str) -> str:
    """Escape user text for plotly labels and hover text (shown literally, never as markup)."""
    return html.escape(str(text), quote=True)
