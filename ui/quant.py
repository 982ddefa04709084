"""The quantization ruler's second section, as layout: rounding reaches the output (a dot
product before and after rounding, and a near tie rounding can flip). Like ``ui.gguf``: streamlit
only, every number from one call into ``core/``; the page stays short."""

from __future__ import annotations

import numpy as np
import streamlit as st

import ui
from core.quant import quantize as quant
from core.quant import ruler

kw = {"persist_state": "session"}


def reaches_the_output(r, rounding: str) -> None:
    """A dot product before and after rounding, and a near tie that rounding can flip."""
    st.subheader("Rounding reaches the output")
    c1, c2 = st.columns(2)
    c1.markdown("**A dot product** with input [1, 1, …, 1] (Ch. 19)")
    dot = ruler.dot_product(r)

    def fmt(v: float) -> str:  # past 10¹⁶ a float has no fractional digits left to show: 5 significant ones
        return np.format_float_positional(v, precision=4, min_digits=2) if abs(v) < 1e16 else f"{v:.4e}"

    if dot.finite:
        c1.markdown(
            f"before: **{fmt(dot.before)}** · after: **{fmt(dot.after)}** · difference {fmt(dot.after - dot.before)}"
            + ("" if dot.relative is None else f" = **{dot.relative:.2%}** of the original")
        )
    else:
        c1.markdown("The sum is beyond float64's range (±1.8 × 10³⁰⁸): there is no finite result to compare.")
    c2.markdown("**A near tie** (Ch. 30 §30.6): logits for Paris, Lyon")
    p, ly, s = c2.columns(3)
    # "%g": as typed (the default "%.2f" showed a scale of 1e-300 as 0.00 while it was used)
    paris = p.number_input("Paris", step=0.05, format="%g", key="quant.paris", **kw)
    lyon = ly.number_input("Lyon", step=0.05, format="%g", key="quant.lyon", **kw)
    tie_scale = s.number_input("scale", min_value=0.0, step=0.05, format="%g", key="quant.tie_scale", **kw)
    try:
        choice, rounded = quant.greedy_after_quantizing([paris, lyon], tie_scale, rounding)
    except ValueError as err:
        return ui.refuse(err)
    names = ["Paris", "Lyon"]
    c2.markdown(
        f"before: greedy picks **{names[int(np.argmax([paris, lyon]))]}** · rounded to "
        f"[{rounded[0]:g}, {rounded[1]:g}] → **{names[choice]}**"
        + (" (a tie: the first in candidate order)" if rounded[0] == rounded[1] else "")
    )
