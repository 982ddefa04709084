"""Ch. 19's worked example: on's four scores, shares and value mix, through the model's own attention code."""

import streamlit as st

from core.model.worked import TOKENS, denominator, table_rows, vectors_from_rows, worked_example
from core.model.worked_arithmetic import mix_lines, score_lines, share_lines, shares_in_words
from core.viz.worked import fig_worked_grid
from ui import figures
from ui import worked as worked_ui
from ui.lesson import moves
from ui.page import chart_in, refuse, title
from ui.present import beside, presenter_mode

title("worked")
st.caption(
    "“On” attends. Ch. 19 “Two speeds, one model”: Chapter 10's cast extended with “on”. The numbers below come from "
    "`core.model.model.attend`, the same function every layer of the shipped model runs. Only q_on is given in "
    "the chapter; the other queries are placeholders (they only colour the dimmed, cached rows)."
)


def reveal() -> None:
    st.session_state[worked_ui.WORKED_ASK_FIRST] = False
    moves.arrive()  # in a lesson, the browser scrolls the grid into view again


if st.session_state[worked_ui.WORKED_ASK_FIRST]:  # the question and its button first: on a projector's first screen
    q, b = st.columns([4, 1], vertical_alignment="center")
    q.info("Predict first: which earlier word does “on” attend to most, and with roughly what share?")
    b.button("Reveal the shares", on_click=reveal, type="primary", width="stretch")
controls, grid = beside((2, 3))  # presenter mode: the grid beside the vectors, on the first screen
text = controls if presenter_mode() else grid.container()  # the arithmetic: under the vectors, or the grid
edited = controls.data_editor(
    table_rows(), hide_index=True, disabled=["token"], key=worked_ui.WORKED_VECTORS, width="stretch"
)
scaled = controls.toggle(
    "Apply the usual 1/√d scaling (d = 2)",
    key=worked_ui.WORKED_SCALED,
    persist_state="session",
    help="Ch. 19 omits it to keep the arithmetic small; real attention uses it.",
)
ask_first = controls.toggle(
    "Predict first: hide the shares until revealed",
    key=worked_ui.WORKED_ASK_FIRST,
    persist_state="session",
    help="For a class: show on's scores, let students guess the shares, then reveal.",
)
try:
    q, k, v = vectors_from_rows(edited)
    w = worked_example(q, k, v, scaled)
except ValueError as err:
    refuse(err, "Check the vectors: ")
    st.stop()

s, a = w.scores[-1], w.shares[-1]
den = denominator(w)
with text:  # Ch. 19's arithmetic written out beside each result: products, e^score / Σ, the mix slot by slot
    st.subheader("on's four scores")
    st.markdown("  \n".join(score_lines(q[-1], k, s, w.scale)))
    st.subheader("Shares: softmax of the scores")
    st.caption("Chapter 10's symbol a_i for an attention share, written “a” rather than w because these shares are "
               "computed on the fly (Ch. 19), not stored weights.")  # fmt: skip
    if ask_first:
        st.caption("Hidden until revealed (above).")
        st.stop()
    st.markdown("  \n".join(share_lines(a, s, den)))
    if den.terms is not None:
        note = (
            f"Ch. 19 writes {den.rounded_total:.2f}: it adds the terms after rounding each to two decimals."
            if den.chapters_scores
            else f"Rounding each term to two decimals first would give {den.rounded_total:.2f}."
        )
        st.caption(
            f"Denominator: Σ = e^{s[0]:.4g} + e^{s[1]:.4g} + e^{s[2]:.4g} + e^{s[3]:.4g} = {den.total:.4f}. ({note})"
        )
    else:
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
    st.markdown(shares_in_words(TOKENS, w.last_rounded_shares))
    st.subheader("The value mix")
    st.markdown("  \n".join(mix_lines(w.last_rounded_shares, v, w.last_mix_from_rounded, 2)))
    o, r = w.outputs[-1], w.last_mix_from_rounded
    st.markdown(
        f"From the rounded shares (as Ch. 19): [**{r[0]:.2f}**, **{r[1]:.2f}**] · exact shares: o_on = "
        f"[**{o[0]:.3f}**, **{o[1]:.3f}**]. Then k_on and v_on are filed into the cache for the next token."
    )
labels = [f"{i}: {t}" for i, t in enumerate(TOKENS)]
grid_fig = figures.figure(fig_worked_grid, w.shares, labels, "Each new token adds just one row")
chart_in(grid, grid_fig, key=worked_ui.WORKED_GRID)
