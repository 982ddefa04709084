"""Quantizing the real model: the flip finder, weight-only and KV-cache quantization measured."""

import streamlit as st

from core.decode import settings as decode_settings
from core.evaluate.quant_quality import divergence
from core.model.tokenizer import decode, encode, end_token_id
from core.quant import quantize as quant
from core.quant.model_weights import row_lengths, valid_group_sizes
from core.viz.quant import fig_quant_sweep
from ui import models
from ui import quant as ui_quant
from ui import quant_model as quant_model_ui
from ui import runs as ui_runs
from ui.decode import keys as decode_keys
from ui.page import chart_in, title
from ui.present import presenter_mode, swapped

tok, model, card, source = (
    models.chosen_tokenizer(),
    models.chosen_model(),
    models.chosen_card(),
    models.chosen_source(),
)
title("quant_model")
intro = st.container()  # the chapter's point: in presenter mode under the charts, which need the first screen
about = (
    "Ch. 30 §30.6: small errors can change a discrete choice, so “four bits” is not a quality result. "
    "Weight-only and KV-cache quantization affect different arrays; here both are measured on "
    + ("the shipped model" if card is None else card.name)
    + ". Weights and cache values are rounded and kept as floats (a round trip), so the numbers show "
    "the rounding's effect, not a faster integer kernel."
)

flip_box, sweep_box = swapped()  # presenter mode: the measured sweep and its charts first
with flip_box:
    st.subheader("The flip finder: how close is the next token to changing?")
    sess = st.session_state.get(decode_keys.DECODE_SESSION)
    if sess is None:
        sess = models.default_request(source)
        cut = (
            ""
            if sess.prompt_text or len(sess.prompt_ids) >= len(encode(tok, decode_settings.DEFAULT_PROMPT))
            else " (its end)"
        )
        st.caption(f"Using the default prompt{cut} (run Prefill on the decode page to use yours).")
    else:
        st.caption("Using the current request on the decode page.")
    logits = sess.logits.double().numpy()
    ui_quant.flip_finder(tok, logits)

with sweep_box:
    st.subheader("Quantize " + ("the shipped model" if card is None else card.name) + ", measure what changes")
    g1, g2 = st.columns(2)
    groups = valid_group_sizes(model)
    group = g1.select_slider(
        "Weight group size (inputs per scale)",
        groups,
        key=quant_model_ui.QM_GROUP,
        persist_state="session",
        help=f"A group must divide every row: the rows are {' and '.join(map(str, row_lengths(model)))} inputs "
        f"long (the MLP's down projection reads its width), so {', '.join(map(str, groups))} are offered.",
    )
    rounding = g2.selectbox(
        "Ties round",
        list(quant.ROUNDING),
        format_func=quant.ROUNDING.get,
        key=quant_model_ui.QM_ROUNDING,
        persist_state="session",
    )
    notes, chart_row = swapped()  # presenter mode: the charts above the plan, caveats and tables
    with notes:
        (st if presenter_mode() else intro).caption(about)
        name, plan = "the shipped model" if card is None else card.name, models.quant_plan(source)
        st.caption(
            plan.describe(name, None if card is None else model.n_params())
            + " Greedy changes and max logit error are against the float32 model on the same positions."
        )
        ui_quant.caveats()  # before the measurements: why they are needed (and true with none yet)
        if card is not None and st.session_state.get(quant_model_ui.QM_EVALUATED) != source:
            go = {quant_model_ui.QM_EVALUATED: source}
            st.button(
                f"Evaluate {len(plan.bits)} widths on {name}",
                type="primary",
                on_click=st.session_state.update,
                args=(go,),
            )
            st.stop()
        results = models.quant_sweep(source, group, rounding)
        figures = []
        for kind, label in (
            ("weights", "Weight-only quantization (block projections; embeddings and lm_head stay float)"),
            ("kv_cache", "KV-cache quantization (one fp16 scale per stored key/value vector)"),
        ):
            reports = results[kind]
            st.markdown(f"**{label}**")
            ui_quant.sweep_table(reports)
            figures.append(fig_quant_sweep(reports[1:], reports[0], "Weights" if kind == "weights" else "KV cache"))
            if kind == "weights":  # the chapters' sentences about what the widths change, with this sweep's bytes
                ui_quant.model_notes(reports, name, model.n_params())
    for col, fig, kind in zip(chart_row.columns(2), figures, ("weights", "kv_cache"), strict=True):
        chart_in(col, fig, key=f"{quant_model_ui.QM_SWEEP_FIG}.{kind}", present_max_px=440)

st.subheader("Where does the text first diverge?")
d1, d2 = st.columns(2)
n_bit = d1.select_slider("Weight bits", [8, 6, 5, 4, 3, 2], key=quant_model_ui.QM_DIVERGE_BITS, persist_state="session")
n_new = d2.slider("Tokens to generate (greedy)", 10, 80, key=quant_model_ui.QM_N_NEW, persist_state="session")
ids = tuple(sess.prompt_ids)
runs = (ids, n_new, None, group, source), (ids, n_new, n_bit, group, source)
div = divergence(ui_runs.greedy_tokens(*runs[0]), ui_runs.greedy_tokens(*runs[1]), end_token_id(tok))
st.markdown("Float32 weights:")
st.code(decode(tok, div.reference), language=None, wrap_lines=True)
st.markdown(f"{n_bit}-bit weights (groups of {group}):")
st.code(decode(tok, div.other), language=None, wrap_lines=True)
if div.at is None:
    n = min(len(div.reference), len(div.other))
    st.success(
        f"Identical for all {n} generated tokens at {n_bit} bits"
        + (" (the end token or the context window came first)." if n < n_new else ".")
    )
else:
    st.warning(
        f"The texts first differ at output token {div.at + 1}: “{ui_quant.token_shown(tok, div.reference[div.at])}” "
        f"(float) vs “{ui_quant.token_shown(tok, div.other[div.at])}” ({n_bit}-bit). After that, every later "
        "input differs too."
    )
st.caption(
    "Greedy, up to the end token. To step a quantized model yourself, pick its weights under "
    "the decode page's Settings (precision and weights)."
)
