"""Batching: several requests, one forward pass per step, each with its own KV cache rows."""

import streamlit as st

from core.serving.batch import LAYOUTS
from ui import batching, models
from ui.models import shipped_only_note, tokenizer
from ui.page import reset, show_message, text_box, title
from ui.present import beside, button_rows, presenter_mode

tok, model = tokenizer(), models.model()
title("batching")
shipped_only_note("batching")
st.caption(
    "Many requests, fewer passes. Ch. 19: batching improves hardware use, but every request needs its own "
    "context state. Ch. 30 §30.4: for unequal lengths the sum of processed lengths replaces B·T. Greedy "
    "decoding on the shipped model."
)

present = presenter_mode()
# Presenter mode: the controls left, the batch's cache right, on the first screen (under full-width controls the
# figure came at ~980 px, after a click); the batch of the default prompts is prefilled on opening the page.
controls, view = beside((2, 3))
kw = {"persist_state": "session"}
with controls:
    left, right = (st.container(), st.container()) if present else st.columns([3, 2])
    text_box(
        left,
        "Prompts, one per line (up to 16)",
        limit=batching.PROMPTS_CHARS,
        area=True,
        height=130,
        key=batching.BATCH_PROMPTS,
        **kw,
    )
    text_box(
        right,
        "Tokens to generate per request",
        limit=batching.BUDGETS_CHARS,
        key=batching.BATCH_BUDGETS,
        help="One per prompt; the end token also ends one.",
        **kw,
    )
    layout = right.radio(
        "Hold unequal lengths by",
        LAYOUTS,
        horizontal=True,
        key=batching.BATCH_LAYOUT,
        format_func=batching.LAYOUT_NAMES.get,
        **kw,
    )
    buttons = [
        ("Prefill the batch", lambda: batching.new_batch(model, tok)),
        ("Step ▸ (one pass)", batching.step),
        ("Run to the end", batching.run_all),
        ("Reset", reset(batching.DEFAULTS, batching.BATCH_OBJ, batching.BATCH_ERROR)),
    ]
    button_rows(buttons, 2 if present else 4)
    show_message(batching.BATCH_ERROR)
if present:
    batching.prefill_once(model, tok)
batch = st.session_state.get(batching.BATCH_OBJ)
if batch is None:
    view.info("Press **Prefill the batch**: all prompts go through one forward pass together.")
else:
    batching.batch_view(model, tok, batch, layout, view)

batching.measured_section(model, tok)
