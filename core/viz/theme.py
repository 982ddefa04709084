"""The shared look of every figure: one registered plotly template, the palette, escaping.

No streamlit. Text that came from a user (tokens of a prompt) is
escaped before it reaches plotly, whose labels otherwise interpret a subset of HTML.
Colour scale: Cividis, designed to be readable with colour-vision deficiency. Colours carry no
meaning alone (markers, dashes, hatching or labels say it too); the palettes stay apart under
simulated colour-vision deficiency and every text reaches WCAG AA contrast (tests/core/viz/test_a11y.py).
"""

from __future__ import annotations

import html

import plotly.graph_objects as go
import plotly.io as pio

TEMPLATE = "explainer"
COLORSCALE = "Cividis"
NEW_WORK = "#d55e00"  # Okabe-Ito vermillion: the one new thing this step (lines, fills: 3.9:1 on white)
NEW_WORK_TEXT = "#ad4c00"  # the same hue dark enough for text: 5.5:1 on white (vermillion itself: 3.9)
CACHED = "#0072b2"  # Okabe-Ito blue: read from the KV cache (5.2:1 on white, also as text)
MUTED = "#767676"  # outlines, shelves, reference lines: 4.5:1 on white (#999 was 2.8)
TEXT = "#1f1f1f"  # every label, tick and title: 16:1 on white

pio.templates[TEMPLATE] = go.layout.Template(
    layout=go.Layout(
        font=dict(family="Source Sans Pro, Arial, sans-serif", size=14, color=TEXT),
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


def _channel(c: float) -> float:
    c /= 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def rgb_of(colour: str) -> tuple[int, int, int]:
    """``"#rrggbb"`` or ``"rgb(r, g, b)"`` (as plotly's colour scales give them) as integers 0–255."""
    colour = colour.strip()
    if colour.startswith("#") and len(colour) == 7:
        return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))
    if colour.startswith("rgb(") and colour.endswith(")"):
        return tuple(round(float(v)) for v in colour[4:-1].split(","))
    raise ValueError(f"not a colour in #rrggbb or rgb(r, g, b) form: {colour!r}")


def contrast_ratio(a: str, b: str) -> float:
    """WCAG 2.1 contrast ratio (L1 + 0.05) / (L2 + 0.05) of two opaque colours, 1–21 (WCAG 2.1,
    "relative luminance": sRGB channels linearised, weighted 0.2126, 0.7152, 0.0722)."""
    lum = [sum(w * _channel(c) for w, c in zip((0.2126, 0.7152, 0.0722), rgb_of(x), strict=True)) for x in (a, b)]
    return (max(lum) + 0.05) / (min(lum) + 0.05)


def blend(colour: str, background: str, opacity: float) -> str:
    """``colour`` drawn with ``opacity`` over ``background``, as ``#rrggbb`` (what the eye sees)."""
    mix = [round(opacity * f + (1 - opacity) * b) for f, b in zip(rgb_of(colour), rgb_of(background), strict=True)]
    return "#" + "".join(f"{c:02x}" for c in mix)


def text_on(background: str) -> str:
    """Black or white, whichever contrasts more with ``background`` (at least 4.58:1 for any colour)."""
    return "#000000" if contrast_ratio("#000000", background) >= contrast_ratio("#ffffff", background) else "#ffffff"


def described(fig: go.Figure, text: str) -> go.Figure:
    """``fig`` carrying its text alternative (a ``describe_*`` sentence with its real numbers) in
    ``layout.meta``: ``ui.chart`` shows it under every figure, so no figure goes without one."""
    fig.update_layout(meta=dict(description=text))
    return fig


def description_of(fig: go.Figure) -> str | None:
    """The text alternative ``described`` gave ``fig`` (None if it has none)."""
    meta = fig.layout.meta
    return meta.get("description") if isinstance(meta, dict) else None
