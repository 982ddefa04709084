"""The weights page's model-card section, as layout: the card's weights in two steps (nominal,
then scales) and the serving controls. Like ``ui.gguf``: streamlit only, every number from one
call into ``core/``; the page stays short."""

from __future__ import annotations

import streamlit as st

from core import state
from core.cost import counts as cost
from core.cost import weight_bytes as weights
from core.cost.kv_shape import MODERN_PRESETS, PRESETS

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
            key=state.WEIGHTS_GROUPED,
            **kw,
        )
    st.markdown(weights.card_weight_steps(card, grouped)[1])
    return grouped


def serving_controls() -> tuple[object, int, float, float]:
    """KV precision (bytes per value), requests, overhead (GB) and budget (GB), in one row."""
    c = st.columns(4)
    kv_choices = cost.kv_value_choices()
    kv_label = c[0].selectbox("KV precision", list(kv_choices), key=state.WEIGHTS_KV_TYPE, **kw)
    batch = c[1].number_input("Requests (batch)", 1, 100_000, key=state.WEIGHTS_BATCH, **kw)
    overhead_gb = c[2].number_input(
        "Overhead (GB, an assumption)",
        0.0,
        10_000.0,
        step=0.25,
        key=state.WEIGHTS_OVERHEAD_GB,
        help="Activations, workspace, runtime: set what your system needs.",
        **kw,
    )
    budget_gb = c[3].number_input("Memory budget (GB)", 0.1, 100_000.0, step=1.0, key=state.WEIGHTS_BUDGET_GB, **kw)
    return kv_choices[kv_label][0], int(batch), overhead_gb, budget_gb
