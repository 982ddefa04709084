"""The bill per token: quadratic prefill vs linear cache, predicted and measured."""

import streamlit as st

from core.cost import bill
from core.evaluate.step_times import measure_step_times
from core.text import big_count, exact_decimal, plural
from core.viz.cost import fig_growth_shapes, fig_measured, fig_step_work
from ui import cost as cost_ui
from ui import figures
from ui.models import model, shipped_only_note
from ui.page import chart, chart_in, title


def growth(k: float) -> str:
    """A fitted exponent as the page writes it. A flat curve's fit lands a little either side of 0 with
    timing noise; a negative k read as "shrinks with n", so below 0.1 the page says flat."""
    fit = f"{k:.2f}".replace("-", "−").replace("−0.00", "0.00")  # −0.004 rounds to 0.00, with no sign
    return f"**≈ 0** (flat within the timing noise; the fit gives {fit})" if k < 0.1 else f"**{fit}**"


title("cost")
st.caption(
    "Ch. 19 “The bill per token”, Ch. 30 §30.4: a prompt of n tokens has n² query-key pairs before "
    "masking (the causal mask keeps n(n+1)/2); the KV cache grows by one entry per token."
)

a, b, c = st.columns(3)
n_layer = a.number_input(
    "Layers (n_layer)",
    1,
    10_000,
    key=cost_ui.COST_LAYERS,
    persist_state="session",
    help="1 × 1 gives the chapter's “per layer, per head”.",
)
n_head = b.number_input("Heads (n_head)", 1, 10_000, key=cost_ui.COST_HEADS, persist_state="session")
n_max = c.select_slider(
    "Largest context length n (tokens)",
    [2_000, 5_000, 10_000, 20_000],
    format_func="{:,}".format,  # "10,000", as the chart's axis writes it
    key=cost_ui.COST_N_MAX,
    persist_state="session",
)
per = "per layer, per head" if n_layer * n_head == 1 else f"× {plural(n_layer, 'layer')} × {plural(n_head, 'head')}"
chart(figures.figure(fig_growth_shapes, bill.growth(n_max, n_layer, n_head), per), key=cost_ui.COST_SHAPES_FIG)
st.caption(
    "The dotted curve is the triangle a causal model actually scores: about half the grid, the same "
    "quadratic shape. Ten times the context: a hundred times the scores; ten times the cache."
)

st.subheader("One decode step, and a whole generation")
left, right = st.columns([3, 2])
chart_in(left, figures.figure(fig_step_work, bill.step_work(n_max)), key=cost_ui.COST_STEP_WORK_FIG)
with right:
    n_prompt = st.number_input(
        "Prompt length n (tokens)", 1, 10**12, key=cost_ui.COST_N_PROMPT, persist_state="session"
    )
    m_new = st.number_input("Tokens to generate m", 1, 10**9, key=cost_ui.COST_M_NEW, persist_state="session")
    g = bill.generation_bill(int(n_prompt), int(m_new), n_layer, n_head)
    shown = big_count(g.with_cache), big_count(g.recompute)  # the recompute count is the larger
    st.metric(
        "Scores with the KV cache",
        shown[0],
        help=f"n(n+1)/2 for prefill + (n+1) + … + (n+m−1) = {g.with_cache:,}.",
    )
    st.metric(
        "Scores by full-prefix recompute",
        shown[1],
        delta=f"{exact_decimal(g.ratio, 1)}× more",
        delta_color="off",
        help=f"Every one of the m passes rescores its whole prefix: Σ T(T+1)/2 = {g.recompute:,}.",
    )
    st.caption(
        f"Counted {per}, exact integers"
        + (
            " (past 15 digits rounded here; hover the ? beside each count for its exact value)"
            if shown[1].startswith("≈")
            else ""
        )
        + ". Caching removes the repeated work; it does not make a long context free: each cached step "
        "still scores all n earlier keys."
    )


st.subheader("Measured on this machine: the shipped model")
shipped_only_note("cost")
st.caption(
    "Median time of one decode step at each context length, with the KV cache and by recomputing the "
    "whole prefix. Measured when you press the button; kept for your session only."
)
if st.button("Measure decode steps", type="primary"):
    bar = st.progress(0.0, text="Timing decode steps…")
    times = measure_step_times(
        model(),
        [16, 32, 64, 96, 128, 160, 192, 224, 256],
        repeats=11,
        progress=lambda f: bar.progress(f, text=f"Timing decode steps… {f:.0%}"),
    )
    bar.empty()
    st.session_state[cost_ui.COST_MEASURED] = times
times = st.session_state.get(cost_ui.COST_MEASURED)
if times is None:
    st.info("Press **Measure decode steps** (about two seconds).")
else:
    k_cached, k_naive = times.exponents()
    chart(
        fig_measured(
            times.lengths,
            times.cached_ms,
            times.naive_ms,
            f"Median of {plural(times.repeats, 'run')}, {plural(times.threads, 'torch thread')}",
        ),
        key=cost_ui.COST_MEASURED_FIG,
    )
    # The times at the longest context are in the chart's sentence just above: not said twice.
    st.markdown(
        f"Fitted growth over the longer half (time ∝ n^k): cached k = {growth(k_cached)}, recompute k = "
        f"{growth(k_naive)}."
    )
    st.caption(
        "Reading it: a cached step runs one position through every layer, a fixed cost on a model this "
        "small, plus n scores per head, which barely show, so its curve stays nearly flat. The recompute "
        "reruns every position through every layer (linear in n) and scores n(n+1)/2 pairs (quadratic): "
        "its exponent heads for 1–2 as n grows"
        + (
            ", and sits below 1 while fixed per-pass costs still dominate, as they do here."
            if k_naive < 1
            else f"; here it is past 1 ({k_naive:.2f}): the growing work outweighs the fixed per-pass costs."
        )
        + " Timing noise from other work on this machine shows as bumps; press the button again to re-measure."
    )
