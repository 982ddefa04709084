"""Ch. 19's worked example: on's four scores, shares and value mix, through the model's own attention code."""

import numpy as np
import streamlit as st

import ui
from core import viz
from core.worked import DEFAULTS, TOKENS, worked_example

st.title("The worked example: “on” attends")
st.caption(
    "Ch. 19 “Two speeds, one model”: Chapter 10's cast extended with “on”. The numbers below come from "
    "`core.model.attend`, the same function every layer of the shipped model runs. Only q_on is given in "
    "the chapter; the other queries are placeholders (they only colour the dimmed, cached rows)."
)

table = [
    {
        "token": t,
        "q₁": DEFAULTS["q"][i][0],
        "q₂": DEFAULTS["q"][i][1],
        "k₁": DEFAULTS["k"][i][0],
        "k₂": DEFAULTS["k"][i][1],
        "v₁": DEFAULTS["v"][i][0],
        "v₂": DEFAULTS["v"][i][1],
    }
    for i, t in enumerate(TOKENS)
]
edited = st.data_editor(table, hide_index=True, disabled=["token"], key="worked.vectors", width="stretch")
scaled = st.toggle(
    "Apply the usual 1/√d scaling (d = 2)",
    key="worked.scaled",
    persist_state="session",
    help="Ch. 19 omits it to keep the arithmetic small; real attention uses it.",
)
try:
    empty = [f"{r['token']}: {c}" for r in edited for c in r if c != "token" and r[c] is None]
    if empty:
        raise ValueError(f"empty cell(s): {', '.join(empty[:4])}")
    col = lambda name: [float(r[name]) for r in edited]  # noqa: E731
    q, k, v = (np.array([col(f"{x}₁"), col(f"{x}₂")]).T for x in "qkv")
    w = worked_example(q, k, v, scaled)
except (TypeError, ValueError) as err:
    st.error(f"Check the vectors: every cell needs a finite number ({err}).")
    st.stop()

s, a = w.scores[-1], w.shares[-1]
with np.errstate(over="ignore"):
    e = np.exp(s)
exact_fractions = bool(np.all(np.isfinite(e)) and e.sum() < 1e9)  # e^s is only worth printing while small
st.subheader("on's four scores")
st.markdown(
    " ; ".join(f"q_on · k_{t} = **{x:.4g}**" for t, x in zip(TOKENS, s, strict=True))
    + ("" if not scaled else " (each × 1/√2)")
)
st.subheader("Shares: softmax of the scores")
if exact_fractions:
    st.markdown(
        " ; ".join(f"a_{t} = {ei:.2f} / {e.sum():.2f} = **{ai:.4f}**" for t, ei, ai in zip(TOKENS, e, a, strict=True))
    )
    rounded_sum = f"{np.round(e, 2).sum():.2f}"
    # The chapter's remark only fits the chapter's own scores (1, 3, 1, 2, unscaled).
    note = (
        f"Ch. 19 writes {rounded_sum}: it adds the terms after rounding each to two decimals."
        if not scaled and np.allclose(s, [1, 3, 1, 2])
        else f"Rounding each term to two decimals first would give {rounded_sum}."
    )
    st.caption(f"Denominator: e^{s[0]:.4g} + e^{s[1]:.4g} + e^{s[2]:.4g} + e^{s[3]:.4g} = {e.sum():.4f}. ({note})")
else:
    st.markdown(" ; ".join(f"a_{t} = **{ai:.4f}**" for t, ai in zip(TOKENS, a, strict=True)))
    st.caption(
        "These scores are too large to print e^score usefully; softmax subtracts the largest score first, "
        "so the shares are still exact."
    )
st.markdown(
    f"Rounded to two decimals: {' + '.join(f'{r:.2f}' for r in w.last_rounded_shares)} = "
    f"**{w.last_rounded_shares.sum():.2f}**"
    + (
        " — the same rounding artifact as in Chapter 10: each share was rounded on its own, so the "
        "rounded parts need not add up to 1 (the exact shares do)."
        if round(w.last_rounded_shares.sum(), 2) != 1
        else "."
    )
)
st.subheader("The value mix")
o, r = w.outputs[-1], w.last_mix_from_rounded
st.markdown(
    f"Exact shares: o_on = [**{o[0]:.3f}**, **{o[1]:.3f}**] · from the rounded shares: "
    f"[**{r[0]:.2f}**, **{r[1]:.2f}**]. Then k_on and v_on are filed into the cache for the next token."
)
labels = [f"{i}: {t}" for i, t in enumerate(TOKENS)]
ui.chart(viz.fig_attention(w.shares, labels, 1, "Each new token adds just one row"), key="worked.grid")
