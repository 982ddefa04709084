"""What the KV cache holds, and what it is not: two speeds from a real run (Ch. 19), Table 30.1 and
Figure 30.1's point (Ch. 30 §30.2), and the reuse conditions checked with the real model (§30.4)."""

import streamlit as st

from core.cost.counts import kv_cache_bytes_for
from core.decode.cache_not import answer_cache_vs_kv_cache
from core.decode.two_speeds import PHASES, PROMPT_PRESETS, TABLE_30_1_PROMPT, TABLE_30_1_STEPS, table_30_1
from core.text import markdown_literal
from ui import cache_demo
from ui.models import model, shipped_only_note
from ui.page import readable_table, refuse, text_box, title

title("cache")
shipped_only_note("cache")
st.caption(
    "Ch. 19 “Two speeds, one model” and Ch. 30 §30.2 and §30.4. Every number below comes from the shipped "
    "model running on this server: its own KV cache, read after each pass."
)

st.subheader("Two speeds, one model")
box, *presets = st.columns([4, 2, 2], vertical_alignment="bottom")  # one row: the figure on a projector's screen
for col, (label, text) in zip(presets, PROMPT_PRESETS.items(), strict=True):  # Ch. 19's picture, Table 30.1's
    col.button(label, on_click=st.session_state.update, args=({cache_demo.CACHE_PROMPT: text},), width="stretch")
prompt = text_box(box, "Prompt", limit=2_000, key=cache_demo.CACHE_PROMPT, persist_state="session")
if prompt is None:
    st.stop()
try:
    passes = cache_demo.two_speeds(prompt)
except ValueError as err:
    refuse(err)
    st.stop()
# Presenter mode: at most 480 px tall, so the figure and its caption end on the first screen (they ended at 1,087 px).
cache_demo.two_speeds_chart(passes, key=cache_demo.CACHE_TWO_SPEEDS, present_max_px=480)
left, right = st.columns(2)
left.markdown("**What changes between the two phases?** (Ch. 19)")
left.table(readable_table(list(PHASES)), hide_index=True)
left.caption(
    "Ch. 19 “What the cache stores”: each transformer layer stores its own keys and values. For causal attention, "
    "earlier tokens cannot attend to the appended token, so their states remain valid when we extend a fixed "
    "prefix at the same positions. The query is needed now; old queries need not be saved for later attention."
)
right.markdown("**Table 30.1 — A token is not cached before being consumed** (a run of Example 30.1's eight positions)")
eight = cache_demo.two_speeds(TABLE_30_1_PROMPT, TABLE_30_1_STEPS)  # whatever prompt the figure above shows
right.table(readable_table(table_30_1(eight)), hide_index=True)
right.caption(
    "Example 30.1: the prompt's positions include any required special tokens, and the final prompt position "
    "supplies the logits for output token 1. "
    "An emitted ID does not already contain its layer-by-layer K/V; the next forward pass makes them (Figure 30.1, "
    "drawn whole on *Latency on a timeline*). Having many processors does not by itself reveal the next ID before "
    "selection: each decode step waits for the choice before it. A particular server may retain or discard "
    "different amounts after stopping; its trace must state which point is measured."
)

st.subheader("What the cache is not")
st.caption(
    "Retained K/V are valid only for the same token IDs at the same positions, through the same weights and "
    "attention rule (Ch. 30 §30.4). Each row prefills the text once more with one thing changed and compares "
    "every layer's stored keys and values with the reference run's, position by position."
)
a, b = st.columns(2)
text = text_box(a, "Reference text", limit=2_000, key=cache_demo.CACHE_TEXT, persist_state="session")
edited = text_box(b, "The same text, edited", limit=2_000, key=cache_demo.CACHE_EDITED, persist_state="session")
if text is None or edited is None:
    st.stop()
try:
    rows = cache_demo.checks(text, edited)
except ValueError as err:
    refuse(err)
    st.stop()
table = [
    {
        "changed": r.condition,
        "how": r.change,
        "max |ΔK|": f"{r.max_key_diff:.3g}",
        "max |ΔV|": f"{r.max_value_diff:.3g}",
        "first layer that differs": "none" if r.first_layer_diff is None else str(r.first_layer_diff),
        "first position that differs": "none" if r.first_position_diff is None else str(r.first_position_diff),
        "reuse the reference cache?": "yes: every number equal" if r.reusable else "no",
    }
    for r in rows
]
st.table(readable_table(table), hide_index=True)  # wraps its cells: a dataframe cut its last column on a projector
shifted = next(r for r in rows if r.condition == "positions")
if shifted.max_value_diff < 1e-4 <= shifted.max_key_diff:
    st.caption(
        f"Shifted positions: the keys differ by up to {shifted.max_key_diff:.3g} because RoPE rotates each key by "
        f"its absolute position before it is stored; the values differ only by float rounding "
        f"({shifted.max_value_diff:.1g}): RoPE's scores depend on relative positions. A cache made at other "
        "positions still cannot stand in: its keys are rotated for the wrong places."
    )

st.subheader("A chat transcript is text; the answer cache is not the KV cache")
transcript = text_box(
    st, "A stored chat transcript (a text record)", limit=5_000, area=True, key=cache_demo.CACHE_TRANSCRIPT,
    persist_state="session",
)  # fmt: skip
if transcript is None:
    st.stop()
try:
    turn = cache_demo.chat(transcript)
except ValueError as err:
    refuse(err)
    st.stop()
c1, c2 = st.columns(2)
c1.metric("Prefilled again to continue it", f"{turn.transcript_tokens} positions")
c2.metric("Weights changed by the conversation", "no" if turn.digest_before == turn.digest_after else "yes")
st.markdown("The model's continuation: " + markdown_literal(turn.reply))
st.caption(
    f"Weights' SHA-256 before and after: {turn.digest_before[:16]}… and {turn.digest_after[:16]}…. Reuse speeds "
    "generation without updating the weights: no learning during a conversation."
)
side = answer_cache_vs_kv_cache(turn, kv_cache_bytes_for(model().cfg, turn.transcript_tokens + 8, 4))
st.table(readable_table(side), hide_index=True)
