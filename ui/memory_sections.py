"""The memory page's sections beside the terms: a pasted or uploaded config.json, a hybrid model's fixed state
beside its growing KV cache (``core.cost.kv_hybrid``), the same model with other KV-head sharing, and the
common mistakes beside the right value."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from core.cost import kv_compare
from core.cost.kv_hybrid import crossing, growth, state_bytes, state_line
from core.cost.kv_layers import layers_kv_bytes
from core.cost.kv_shape import KVShape
from core.cost.shapes import parse_hf_config
from core.text import format_bytes
from core.viz.memory import fig_cache_vs_state, fig_kv_variants
from ui import figures, references
from ui.page import chart, refuse, text_box

MEMORY_PASTED = "memory.pasted"  # a config.json's text, pasted (a widget value: never seeded here)

MEMORY_VARIANTS_FIG = "memory.variants_fig"

MEMORY_STATE_FIG = "memory.state_fig"  # a hybrid's growing KV cache beside its flat state


def pasted_config() -> tuple[KVShape, str | bytes]:
    """The shape of an uploaded or pasted ``config.json`` and its text; stops the page until one is given, or
    with the reason it cannot be read."""
    up = st.file_uploader("Upload a Hugging Face config.json", type=["json"], max_upload_size=1)
    pasted = text_box(
        st, "…or paste its text", limit=200_000, area=True, height=120, key=MEMORY_PASTED,
        placeholder='{"num_hidden_layers": 32, …}',
    )  # fmt: skip
    if up is None and pasted is None:
        st.stop()
    if up is None and not pasted:
        st.info("Upload or paste a config.json to fill the terms.")
        st.stop()
    raw = up.getvalue() if up is not None else pasted
    try:
        return parse_hf_config(raw, up.name if up else "pasted config.json"), raw
    except ValueError as err:
        refuse(err, "Cannot use this config: ")
        st.stop()


def hybrid_state(model: KVShape, n_layer: int, lengths: list[int], kv_total: int) -> None:
    """A hybrid's other layers: which layers attend, their fixed state S with its formula, and M + S."""
    n_state = model.state_layers(n_layer)
    kind = model.state.kind
    st.markdown(
        f"**Hybrid:** {model.layer_words(n_layer)}. A {kind} layer keeps a fixed-size state per request instead "
        "of a KV cache: it does not grow with T, so only the attention layers enter M."
    )
    st.markdown(state_line(model.state, n_state, len(lengths), model.bytes_per_value))
    s = state_bytes(model.state, n_state, len(lengths), model.bytes_per_value)
    st.markdown(
        f"KV cache + state: M + S = {kv_total:,} + {s:,} = **{kv_total + s:,} bytes** ({format_bytes(kv_total + s)})."
    )


def state_chart(model: KVShape, layers, n_layer: int, lengths: list[int], b, cache_type: str | None) -> None:
    """One request's KV cache growing with T beside the hybrid's flat state, up to the typed T (or past the
    point where the two meet, if that lies further)."""
    n_state = model.state_layers(n_layer)
    per_request = state_bytes(model.state, n_state, 1, model.bytes_per_value)
    t_now = max(lengths)
    meet = crossing(layers, per_request, b, cache_type)
    series = growth(layers, per_request, max(t_now, 2 * meet if meet and meet <= 10**11 else 0), b, cache_type)
    kv_now = layers_kv_bytes(layers, [t_now], b, cache_type)["total"]
    kv_label = f"KV cache: {len(layers):,} attention layers"
    state_label = f"{model.state.kind} state: {n_state:,} layers"
    fig = figures.figure(fig_cache_vs_state, series, kv_label, state_label, t_now, kv_now)
    chart(fig, key=MEMORY_STATE_FIG, present_max_px=420)


def sharing_chart(model: KVShape, n_layer: int, n_head: int, n_kv: int, d: int, window, lengths, b, kv_total) -> None:
    """The same model as MHA / GQA / MQA (every layer with one count); a model listing KV heads per layer
    adds its own bar, "as listed"."""
    variants = kv_compare.kv_sharing_variants(n_head, n_kv)
    uniform = replace(model, layer_heads=None)
    totals = [layers_kv_bytes(uniform.layers(n_layer, h, d, window), lengths, b)["total"] for h in variants.values()]
    names = list(variants)
    current = next((k for k, h in variants.items() if h == n_kv), None)
    if model.layer_heads is not None and n_layer == model.n_layer:
        current = f"as listed ({min(model.layer_heads)}–{max(model.layer_heads)} per layer)"
        names.append(current)
        totals.append(kv_total)
    labels = [format_bytes(t) for t in totals]
    chart(figures.figure(fig_kv_variants, names, totals, labels, current), key=MEMORY_VARIANTS_FIG)
    references.cite("shazeer")  # MQA: one K/V head for every query head


def mistakes(n_attn: int, n_kv: int, d: int, hidden: int, positions: int, b, kv_total: int) -> None:
    """Three common mistakes as toggles, each beside the right value (over the ``n_attn`` layers that cache)."""
    st.markdown("**Common mistakes, beside the right value**")
    notes = kv_compare.kv_mistake_notes(kv_compare.kv_mistakes(n_attn, n_kv, d, hidden, positions, b, right=kv_total))
    for key, label in (
        ("hidden_size_not_kv", "Hidden size instead of H_kv · d"),
        ("no_factor_2", "No factor 2 for keys and values"),
        ("mib_as_mb", "Mix MiB with MB"),
    ):
        if st.toggle(label):
            st.write(notes[key])
