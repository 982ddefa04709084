"""The context window: the shelf meets the wall. Stop, truncate, or slide."""

import streamlit as st

from core.checkpoints.choice import CONTEXT_BUDGET, window_cap
from core.cost.counts import kv_cache_bytes_for
from core.decode import settings as decode_settings
from core.decode.context import POLICIES, band_matrix
from core.model.tokenizer import decode, encode, end_token_id, token_labels
from core.text import sentence
from core.viz.attention import fig_attention
from core.viz.context import fig_cache_over_time
from ui import context as context_ui
from ui import models, runs
from ui.decode import keys as decode_keys
from ui.page import chart, chart_in, refuse, title
from ui.present import beside, presenter_mode

tok, model, card = models.chosen_tokenizer(), models.chosen_model(), models.chosen_card()
cap = window_cap(model.cfg)
title("context")
st.caption(
    "The shelf meets the wall. Ch. 19 “The context window”: the window limits prompt plus continuation. Model "
    "training, positional encoding, and runtime memory all matter: a larger cache alone does not teach a model to "
    "use arbitrary distances reliably. At the limit an application must stop, discard older material, or summarize "
    "it. Here "
    + ("the shipped model" if card is None else card.name)
    + " meets a small window so the wall comes quickly."
)
if card is not None and cap < card.context_window:
    st.caption(
        f"{card.name}'s own context window is {card.context_window:,} positions; this page offers up to {cap:,}: "
        f"a run keeps its KV cache and every layer's attention for the figure, and one session may hold "
        f"{CONTEXT_BUDGET // 2**20} MiB of them."
    )

if model.cfg.positions == "learned":
    st.caption(
        f"{card.name} learns one position vector per absolute position, {model.cfg.block_size:,} of them: a sliding "
        "window keeps counting positions (nothing is re-rotated or renumbered), so it slides only up to there."
    )

present = presenter_mode()
controls, right = beside()  # presenter mode: controls left, the attention band right, on the first screen
a, b, c = [controls] * 3 if present else controls.columns(3)
policy = a.radio("At the wall", POLICIES, key=context_ui.CTX_POLICY, persist_state="session")
window = b.slider("Window (positions)", 16, cap, step=8, key=context_ui.CTX_WINDOW, persist_state="session")
n_new = c.slider("Tokens to generate", 10, 200, key=context_ui.CTX_N_NEW, persist_state="session")
prompt = st.session_state.get(decode_keys.DECODE_PROMPT, decode_settings.DEFAULT_PROMPT)
stop_at_end = a.toggle(
    "Stop at the end-of-text token",
    key=context_ui.CTX_STOP_AT_END,
    persist_state="session",
    help="As the decode page does. Off: keep generating so the cache reaches the wall.",
)
text = st.container() if present else controls  # the generated text: under the pair in presenter mode
text.caption("Prompt: the one on the decode page (edit it there).")
if not prompt.strip():
    text.info("The prompt on the decode page is empty (or only spaces): type one under **Prefill & decode** first.")
    st.stop()
try:
    run = runs.window_run(tuple(encode(tok, prompt)), n_new, window, policy, stop_at_end, models.chosen_source())
except ValueError as err:
    refuse(err)
    st.caption("Lengthen the window, or pick “truncate the prompt” to drop its oldest tokens.")
    st.stop()
if run.note:
    text.info(sentence(run.note))
# ▶ … ◀ rather than ⟨ ⟩: in the code font the angle brackets read as parentheses ("Assistant:( Yes").
text.code(decode(tok, run.prompt_used) + "▶" + decode(tok, run.tokens) + "◀", language=None, wrap_lines=True)
end_at = run.end_at(end_token_id(tok))
if end_at is not None and not stop_at_end:
    text.info(
        f"The model wrote its end-of-text token as output token {end_at + 1}: the decode page ends the request "
        "there. This page keeps generating so the cache reaches the wall; what follows the token is a new "
        "document the model starts on its own, not an answer to the prompt."
    )
text.caption("▶ … ◀ marks the generated continuation (greedy).")

l1, l2 = (controls if present else right).columns(2)
layer = l1.selectbox("Layer", range(model.cfg.n_layer), key=context_ui.CTX_LAYER, persist_state="session")
head = l2.selectbox(
    "Head", [decode_settings.MEAN_HEADS, *range(model.cfg.n_head)], key=context_ui.CTX_HEAD, persist_state="session"
)
att = band_matrix(run, layer, None if isinstance(head, str) else head)
chart_in(
    right,
    fig_attention(
        att,
        token_labels(tok, run.consumed),
        1,
        f"Layer {layer} · {head if isinstance(head, str) else f'head {head}'}: positions asking vs positions scored "
        "(blank: masked, or evicted from the window)",
        earlier="computed in earlier passes",  # a sliding window has evicted the keys of many of them
    ),
    key=context_ui.CTX_HEAT,
    present_max_px=640,
)
per_pos = kv_cache_bytes_for(model.cfg, 1, 4)  # the page runs float32
chart(
    fig_cache_over_time(
        run.cache_bytes,
        kv_cache_bytes_for(model.cfg, window, 4),
        f"Cache bytes after each pass ({per_pos:,} bytes per position, float32)",
    ),
    key=context_ui.CTX_BYTES,
)
st.markdown("""
**What sliding does.** When the window is full the oldest position's keys and values are dropped; the cache and
its bytes stay flat, and each new attention row covers only the last *window* positions (the band above).
**RoPE:** a cached key keeps the rotation of its original position and a new query is rotated by its own, so
their score depends only on the distance between them: nothing needs re-rotating after an eviction. But the
keys and values of deeper layers were computed while the evicted tokens were still visible, so the window
still carries traces of them: sliding is not the same as re-reading the last *window* tokens from scratch.

**Truncating** drops the oldest prompt tokens before prefill so prompt + continuation fit; **stopping** ends the
request at the wall. **Summarizing** older material is one more input to the model, written by someone, with
possible omissions. A card such as “7B, Q4, 8K” states the context window in tokens: 8K = 8,192 positions for
prompt and continuation together; the cache for all of them is a separate memory bill.
""")
