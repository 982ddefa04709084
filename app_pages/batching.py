"""Batching: several requests, one forward pass per step, each with its own KV cache rows."""

import streamlit as st

import ui
from core import state, viz
from core.cost.counts import batch_kv_bytes, kv_cache_bytes_for
from core.cost.request_sizes import parse_budgets
from core.decode import session_view
from core.evaluate.speedups import measure_batching
from core.model.tokenizer import decode, encode, end_token_id, token_labels
from core.serving.batch import LAYOUTS, Batch
from core.text import visible
from ui import tables

tok, model = ui.tokenizer(), ui.model()
ui.title("batching")
ui.shipped_only_note("batching")
st.caption(
    "Many requests, fewer passes. Ch. 19: batching improves hardware use, but every request needs its own "
    "context state. Ch. 30 §30.4: for unequal lengths the sum of processed lengths replaces B·T. Greedy "
    "decoding on the shipped model."
)

LAYOUT_NAMES = {"padded": "padding to the longest", "ragged": "per-request caches"}
PADDING = "Every row padded to the longest row so far."
RESERVED = "Slots each padded row keeps for the tokens its request may still generate: not waste until it ends."
OLD_BATCH = "; nothing ran: the batch below is the one prefilled before"
left, right = st.columns([3, 2])
kw = {"persist_state": "session"}
left.text_area("Prompts, one per line (up to 16)", height=130, max_chars=20_000, key=state.BATCH_PROMPTS, **kw)
right.text_input(
    "Tokens to generate per request", key=state.BATCH_BUDGETS, help="One per prompt; the end token also ends one.", **kw
)
layout = right.radio(
    "Hold unequal lengths by", LAYOUTS, horizontal=True, key=state.BATCH_LAYOUT, format_func=LAYOUT_NAMES.get, **kw
)


def new_batch() -> None:
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
        ui.set_message(state.BATCH_ERROR, f"{err}{OLD_BATCH * (st.session_state.get(state.BATCH_OBJ) is not None)}")
        return
    st.session_state[state.BATCH_OBJ], st.session_state[state.BATCH_ERROR] = batch, None


def step() -> None:
    batch = st.session_state.get(state.BATCH_OBJ)
    if batch is None:
        ui.set_message(state.BATCH_ERROR, "press Prefill the batch first")
    elif not batch.step():
        ui.set_message(state.BATCH_ERROR, "every request has finished: the batch is empty")


def run_all() -> None:
    batch = st.session_state.get(state.BATCH_OBJ)
    while batch is not None and batch.step():
        pass


ui.button_row(
    ("Prefill the batch", new_batch),
    ("Step ▸ (one pass)", step),
    ("Run to the end", run_all),
    ("Reset", ui.reset(state.BATCH_OBJ, state.BATCH_ERROR)),
)
ui.show_message(state.BATCH_ERROR)
batch = st.session_state.get(state.BATCH_OBJ)
if batch is None:
    st.info("Press **Prefill the batch**: all prompts go through one forward pass together.")
else:
    names = [f"request {i + 1}" for i in range(len(batch.requests))]
    if batch.layout != layout:
        st.warning(
            f"This batch holds its requests by {LAYOUT_NAMES[batch.layout]}; you chose "
            f"{LAYOUT_NAMES[layout]}. Press **Prefill the batch** to rebuild it that way."
        )
    st.markdown(
        f"**Forward passes:** {batch.passes} · **requests still in the batch:** "
        f"{sum(not r.finished for r in batch.requests)} of {len(batch.requests)} · **layout:** {batch.layout}"
    )
    rows = [
        {"request": n, "prompt tokens": len(r.prompt), "generated": visible(decode(tok, r.tokens))}  # ⏎: no blank cell
        | {"status": "finished, left the batch" if r.finished else "in the batch", "cached positions": r.length}
        for n, r in zip(names, batch.requests, strict=True)
    ]
    wide = tables.widths(large=["generated"], medium=["status"])
    st.dataframe(rows, hide_index=True, column_config=wide)
    g1, g2 = st.columns([3, 2])
    ui.chart_in(
        g1, viz.fig_batch_cache(names, [r.length for r in batch.requests], batch.s_max, batch.layout), key="batch.cache"
    )
    per_pos = kv_cache_bytes_for(model.cfg, 1, model.dtype.itemsize)
    kv = batch_kv_bytes([r.length for r in batch.requests], batch.s_max, per_pos, batch.layout)
    padded = batch.layout == "padded"
    g2.metric("Bytes the layout holds", f"{kv['total']:,} B")
    g2.metric("Bytes holding positions (2·L·H_kv·d·b·Σ lengths)", f"{kv['kv_cache/payload']:,} B")
    g2.metric("Wasted on padding", f"{kv['kv_cache/padding']:,} B" if padded else "0 B (ragged)", help=PADDING)
    if padded:
        g2.metric("Reserved for tokens still to come", f"{kv['kv_cache/reserved']:,} B", help=RESERVED)
    pick = st.selectbox("Attention heatmap for", names, key="batch.pick")
    layer, head = (
        state.DEFAULTS[state.DECODE_LAYER],
        state.DEFAULTS[state.DECODE_HEAD],
    )  # the decode page's name look-back head
    req = batch.requests[names.index(pick)]
    seq = req.prompt + req.tokens[:-1]
    att = session_view.stack_rows(req.att, layer, head)
    title = f"{pick}: layer {layer} · head {head} (its own cache only)"
    new_rows = 1 if len(req.att) > 1 else len(req.prompt)
    ui.chart(viz.fig_attention(att, token_labels(tok, seq), new_rows, title), key="batch.heat")

st.subheader("Measured on this machine: batched vs one by one")
if st.button("Measure batch sizes 1, 2, 4, 8, 16"):
    bar = st.progress(0.0, text="Decoding batches…")
    prompts = [encode(tok, p) for p in state.BATCH_PROMPTS_DEFAULT.splitlines()]
    st.session_state[state.BATCH_SPEED] = measure_batching(model, prompts, progress=lambda f: bar.progress(f))
    bar.empty()
rows = st.session_state.get(state.BATCH_SPEED)
if rows:
    ui.chart(viz.fig_batch_speed(rows), key="batch.speed_fig")
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
