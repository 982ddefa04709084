"""Batching: several requests, one forward pass per step, each with its own KV cache rows."""

import streamlit as st

import ui
from core import state, viz
from core.cost.counts import batch_kv_bytes, kv_cache_bytes_for
from core.decode import session_view
from core.model.tokenizer import decode, token_labels
from core.serving.batch import LAYOUTS
from core.text import visible
from ui import batching, tables

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
left, right = st.columns([3, 2])
kw = {"persist_state": "session"}
left.text_area("Prompts, one per line (up to 16)", height=130, max_chars=20_000, key=state.BATCH_PROMPTS, **kw)
right.text_input(
    "Tokens to generate per request", key=state.BATCH_BUDGETS, help="One per prompt; the end token also ends one.", **kw
)
layout = right.radio(
    "Hold unequal lengths by", LAYOUTS, horizontal=True, key=state.BATCH_LAYOUT, format_func=LAYOUT_NAMES.get, **kw
)


ui.button_row(
    ("Prefill the batch", lambda: batching.new_batch(model, tok)),
    ("Step ▸ (one pass)", batching.step),
    ("Run to the end", batching.run_all),
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
    cache_fig = viz.fig_batch_cache(names, [r.length for r in batch.requests], batch.s_max, batch.layout)
    ui.chart_in(g1, batching.projector_fonts(cache_fig), key="batch.cache")
    per_pos = kv_cache_bytes_for(model.cfg, 1, model.dtype.itemsize)
    kv = batch_kv_bytes([r.length for r in batch.requests], batch.s_max, per_pos, batch.layout)
    padded = batch.layout == "padded"
    g2.metric("Bytes the layout holds", f"{kv['total']:,} B")
    g2.metric("Bytes holding positions (2·L·H_kv·d·b·Σ lengths)", f"{kv['kv_cache/payload']:,} B")
    g2.metric("Wasted on padding", f"{kv['kv_cache/padding']:,} B" if padded else "0 B (ragged)", help=PADDING)
    if padded:
        g2.metric("Reserved for tokens still to come", f"{kv['kv_cache/reserved']:,} B", help=RESERVED)
    pick = st.selectbox("Attention heatmap for", names, key="batch.pick")
    layer, head = state.DEFAULTS[state.DECODE_LAYER], state.DEFAULTS[state.DECODE_HEAD]  # the name look-back head
    req = batch.requests[names.index(pick)]
    seq = req.prompt + req.tokens[:-1]
    att = session_view.stack_rows(req.att, layer, head)
    title = f"{pick}: layer {layer} · head {head} (its own cache only)"
    new_rows = 1 if len(req.att) > 1 else len(req.prompt)
    heat = viz.fig_attention(att, token_labels(tok, seq), new_rows, title)
    ui.chart(batching.projector_fonts(heat), key="batch.heat")

batching.measured_section(model, tok)
