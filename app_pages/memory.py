"""Memory: the KV-cache calculator, weights by bits per weight, and reading a model card."""

import streamlit as st

import ui
from core import state, viz
from core.cost import counts as cost
from core.cost import kv_compare
from core.cost.request_sizes import parse_lengths
from core.cost.shapes import PRESETS, KVShape, parse_hf_config
from core.text import byte_count, format_bytes
from ui import gguf, models

ui.title("memory")
st.caption(
    "How many bytes the cache holds. M = 2·B·L·T·H_kv·d·b (Ch. 30 §30.4): keys and values, requests, "
    "layers, positions, KV heads, head width, bytes per value. Query heads do not appear."
)

cfg = ui.model().cfg
shipped = KVShape(
    "shipped model (float32)",
    cfg.n_layer,
    cfg.n_head,
    cfg.n_kv_head,
    cfg.head_dim,
    cfg.n_embd,
    4,
    cfg.block_size,
    "checked against the real KVCache",
)
choices = {**PRESETS, "The shipped model": shipped}
card = models.chosen_card()
if card is not None:  # a checkpoint chosen in the sidebar: its config.json as loaded
    choices[state.CHOSEN_PRESET] = KVShape(
        f"{card.name} ({card.architecture}, float32)", card.n_layer, card.n_head, card.n_kv_head, card.head_dim,
        card.d_model, 4, card.context_window, "its config.json as loaded; checked against its real KVCache",
    )  # fmt: skip
choices["From a config.json (paste or upload)"] = None
name = st.selectbox("Model shape", list(choices), key=state.MEMORY_PRESET, persist_state="session")
shape = choices[name]
if shape is None:
    up = st.file_uploader("Upload a Hugging Face config.json", type=["json"], max_upload_size=1)
    pasted = st.text_area(
        "…or paste its text", height=120, max_chars=200_000, placeholder='{"num_hidden_layers": 32, …}'
    )
    raw = up.getvalue() if up is not None else pasted
    if up is None and not pasted:
        st.info("Upload or paste a config.json to fill the terms.")
        st.stop()
    try:
        shape = parse_hf_config(raw, up.name if up is not None else "pasted config.json")
    except ValueError as err:
        ui.refuse(err, "Cannot use this config: ")
        st.stop()
st.caption(
    f"{shape.name} — {shape.attention_kind}, {shape.n_head} query heads, {shape.n_kv_head} KV heads. {shape.note}"
)

tag = f"{name}:{hash(shape)}"  # a new pasted config gets fresh inputs, not the previous one's values
c = st.columns(3)
L = c[0].number_input("L: layers", 1, 10**6, shape.n_layer, key=f"L.{tag}", persist_state="session")
H = c[1].number_input("H_kv: KV heads per layer", 1, 10**6, shape.n_kv_head, key=f"H.{tag}", persist_state="session")
d = c[2].number_input("d: head width", 1, 10**6, shape.head_dim, key=f"d.{tag}", persist_state="session")
c = st.columns(3)
own = f"model's own ({shape.bytes_per_value:g} B)"
b_choices = {own: (shape.bytes_per_value, None), **cost.kv_value_choices()}
b_label = c[0].selectbox(
    "b: bytes per stored value",
    list(b_choices),
    key=f"b.{tag}",
    persist_state="session",
    help="llama.cpp's quantized cache types store blocks of 32 values with an fp16 scale: q8_0 is 34 B per 32.",
)
b, cache_type = b_choices[b_label]
default_T = 8 if name.startswith("Ch. 30 two") else (shape.context_window or 2048)
lengths_text = c[1].text_input(
    "T: positions per request (comma-separated)",
    str(default_T),
    key=f"T.{tag}",
    persist_state="session",
    help="One length per request: “4096, 4096” is B = 2; unequal lengths are summed.",
)
try:
    lengths = parse_lengths(lengths_text)
    if cache_type is None:
        kv = cost.kv_cache_itemized(int(L), int(H), int(d), lengths, b)
    else:
        kv = cost.kv_cache_itemized_typed(int(L), int(H), int(d), lengths, cache_type)
except ValueError as err:
    ui.refuse(err, "Check the lengths: ")
    st.stop()
B = len(lengths)
c[2].metric("B: requests", f"{B:,}", help="Counted from T: one length per request (“4096, 4096” is B = 2).")
if shape.context_window and max(lengths) > shape.context_window:  # the arithmetic holds; the model cannot go there
    st.warning(
        f"T = {max(lengths):,} is past this model's context window of {shape.context_window:,} positions: the "
        "bytes below are what such a cache would take, but the model cannot attend that far."
    )
if len(set(lengths)) == 1:
    head, terms = "2 · B · L · T", f"2 · {B:,} · {L:,} · {lengths[0]:,}"
else:  # unequal lengths: B · T becomes their sum (a mean T would not be a whole number of positions)
    summed = " + ".join(f"{t:,}" for t in lengths) if B <= 4 else f"{B:,} lengths summed: {kv['kv_cache/positions']:,}"
    head, terms = "2 · L · (T₁ + T₂ + …)", f"2 · {L:,} · ({summed})"
st.markdown(f"M = {head} · H_kv · d · b = {terms} · {H:,} · {d:,} · {float(b):g} = **{kv['total']:,} bytes**")
u1, u2, u3 = st.columns(3)
u1.metric("Binary units (KiB = 1,024 B)", format_bytes(kv["total"]))
u2.metric("Decimal units (kB = 1,000 B)", format_bytes(kv["total"], binary=False))
u3.metric("Per position", byte_count(kv["kv_cache/bytes_per_position"]), help="2·L·H_kv·d·b")
if cache_type is not None:
    st.markdown(
        f"As llama.cpp logs it ({cache_type}, block overhead included): "
        f"K = **{format_bytes(kv['kv_cache/keys_bytes'], unit='MiB')}**, "
        f"V = **{format_bytes(kv['kv_cache/values_bytes'], unit='MiB')}**, "
        f"K + V = **{format_bytes(kv['total'], unit='MiB')}**."
    )
real_model = {"The shipped model": ui.model, state.CHOSEN_PRESET: models.chosen_model}.get(name)
if real_model and B <= 8 and b == 4:
    models.check_real_cache(real_model(), shape.name, lengths, kv["total"])

left, right = st.columns(2)
with left:
    variants = kv_compare.kv_sharing_variants(shape.n_head, int(H))
    totals = [cost.kv_cache_itemized(int(L), h, int(d), lengths, b)["total"] for h in variants.values()]
    current = next((k for k, h in variants.items() if h == H), None)
    ui.chart(viz.fig_kv_variants(list(variants), totals, [format_bytes(t) for t in totals], current), key="variants")
with right:
    st.markdown("**Common mistakes, beside the right value**")
    m = kv_compare.kv_mistakes(int(L), int(H), int(d), shape.hidden_size, kv["kv_cache/positions"], b)
    notes = kv_compare.kv_mistake_notes(m)
    for key, label in (
        ("hidden_size_not_kv", "Hidden size instead of H_kv · d"),
        ("no_factor_2", "No factor 2 for keys and values"),
        ("mib_as_mb", "Mix MiB with MB"),
    ):
        if st.toggle(label):
            st.write(notes[key])

gguf.gguf_plan_section()
