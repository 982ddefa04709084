"""Batching: several requests, one forward pass per step, each with its own KV cache rows."""

import streamlit as st

import ui
from core import session as S
from core import state as K
from core import viz
from core.batch import LAYOUTS, Batch
from core.measure import measure_batching
from core.shapes import parse_lengths
from core.tokenizer import decode, encode, end_token_id, token_labels

tok = ui.tokenizer()
model = ui.model()
st.title("Batching: many requests, fewer passes")
st.caption(
    "Ch. 19: batching improves hardware use, but every request needs its own context state. Ch. 30 §30.4: for "
    "unequal lengths the sum of processed lengths replaces B·T. Greedy decoding on the shipped model."
)

left, right = st.columns([3, 2])
text = left.text_area(
    "Prompts, one per line (up to 16)", height=130, max_chars=20_000, key="batch.prompts", persist_state="session"
)
budgets_text = right.text_input(
    "Tokens to generate per request",
    key="batch.budgets",
    persist_state="session",
    help="One number per prompt; a request also finishes at the end token.",
)
layout = right.radio(
    "Hold unequal lengths by",
    LAYOUTS,
    horizontal=True,
    key="batch.layout",
    persist_state="session",
    format_func=lambda x: {"padded": "padding to the longest", "ragged": "per-request caches"}[x],
)


def new_batch() -> None:
    prompts = [line for line in st.session_state["batch.prompts"].splitlines() if line.strip()]
    try:
        if not prompts or len(prompts) > 16:
            raise ValueError("give between 1 and 16 prompts, one per line")
        budgets = parse_lengths(st.session_state["batch.budgets"])
        if len(budgets) != len(prompts):
            raise ValueError(f"{len(prompts)} prompts but {len(budgets)} token budgets")
        batch = Batch(
            model, [encode(tok, p) for p in prompts], budgets, st.session_state["batch.layout"], end_token_id(tok)
        )
        batch.prefill()
    except ValueError as err:
        st.session_state["batch.error"] = f"{str(err)[0].upper()}{str(err)[1:]}."
        return
    st.session_state["batch.obj"], st.session_state["batch.error"] = batch, None


def step() -> None:
    batch = st.session_state.get("batch.obj")
    if batch is not None and not batch.step():
        st.session_state["batch.error"] = "Every request has finished: the batch is empty."


def run_all() -> None:
    batch = st.session_state.get("batch.obj")
    if batch is not None:
        while batch.step():
            pass


c = st.columns(4)
c[0].button("Prefill the batch", type="primary", on_click=new_batch, width="stretch")
c[1].button("Step ▸ (one pass)", on_click=step, width="stretch")
c[2].button("Run to the end", on_click=run_all, width="stretch")
c[3].button(
    "Reset", on_click=lambda: st.session_state.update({"batch.obj": None, "batch.error": None}), width="stretch"
)
if st.session_state.get("batch.error"):
    st.warning(st.session_state["batch.error"])
batch = st.session_state.get("batch.obj")
if batch is None:
    st.info("Press **Prefill the batch**: all prompts go through one forward pass together.")
else:
    names = [f"request {i + 1}" for i in range(len(batch.requests))]
    st.markdown(
        f"**Forward passes:** {batch.passes} · **requests still in the batch:** "
        f"{sum(not r.finished for r in batch.requests)} of {len(batch.requests)} · **layout:** {batch.layout}"
    )
    st.dataframe(
        [
            {
                "request": n,
                "prompt tokens": len(r.prompt),
                "generated": decode(tok, r.tokens),
                "status": "finished, left the batch" if r.finished else "in the batch",
                "cached positions": r.length,
            }
            for n, r in zip(names, batch.requests, strict=True)
        ],
        hide_index=True,
    )
    g1, g2 = st.columns([3, 2])
    ui.chart_in(
        g1, viz.fig_batch_cache(names, [r.length for r in batch.requests], batch.s_max, batch.layout), key="batch.cache"
    )
    held, payload = batch.held_bytes(), batch.payload_bytes()
    g2.metric("Bytes the layout holds", f"{held:,} B")
    g2.metric("Bytes holding positions (2·L·H_kv·d·b·Σ lengths)", f"{payload:,} B")
    g2.metric("Wasted on padding", f"{held - payload:,} B" if batch.layout == "padded" else "0 B (ragged)")
    pick = st.selectbox("Attention heatmap for", names, key="batch.pick")
    layer, head = K.DEFAULTS[K.DECODE_LAYER], K.DEFAULTS[K.DECODE_HEAD]  # the decode page's name look-back head
    req = batch.requests[names.index(pick)]
    seq = req.prompt + req.tokens[:-1]
    ui.chart(
        viz.fig_attention(
            S.stack_rows(req.att, layer, head),
            token_labels(tok, seq),
            1 if len(req.att) > 1 else len(req.prompt),
            f"{pick}: layer {layer} · head {head} (its own cache only)",
        ),
        key="batch.heat",
    )

st.subheader("Measured on this machine: batched vs one by one")
if st.button("Measure batch sizes 1, 2, 4, 8, 16"):
    bar = st.progress(0.0, text="Decoding batches…")
    prompts = [encode(tok, p) for p in K.BATCH_PROMPTS_DEFAULT.splitlines()]
    st.session_state["batch.speed"] = measure_batching(model, prompts, progress=lambda f: bar.progress(f))
    bar.empty()
rows = st.session_state.get("batch.speed")
if rows:
    ui.chart(viz.fig_batch_speed(rows), key="batch.speed_fig")
    st.dataframe(
        [
            {
                "batch size": r.batch_size,
                "ms per decode step": f"{r.step_ms:.2f}",
                "tokens/s batched": f"{r.batched_tokens_per_s:,.0f}",
                "tokens/s one by one": f"{r.solo_tokens_per_s:,.0f}",
                "speed-up (median)": f"{r.speedup:.2f}×",
                "speed-up range": f"{r.speedup_low:.2f}–{r.speedup_high:.2f}×",
            }
            for r in rows
        ],
        hide_index=True,
    )
    st.caption(
        "16 tokens per request, padded layout, greedy; medians of 3 interleaved repeats. One step of the "
        "batch costs little more than one step of one request on this tiny model: the weights are read once "
        "per pass for all requests."
    )
