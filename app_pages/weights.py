"""Weights by bits per weight, and reading a model card such as "7B, Q4, 8K"."""

import math

import streamlit as st

from core.cost import weight_bytes as weights
from core.cost.shapes import parse_model_card
from core.quant.model_weights import weight_storage_bytes
from core.viz.memory import fig_memory_budget
from ui import gguf, models
from ui import weights as ui_weights
from ui.page import chart, refuse, text_box, title
from ui.present import HIDDEN_UNTIL_REVEAL, answers_hidden, beside, swapped
from ui.weights import CARD_ARCH_AUTO

title("weights")
st.caption(
    "Weights, bits, and reading a model card. Ch. 19 “Shrinking the numbers” and “Why the LLM cares”; "
    "Ch. 30 §30.5 on scale overhead."
)

bits_box, card_box = swapped()  # presenter mode: the model card and its memory bill first
with bits_box:
    st.subheader("Weight bytes by bits per weight")
    a, b, c = st.columns(3)
    billions = a.number_input(
        "Parameters (billions)",
        0.001,
        10_000.0,
        step=0.5,
        format="%.3f",
        key=ui_weights.WEIGHTS_BILLIONS,
        persist_state="session",
    )
    group = b.select_slider(
        "Group size (weights sharing one scale)",
        ["none", 4, 8, 16, 32, 64, 128, 256],
        key=ui_weights.WEIGHTS_GROUP,
        persist_state="session",
    )
    scale_bits = c.radio(
        "Scale stored as",
        [16, 32],
        format_func=lambda x: f"{x}-bit float",
        horizontal=True,
        key=ui_weights.WEIGHTS_SCALE_BITS,
        persist_state="session",
    )
    rows = [
        {
            "bits per weight (nominal)": r.bits,
            "nominal weight bytes": weights.gb(r.nominal_bytes),
            "Tradeoff (Ch. 19)": weights.TRADEOFF.get(r.bits, ""),
            "effective bits per weight (with scales)": f"{float(r.effective_bits):.3f}",
            "bytes with scales": weights.gb(r.bytes_with_scales),
        }
        for r in weights.weight_rows(round(billions * 10**9), None if group == "none" else group, scale_bits)
    ]
    st.dataframe(rows, hide_index=True)
    model, card = models.chosen_model(), models.chosen_card()
    n_params = model.n_params()  # a tied output head is the embedding: counted once
    real = weight_storage_bytes(model, None)  # every weight tensor at its float size
    st.markdown(
        f"**{'The shipped model' if card is None else card.name}** (the model in use): {n_params:,} parameters; its "
        f"weight tensors in memory hold **{real:,} bytes** ({model.dtype})"
        + ("." if card is None else f"; on disk {card.file_bytes:,} bytes ({card.stored_dtype}).")
    )
    mine = weights.weight_rows(n_params, None if group == "none" else group, scale_bits)
    every = "every parameter at these bits, with scales"
    st.dataframe(
        [{"bits per weight": r.bits, every: f"{math.ceil(r.bytes_with_scales):,} B"} for r in mine], hide_index=True
    )
    st.caption(
        "GB = 10⁹ bytes. 16- and 32-bit floats need no scales. Group-wise integer formats store one scale per "
        "group: 4 bits + 16/32 = 4.5 bits per weight. Ch. 30's tiny block (four 4-bit values + one FP32 scale) "
        "is 6 bytes, not 2: choose group size 4 and a 32-bit scale to see 12 bits per weight. The model's row "
        "counts every parameter, the embedding and norms too; a real file quantizes fewer (the GGUF export below "
        "keeps the embedding, output head and norms in float32), so it is larger."
    )

    st.subheader("llama.cpp's K-quants: where the extra bits go")
    st.table(weights.format_table(), hide_index=True)
    st.caption(
        "Bits per weight from each block's bytes (8 · bytes / values, exact); codes + sub-block scales/mins + fp16 "
        "block scales add up to it. A K-quant block holds 256 values in sub-blocks of 16 or 32, each with a small "
        "integer scale (and min), all scaled by one or two fp16 numbers."
    )
    gguf.export_section()

with card_box:
    st.subheader("Reading a model card")
    controls, right = beside((1, 1))  # presenter mode: the card and serving terms left, the bill right
    notes, figure = swapped(right)
    with controls:
        a, b = st.columns([2, 3])
        text = text_box(
            a,
            "Model card",
            limit=40,
            help="Parameters, weight format (Q4, Q4_0, Q4_K_M, IQ2_XXS, MXFP4, FP16, INT8 …; any ggml type), context.",
            key=ui_weights.WEIGHTS_CARD,
            persist_state="session",
        )
        if text is None:
            st.stop()
        try:
            card = parse_model_card(text)
        except ValueError as err:  # quotes the typed card: literally, never as markdown
            refuse(err)
            st.stop()
        archs = ui_weights.card_architectures()
        arch = b.selectbox(
            "Architecture for the KV cache (a card does not say)",
            [CARD_ARCH_AUTO, *archs],
            key=ui_weights.WEIGHTS_ARCH,
            persist_state="session",
        )
        shape = card.kv_shape if arch == CARD_ARCH_AUTO else archs[arch]
        fmt = card.weight_format
        st.markdown(f"Weight format: {fmt.note}.")
        if where := weights.bits_sentence(fmt):
            st.caption(where)
        grouped = ui_weights.card_weights(card)
        st.caption(card.kv_note if arch == CARD_ARCH_AUTO else f"KV cache from {arch}, your choice. ({card.kv_note})")
        kv_bytes, batch, overhead_gb, budget_gb = ui_weights.serving_controls()
        bill = weights.card_budget(card, shape, grouped, kv_bytes, batch, overhead_gb, budget_gb)
    with notes:
        typical = " (typical for this mix)" if fmt.typical else ""
        st.markdown(
            f"**{card.n_params / 1e9:g} billion parameters · "
            f"{float(bill.bits_per_weight):g} bits per weight{typical} · "
            f"context window {card.context_tokens:,} tokens** (K = 1,024 tokens) with the KV shape of {shape.name} "
            f"({shape.terms})."
        )
        st.markdown(f"KV cache at the full context, layer by layer as on the Memory page: {bill.kv_formula}")
    with figure:
        chart(fig_memory_budget(bill.parts_gb, budget_gb), key=ui_weights.WEIGHTS_BUDGET_FIG, states_answer=True)
        fits, verdict = weights.verdict(bill.plan["total"], bill.budget_bytes)
        if answers_hidden():  # the lesson's question (does it fit?), on a display before the reveal
            st.info(HIDDEN_UNTIL_REVEAL)
        else:
            (st.success if fits else st.error)(verdict)
        st.caption(
            "The nominal weight figure is only one bill: the cache grows with context and batch, and switching "
            "weights to 4 bits leaves a 16-bit KV cache unchanged (Ch. 30 exercise 6)."
        )
