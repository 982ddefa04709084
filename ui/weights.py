"""The weights page's model-card section, as layout: the card's weights in two steps (nominal,
then scales) and the serving controls. Like ``ui.gguf``: streamlit only, every number from one
call into ``core/``; the page stays short."""

from __future__ import annotations

import streamlit as st

from core.cost import counts as cost
from core.cost import weight_bytes as weights
from core.cost.kv_shape import MODERN_PRESETS, PRESETS

KV_F16 = "16-bit (2 B) = llama.cpp f16"  # a label of core.cost.counts.kv_value_choices()

CARD_ARCH_AUTO = "assumed from the parameter count"  # the weights page uses the card's kv_shape

WEIGHTS_BILLIONS = "weights.billions"

WEIGHTS_GROUP = "weights.group"

WEIGHTS_SCALE_BITS = "weights.scale_bits"

WEIGHTS_CARD = "weights.card"

WEIGHTS_ARCH = "weights.arch"

WEIGHTS_GROUPED = "weights.grouped"

WEIGHTS_KV_TYPE = "weights.kv_type"

WEIGHTS_BATCH = "weights.batch"

WEIGHTS_OVERHEAD_GB = "weights.overhead_gb"

WEIGHTS_BUDGET_GB = "weights.budget_gb"

WEIGHTS_BUDGET_FIG = "weights.budget_fig"

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    WEIGHTS_BILLIONS: 7.0,
    WEIGHTS_GROUP: 32,
    WEIGHTS_SCALE_BITS: 16,
    WEIGHTS_CARD: "7B, Q4, 8K",
    WEIGHTS_ARCH: CARD_ARCH_AUTO,
    WEIGHTS_GROUPED: True,
    WEIGHTS_KV_TYPE: KV_F16,
    WEIGHTS_BATCH: 1,
    WEIGHTS_OVERHEAD_GB: 1.0,
    WEIGHTS_BUDGET_GB: 8.0,
}


kw = {"persist_state": "session"}


def card_architectures() -> dict:
    """The KV shapes a card's reader may choose instead of the card's own guess: name → ``KVShape`` (the memory
    page's real-model presets, then today's architectures not among them)."""
    return {
        **dict(list(PRESETS.items())[3:]),
        **{k: v for k, v in MODERN_PRESETS.items() if v not in PRESETS.values()},
    }


def card_weights(card) -> bool:
    """The card's weight bill as the chapter reads it, then the next step: step 1 the nominal bytes
    ("7B, Q4": 3.5 GB), the group-scale switch for a bare bit count, step 2 what scales add.
    Returns whether the weights are stored in groups with scales (the switch; False for formats
    that count their own)."""
    fmt = card.weight_format
    grouped = False
    first = weights.card_weight_steps(card, False)[0]
    st.markdown(first)
    if fmt.counts_scales:
        st.caption(f"{fmt.name}'s bits per weight already count its scales: no group scale is added.")
    else:
        grouped = st.toggle(
            "Weights stored in groups of 32 with one fp16 scale each",
            help="The card gives only the code width: a group-wise format adds 16/32 = 0.5 bits per weight.",
            key=WEIGHTS_GROUPED,
            **kw,
        )
    st.markdown(weights.card_weight_steps(card, grouped)[1])
    return grouped


def serving_controls() -> tuple[object, int, float, float]:
    """KV precision (bytes per value), requests, overhead (GB) and budget (GB), in one row."""
    c = st.columns(4)
    kv_choices = cost.kv_value_choices()
    kv_label = c[0].selectbox("KV precision", list(kv_choices), key=WEIGHTS_KV_TYPE, **kw)
    batch = c[1].number_input("Requests (batch)", 1, 100_000, key=WEIGHTS_BATCH, **kw)
    overhead_gb = c[2].number_input(
        "Overhead (GB, an assumption)",
        0.0,
        10_000.0,
        step=0.25,
        key=WEIGHTS_OVERHEAD_GB,
        help="Activations, workspace, runtime: set what your system needs.",
        **kw,
    )
    budget_gb = c[3].number_input("Memory budget (GB)", 0.1, 100_000.0, step=1.0, key=WEIGHTS_BUDGET_GB, **kw)
    return kv_choices[kv_label][0], int(batch), overhead_gb, budget_gb
