"""Paged KV cache: a pool of fixed-size blocks, block tables, shared prefixes, continuous batching."""

import streamlit as st

from core.model.tokenizer import decode, end_token_id
from core.serving.paged_presets import PRESETS, build_engine, preset_requests, request_rows
from core.serving.scheduler import POLICIES
from core.viz.paged import fig_block_pool, fig_block_tables, fig_policy_comparison
from ui import models, references, runs
from ui import paged as paged_ui
from ui.models import shipped_only_note, tokenizer
from ui.page import chart, chart_in
from ui.present import presenter_mode

MAX_POOL_BYTES = 8 * 2**20  # per session: a classroom server holds one pool per student
SETTINGS = (paged_ui.PAGED_PRESET, paged_ui.PAGED_POLICY, paged_ui.PAGED_BLOCK_SIZE, paged_ui.PAGED_N_BLOCKS)
tok, model = tokenizer(), models.model()
st.title("Paged KV cache")
shipped_only_note("paged")
if not presenter_mode():
    st.caption(
        "Ch. 30 §30.4: allocated blocks and reserved capacity make real allocation larger than the payload. "
        "PagedAttention (Kwon et al., 2023, §4.1): positions live in fixed-size blocks anywhere in one pool; each "
        "request's block table maps its logical blocks to physical ones. Greedy, on the shipped model."
    )
c = st.columns([3, 2, 1.3, 1.3])
c[0].selectbox("Requests", PRESETS, key=paged_ui.PAGED_PRESET, persist_state="session")
c[1].radio(
    "Batching",
    POLICIES,
    key=paged_ui.PAGED_POLICY,
    horizontal=True,
    persist_state="session",
    help="Continuous: newcomers join at any step. Static: a batch starts only when the previous one is done.",
)
# Bounded in the box, as the pool is (unbounded, a 20-digit size stayed typed while the page named the last one sent).
c[2].number_input(
    "Block size (positions)", 1, model.cfg.block_size, key=paged_ui.PAGED_BLOCK_SIZE, persist_state="session"
)
c[3].number_input("Pool (blocks)", 1, 256, key=paged_ui.PAGED_N_BLOCKS, persist_state="session")


def rebuild() -> None:
    preset, policy, block_size, n_blocks = (st.session_state[k] for k in SETTINGS)
    st.session_state[paged_ui.PAGED_SETTINGS] = tuple(st.session_state[k] for k in SETTINGS)
    try:
        specs = preset_requests(preset, tok)
        kw = dict(end_id=end_token_id(tok), max_pool_bytes=MAX_POOL_BYTES)
        engine = build_engine(model, specs, int(n_blocks), int(block_size), policy, **kw)
    except ValueError as err:
        kept = " The previous run stays on screen." if st.session_state[paged_ui.PAGED_ENGINE] else ""
        st.session_state[paged_ui.PAGED_MESSAGE] = f"{str(err)[0].upper()}{str(err)[1:]}.{kept}"
        return
    st.session_state.update(
        {paged_ui.PAGED_ENGINE: engine, paged_ui.PAGED_BUILT: (preset, int(block_size), int(n_blocks))}
    )
    st.session_state[paged_ui.PAGED_MESSAGE] = None


def step() -> None:
    engine = st.session_state[paged_ui.PAGED_ENGINE]
    if engine is not None and not engine.done:
        engine.step()


def run_all() -> None:
    if st.session_state[paged_ui.PAGED_ENGINE] is not None:
        st.session_state[paged_ui.PAGED_ENGINE].run()


if st.session_state[paged_ui.PAGED_SETTINGS] != tuple(st.session_state[k] for k in SETTINGS):
    rebuild()
b = st.columns(3)
b[0].button("Step ▸ (one pass)", type="primary", on_click=step, width="stretch")
b[1].button("Run to the end", on_click=run_all, width="stretch")
b[2].button("Reset", on_click=rebuild, width="stretch")
if st.session_state[paged_ui.PAGED_MESSAGE]:
    st.warning(st.session_state[paged_ui.PAGED_MESSAGE])
engine = st.session_state[paged_ui.PAGED_ENGINE]
if engine is None:
    st.stop()
cache, last = engine.cache, engine.history[-1] if engine.history else None
counts = {s: len(engine.of(s)) for s in ("running", "waiting", "finished")}
status = (
    f"**Step {engine.steps}** · {counts['running']} running, {counts['waiting']} waiting, {counts['finished']} "
    f"finished of {len(engine.requests)} requests · blocks of {cache.block_size} positions = "
    f"{cache.bytes_per_block:,} B · {engine.policy} batching"
)
if engine.done:
    st.success(f"{status}  \nEvery request has finished and freed its blocks: the pool is empty. Reset replays.")
elif last:
    st.info(status + "".join(f"  \nStep {last.step}: {e}" for e in last.said()))
else:
    st.info(f"{status}  \nPress **Step ▸**: requests that have arrived are prefilled together, one pass per step.")

pool_tab, policy_tab, text_tab = st.tabs(["Pool, block tables, bytes", "Static vs continuous", "Requests and text"])
left, right = pool_tab.columns([3, 2])
label_px = 18 if presenter_mode() else 14  # the blocks' labels: 14 px was a projector's smallest text
chart_in(left, fig_block_pool(cache, engine.requests, label_px=label_px), key=paged_ui.PAGED_POOL)
chart_in(right, fig_block_tables(cache, engine.requests, label_px=label_px), key=paged_ui.PAGED_TABLES)
m = engine.memory()
g = pool_tab.columns(4)
g[0].metric(
    "Preallocated for the window",
    f"{m.preallocated:,} B",
    help=f"One KVCache per running request, each for the whole {model.cfg.block_size}-position window.",
)
quiet = dict(delta_color="off", delta_arrow="off")  # the deltas are breakdowns, not changes
g[1].metric(
    "Paged: blocks in use",
    f"{m.paged:,} B",
    f"{m.fragmentation:,} B unused",
    help="Blocks in use × bytes per block; a shared block once. Fragmentation: the unused tail of each "
    "request's last block (at most one partly filled block per request).",
    **quiet,
)
g[2].metric(  # not "ideal": with shared prefix blocks the paged figure can be the smaller one
    "Payload, unshared",
    f"{m.payload:,} B",
    f"{cache.bytes_per_position:,} B × {m.positions} positions",
    help="2·L·H_kv·d·b·Σ lengths (Ch. 30 §30.4): every request's positions counted, a shared prefix once "
    "per request. Shared blocks store it once, so paged can be below this.",
    **quiet,
)
saved = m.blocks_unshared - m.blocks_used
g[3].metric(f"Sharing saves {saved} of {m.blocks_unshared} blocks", f"{m.shared_block_saving:.0%}")
pool_tab.caption(
    "Blocks: the coloured part is filled, hatched ×n = shared by n requests, blank = free. "
    f"Payload, unshared = 2·L·H_kv·d·b·Σ lengths = {cache.bytes_per_position:,} B × {m.positions} positions. "
    f"Internal fragmentation: {m.fragmentation:,} B, the unused tail of each request's last block (at most one "
    f"partly filled block per request). Shared blocks store {m.shared_saving:,} B of the payload once: "
    "paged = payload − shared + fragmentation."
)
references.cite("kwon", pool_tab)  # logical vs physical blocks: the block tables above

compare = runs.policy_comparison(*st.session_state[paged_ui.PAGED_BUILT])  # the shown run's preset and sizes
with policy_tab:
    chart(fig_policy_comparison(compare), key=paged_ui.PAGED_COMPARE_FIG)
policy_tab.caption(
    " · ".join(
        f"**{p}**: {s['tokens']} tokens in {s['steps']} steps = {s['tokens_per_step']:.2f} tokens per step, mean wait "
        f"{s['mean_wait']:.1f} steps, mean TTFT {s['mean_ttft']:.1f} steps"
        for p, s in ((p, run.summary) for p, run in compare.items())
    )
)
text_tab.dataframe(request_rows(engine.requests, lambda ids: decode(tok, ids)), hide_index=True)
