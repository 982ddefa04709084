"""The context window page's session keys and their defaults."""

from __future__ import annotations

import streamlit as st

from core.checkpoints.choice import window_cap
from core.decode.settings import MEAN_HEADS
from ui.page import followable, put_back

CTX_WINDOW = "ctx.window"

CTX_POLICY = "ctx.policy"

CTX_N_NEW = "ctx.n_new"

CTX_STOP_AT_END = "ctx.stop_at_end"

CTX_LAYER = "ctx.layer"

CTX_HEAD = "ctx.head"

CTX_BYTES = "ctx.bytes"

CTX_HEAT = "ctx.heat"

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    CTX_POLICY: "sliding window",
    CTX_WINDOW: 64,
    CTX_N_NEW: 80,
    CTX_STOP_AT_END: False,  # off: generation reaches the wall; the page says where the text had ended
    CTX_LAYER: 2,
    CTX_HEAD: 3,
}
# The page's settings (core.lesson.pages.PAGES["context"]) -> their session keys.
SETTINGS = {
    "policy": CTX_POLICY,
    "window": CTX_WINDOW,
    "n_new": CTX_N_NEW,
    "layer": CTX_LAYER,
    "head": CTX_HEAD,
}
# Choices that depend on the model's shape (layer 3 does not exist in a 2-layer model).
MODEL_SHAPED = (
    CTX_LAYER,
    CTX_HEAD,
    CTX_WINDOW,
)


snapshot, show = followable("context", SETTINGS, DEFAULTS)  # the page you can follow (ui.session)


def forget_model(cfg, checkpoint: bool) -> None:
    """A switch of model: the layer, head and window back to their defaults within the new model's ``cfg``."""
    ss = st.session_state
    put_back(DEFAULTS, MODEL_SHAPED)
    ss[CTX_LAYER] = min(ss[CTX_LAYER], cfg.n_layer - 1)
    ss[CTX_HEAD] = ss[CTX_HEAD] if ss[CTX_HEAD] == MEAN_HEADS else min(ss[CTX_HEAD], cfg.n_head - 1)
    ss[CTX_WINDOW] = min(ss[CTX_WINDOW], window_cap(cfg))
