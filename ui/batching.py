"""The batching page's glue (``app_pages/batching.py`` stays layout): its buttons' callbacks, the measured
section, and its charts at projector size.

Projector size: ``ui.chart`` raises a figure's layout font to 20 px in presenter mode, but the batching charts'
tick labels, legend and point labels then sat below the page's own 24 px text on a projector (issue 37 item 11).
``projector_fonts`` sets those elements' own sizes, which a layout font does not override.
"""

from __future__ import annotations

import streamlit as st

from core import state, viz
from core.cost.request_sizes import parse_budgets
from core.evaluate.speedups import measure_batching
from core.model.tokenizer import encode, end_token_id
from core.serving.batch import Batch
from ui.page import chart, set_message
from ui.present import presenter_mode

OLD_BATCH = "; nothing ran: the batch below is the one prefilled before"
PROJECTOR_PX = 24  # the page's own text in presenter mode (21 px × 1.15, assets/style/presenter.css)


def projector_fonts(fig, px: int = PROJECTOR_PX):
    """In presenter mode, ``fig``'s axes, legend, colour bar and point labels at ``px``; unchanged otherwise.
    Returns ``fig``."""
    if not presenter_mode():
        return fig
    fig.update_xaxes(tickfont_size=px, title_font_size=px)
    fig.update_yaxes(tickfont_size=px, title_font_size=px)
    fig.update_layout(legend_font_size=px)  # the title: ui.chart's 24 px
    fig.update_traces(textfont_size=px, selector=lambda t: t.type in ("bar", "scatter"))  # heatmap cells keep theirs
    fig.update_traces(colorbar_tickfont_size=px, colorbar_title_font_size=px, selector=dict(type="heatmap"))
    return fig


def new_batch(model, tok) -> None:
    """Prefill a new batch from the prompt and budget boxes, or keep a message saying why not."""
    prompts = [line for line in st.session_state[state.BATCH_PROMPTS].splitlines() if line.strip()]
    try:
        if not prompts or len(prompts) > 16:
            raise ValueError(f"give between 1 and 16 prompts, one per line (there are {len(prompts)})")
        budgets = parse_budgets(st.session_state[state.BATCH_BUDGETS], model.cfg.block_size)
        if len(budgets) != len(prompts):
            raise ValueError(f"{len(prompts)} prompts but {len(budgets)} token budgets: give one budget per prompt")
        batch = Batch(
            model, [encode(tok, p) for p in prompts], budgets, st.session_state[state.BATCH_LAYOUT], end_token_id(tok)
        )
        batch.prefill()
    except ValueError as err:  # a batch prefilled before stays on screen below: say whose it is
        set_message(state.BATCH_ERROR, f"{err}{OLD_BATCH * (st.session_state.get(state.BATCH_OBJ) is not None)}")
        return
    st.session_state[state.BATCH_OBJ], st.session_state[state.BATCH_ERROR] = batch, None


def step() -> None:
    """One pass for every request still in the batch."""
    batch = st.session_state.get(state.BATCH_OBJ)
    if batch is None:
        set_message(state.BATCH_ERROR, "press Prefill the batch first")
    elif not batch.step():
        set_message(state.BATCH_ERROR, "every request has finished: the batch is empty")


def run_all() -> None:
    """Passes until every request has finished."""
    batch = st.session_state.get(state.BATCH_OBJ)
    while batch is not None and batch.step():
        pass


def measured_section(model, tok) -> None:
    """Batch sizes 1-16 timed against one by one on this machine: the chart and its table."""
    st.subheader("Measured on this machine: batched vs one by one")
    if st.button("Measure batch sizes 1, 2, 4, 8, 16"):
        bar = st.progress(0.0, text="Decoding batches…")
        prompts = [encode(tok, p) for p in state.BATCH_PROMPTS_DEFAULT.splitlines()]
        st.session_state[state.BATCH_SPEED] = measure_batching(model, prompts, progress=lambda f: bar.progress(f))
        bar.empty()
    rows = st.session_state.get(state.BATCH_SPEED)
    if not rows:
        return
    chart(projector_fonts(viz.fig_batch_speed(rows)), key="batch.speed_fig")
    st.dataframe(
        [
            {
                "batch size": r.batch_size,
                "ms per decode step": f"{r.step_ms:.2f}",
                "tokens/s batched": f"{r.batched_tokens_per_s:,.0f}",
                "tokens/s one by one": f"{r.solo_tokens_per_s:,.0f}",
                "speed-up": f"{r.speedup:.2f}×",
                "speed-up range": f"{r.speedup_low:.2f}–{r.speedup_high:.2f}×",
            }
            for r in rows
        ],
        hide_index=True,
    )
    st.caption(
        "16 tokens per request, padded layout, greedy; 3 interleaved repeats, each row from the one with the median "
        "speed-up (so tokens/s batched ÷ one by one is the speed-up shown), the range over all three. One step of the "
        "batch costs little more than one step of one request on this tiny model: the weights are read once "
        "per pass for all requests."
    )
