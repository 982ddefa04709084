"""The batching page's glue (``app_pages/batching.py`` stays layout): its buttons' callbacks, the batch on screen,
the measured section, and its charts at projector size.

Projector size: ``ui.page.chart`` raises a figure's layout font to 20 px in presenter mode, but the batching charts'
tick labels, legend and point labels then sat below the page's own 24 px text on a projector (issue 37 item 11).
``projector_fonts`` sets those elements' own sizes, which a layout font does not override.
"""

from __future__ import annotations

import streamlit as st

from core.cost.counts import batch_kv_bytes, kv_cache_bytes_for
from core.cost.request_sizes import parse_budgets
from core.decode import session_view
from core.evaluate.speedups import measure_batching
from core.model.tokenizer import decode, encode, end_token_id, token_labels
from core.serving.batch import Batch
from core.text import visible
from core.viz.attention import fig_attention
from core.viz.batching import fig_batch_cache, fig_batch_speed
from ui import tables
from ui.decode import keys as decode_keys
from ui.page import chart, chart_in, followable, put_back, set_message, too_long
from ui.present import presenter_mode

BATCH_PROMPTS_DEFAULT = (
    "The cat sat on the\nUser: Hello, my name is Ravi. I am planning a trip to Oslo.\n"
    "Ana asked: Which country is Lyon in?\nThe dog"
)

BATCH_BUDGETS = "batch.budgets"

BATCH_ERROR = "batch.error"

BATCH_LAYOUT = "batch.layout"

BATCH_OBJ = "batch.obj"

BATCH_PROMPTS = "batch.prompts"

BATCH_SPEED = "batch.speed"

# (a key is spelled here once; the code that draws the element names the constant)
BATCH_CACHE = "batch.cache"

BATCH_HEAT = "batch.heat"

BATCH_PICK = "batch.pick"

# presenter mode prefilled the page's batch on opening it (once a session)
BATCH_PREFILLED_ONCE = "batch.prefilled_once"

BATCH_SPEED_FIG = "batch.speed_fig"

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    BATCH_PROMPTS: BATCH_PROMPTS_DEFAULT,
    BATCH_BUDGETS: "12, 20, 6, 16",
    BATCH_LAYOUT: "padded",
    BATCH_OBJ: None,
    BATCH_ERROR: None,
    BATCH_SPEED: None,
}
# The page's settings (core.lesson.pages.PAGES["batching"]) -> their session keys.
SETTINGS = {
    "prompts": BATCH_PROMPTS,
    "budgets": BATCH_BUDGETS,
    "layout": BATCH_LAYOUT,
}
# Objects computed with one model: back to their defaults when a session switches models.
MODEL_BOUND = (
    BATCH_OBJ,
    BATCH_ERROR,
    BATCH_SPEED,
)


OLD_BATCH = "; nothing ran: the batch below is the one prefilled before"
LAYOUT_NAMES = {"padded": "padding to the longest", "ragged": "per-request caches"}
PADDING = "Every row padded to the longest row so far."
RESERVED = "Slots each padded row keeps for the tokens its request may still generate: not waste until it ends."
CACHE_MAX_PX = 460  # presenter mode: the cache chart and its caption beside the controls on a 1080-px screen
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


PROMPTS_CHARS, BUDGETS_CHARS = 20_000, 10_000  # the boxes' limits: 16 prompts; 16 numbers of any size


def new_batch(model, tok) -> None:
    """Prefill a new batch from the prompt and budget boxes, or keep a message saying why not."""
    ss = st.session_state
    refusal = too_long(ss[BATCH_PROMPTS], PROMPTS_CHARS) or too_long(ss[BATCH_BUDGETS], BUDGETS_CHARS)
    if refusal:
        set_message(BATCH_ERROR, refusal)
        return
    prompts = [line for line in ss[BATCH_PROMPTS].splitlines() if line.strip()]
    try:
        if not prompts or len(prompts) > 16:
            raise ValueError(f"give between 1 and 16 prompts, one per line (there are {len(prompts)})")
        budgets = parse_budgets(st.session_state[BATCH_BUDGETS], model.cfg.block_size)
        if len(budgets) != len(prompts):
            raise ValueError(f"{len(prompts)} prompts but {len(budgets)} token budgets: give one budget per prompt")
        batch = Batch(
            model, [encode(tok, p) for p in prompts], budgets, st.session_state[BATCH_LAYOUT], end_token_id(tok)
        )
        batch.prefill()
    except ValueError as err:  # a batch prefilled before stays on screen below: say whose it is
        set_message(BATCH_ERROR, f"{err}{OLD_BATCH * (st.session_state.get(BATCH_OBJ) is not None)}")
        return
    st.session_state[BATCH_OBJ], st.session_state[BATCH_ERROR] = batch, None


def prefill_once(model, tok) -> None:
    """Presenter mode: the batch of the boxes' prompts prefilled on first opening the page, so its cache is on the
    projector's first screen without a click (after Reset the page waits for Prefill, as on a laptop)."""
    ss = st.session_state
    if ss.get(BATCH_OBJ) is None and not ss.get(BATCH_PREFILLED_ONCE):
        ss[BATCH_PREFILLED_ONCE] = True
        new_batch(model, tok)


def batch_view(model, tok, batch, layout: str, view) -> None:
    """The batch on screen: in ``view`` (presenter mode: the column beside the controls) its passes and its cache
    chart, then the requests' table, the bytes each layout holds and one request's attention (on a laptop all in
    ``view``, in the page's order)."""
    present = presenter_mode()
    names = [f"request {i + 1}" for i in range(len(batch.requests))]
    if batch.layout != layout:
        view.warning(
            f"This batch holds its requests by {LAYOUT_NAMES[batch.layout]}; you chose "
            f"{LAYOUT_NAMES[layout]}. Press **Prefill the batch** to rebuild it that way."
        )
    view.markdown(
        f"**Forward passes:** {batch.passes} · **requests still in the batch:** "
        f"{sum(not r.finished for r in batch.requests)} of {len(batch.requests)} · **layout:** {batch.layout}"
    )
    below = st.container() if present else view
    rows = [
        {"request": n, "prompt tokens": len(r.prompt), "generated": visible(decode(tok, r.tokens))}  # ⏎: no blank cell
        | {"status": "finished, left the batch" if r.finished else "in the batch", "cached positions": r.length}
        for n, r in zip(names, batch.requests, strict=True)
    ]
    wide = tables.widths(large=["generated"], medium=["status"])
    below.dataframe(rows, hide_index=True, column_config=wide)
    g1, g2 = (view, below.columns(4)) if present else below.columns([3, 2])
    cache_fig = fig_batch_cache(names, [r.length for r in batch.requests], batch.s_max, batch.layout)
    chart_in(g1, projector_fonts(cache_fig), key=BATCH_CACHE, present_max_px=CACHE_MAX_PX)
    per_pos = kv_cache_bytes_for(model.cfg, 1, model.dtype.itemsize)
    kv = batch_kv_bytes([r.length for r in batch.requests], batch.s_max, per_pos, batch.layout)
    padded = batch.layout == "padded"
    boxes = g2 if present else [g2] * 4
    boxes[0].metric("Bytes the layout holds", f"{kv['total']:,} B")
    boxes[1].metric("Bytes holding positions (2·L·H_kv·d·b·Σ lengths)", f"{kv['kv_cache/payload']:,} B")
    boxes[2].metric("Wasted on padding", f"{kv['kv_cache/padding']:,} B" if padded else "0 B (ragged)", help=PADDING)
    if padded:
        boxes[3].metric("Reserved for tokens still to come", f"{kv['kv_cache/reserved']:,} B", help=RESERVED)
    with below:
        pick = st.selectbox("Attention heatmap for", names, key=BATCH_PICK)
        layer, head = (
            decode_keys.DEFAULTS[decode_keys.DECODE_LAYER],
            decode_keys.DEFAULTS[decode_keys.DECODE_HEAD],
        )  # the name look-back head
        req = batch.requests[names.index(pick)]
        seq = req.prompt + req.tokens[:-1]
        att = session_view.stack_rows(req.att, layer, head)
        title = f"{pick}: layer {layer} · head {head} (its own cache only)"
        new_rows = 1 if len(req.att) > 1 else len(req.prompt)
        heat = fig_attention(att, token_labels(tok, seq), new_rows, title)
        chart(projector_fonts(heat), key=BATCH_HEAT)


def step() -> None:
    """One pass for every request still in the batch."""
    batch = st.session_state.get(BATCH_OBJ)
    if batch is None:
        set_message(BATCH_ERROR, "press Prefill the batch first")
    elif not batch.step():
        set_message(BATCH_ERROR, "every request has finished: the batch is empty")


def run_all() -> None:
    """Passes until every request has finished."""
    batch = st.session_state.get(BATCH_OBJ)
    while batch is not None and batch.step():
        pass


def measured_section(model, tok) -> None:
    """Batch sizes 1-16 timed against one by one on this machine: the chart and its table."""
    st.subheader("Measured on this machine: batched vs one by one")
    if st.button("Measure batch sizes 1, 2, 4, 8, 16"):
        bar = st.progress(0.0, text="Decoding batches…")
        prompts = [encode(tok, p) for p in BATCH_PROMPTS_DEFAULT.splitlines()]
        st.session_state[BATCH_SPEED] = measure_batching(model, prompts, progress=lambda f: bar.progress(f))
        bar.empty()
    rows = st.session_state.get(BATCH_SPEED)
    if not rows:
        return
    chart(projector_fonts(fig_batch_speed(rows)), key=BATCH_SPEED_FIG)
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


snapshot, show = followable("batching", SETTINGS, DEFAULTS)  # the page you can follow (ui.session)


def forget_model(cfg, checkpoint: bool) -> None:
    """A switch of model: what this page computed with the previous one goes (``ui.session.forget_model_state``)."""
    put_back(DEFAULTS, MODEL_BOUND)
