"""Weights by bits per weight, and reading a model card such as "7B, Q4, 8K"."""

import streamlit as st

import ui
from core import cost, viz
from core.shapes import PRESETS, parse_model_card

st.title("Weights, bits, and a model card")
st.caption("Ch. 19 “Shrinking the numbers” and “Why the LLM cares”; Ch. 30 §30.5 on scale overhead.")

st.subheader("Weight bytes by bits per weight")
a, b, c = st.columns(3)
billions = a.number_input(
    "Parameters (billions)", 0.001, 10_000.0, step=0.5, format="%.3f", key="weights.billions", persist_state="session"
)
group = b.select_slider(
    "Group size (weights sharing one scale)",
    ["none", 4, 8, 16, 32, 64, 128, 256],
    key="weights.group",
    persist_state="session",
)
scale_bits = c.radio(
    "Scale stored as",
    [16, 32],
    format_func=lambda x: f"{x}-bit float",
    horizontal=True,
    key="weights.scale_bits",
    persist_state="session",
)
n_params = round(billions * 10**9)
rows = []
for bits in (32, 16, 8, 4):
    eff = cost.effective_bits_per_weight(bits, None if group == "none" or bits >= 16 else group, scale_bits)
    rows.append(
        {
            "bits per weight (nominal)": bits,
            "nominal weight bytes": f"{float(cost.weight_bytes(n_params, bits)) / 1e9:,.2f} GB",
            "effective bits per weight (with scales)": f"{float(eff):.3f}",
            "bytes with scales": f"{float(cost.weight_bytes(n_params, eff)) / 1e9:,.2f} GB",
        }
    )
st.dataframe(rows, hide_index=True)
st.caption(
    "GB = 10⁹ bytes. 16- and 32-bit floats need no scales. Group-wise integer formats store one scale per "
    "group: 4 bits + 16/32 = 4.5 bits per weight. Ch. 30's tiny block (four 4-bit values + one FP32 scale) "
    "is 6 bytes, not 2: choose group size 4 and a 32-bit scale to see 12 bits per weight."
)

st.subheader("Reading a model card")
a, b = st.columns([2, 3])
text = a.text_input(
    "Model card",
    max_chars=40,
    help="Parameters, Q + bits per weight, context.",
    key="weights.card",
    persist_state="session",
)
try:
    card = parse_model_card(text)
except ValueError as err:
    st.error(str(err))
    st.stop()
arch = b.selectbox(
    "Architecture for the KV cache (a card does not say)",
    list(PRESETS)[3:],
    key="weights.arch",
    persist_state="session",
)
shape = PRESETS[arch]
grouped = st.toggle(
    "Weights stored in groups of 32 with one fp16 scale each",
    help="A group-wise 4-bit format: adds 16/32 = 0.5 bits per weight.",
    key="weights.grouped",
    persist_state="session",
)
c = st.columns(4)
kv_b = c[0].selectbox(
    "KV precision",
    [2, 1, 0.5],
    format_func=lambda x: f"{int(x * 8)}-bit ({x:g} B)",
    key="weights.kv_bytes",
    persist_state="session",
)
batch = c[1].number_input("Requests (batch)", 1, 100_000, key="weights.batch", persist_state="session")
overhead_gb = c[2].number_input(
    "Overhead (GB, an assumption)",
    0.0,
    10_000.0,
    step=0.25,
    key="weights.overhead_gb",
    persist_state="session",
    help="Activations, workspace, runtime: set what your system needs.",
)
budget_gb = c[3].number_input(
    "Memory budget (GB)", 0.1, 100_000.0, step=1.0, key="weights.budget_gb", persist_state="session"
)
# Group scales belong to integer formats; 16- and 32-bit floats carry none.
bits = cost.effective_bits_per_weight(card.bits_per_weight, 32 if grouped and card.bits_per_weight < 16 else None)
plan = cost.memory_plan(
    card.n_params,
    bits,
    shape.n_layer,
    shape.n_kv_head,
    shape.head_dim,
    card.context_tokens,
    kv_b,
    int(batch),
    round(overhead_gb * 1e9),
)
st.markdown(
    f"**{card.n_params / 1e9:g} billion parameters · {float(bits):g} bits per weight · context window "
    f"{card.context_tokens:,} tokens** (K = 1,024 tokens) with the {arch} KV shape "
    f"({shape.n_layer} layers, {shape.n_kv_head} KV heads, head width {shape.head_dim})."
)
parts = {
    "weights": plan["memory/weights"] / 1e9,
    "KV cache": plan["memory/kv_cache"] / 1e9,
    "overhead": plan["memory/overhead"] / 1e9,
}
ui.chart(viz.fig_memory_budget(parts, budget_gb), key="budget")
total_gb = plan["total"] / 1e9
if total_gb <= budget_gb:
    st.success(f"Fits: {total_gb:,.2f} GB needed of {budget_gb:,.2f} GB ({budget_gb - total_gb:,.2f} GB spare).")
else:
    st.error(
        f"Does not fit: {total_gb:,.2f} GB needed, {total_gb - budget_gb:,.2f} GB over the {budget_gb:,.2f} GB budget."
    )
st.caption(
    "The nominal weight figure is only one bill: the cache grows with context and batch, and switching "
    "weights to 4 bits leaves a 16-bit KV cache unchanged (Ch. 30 exercise 6)."
)
