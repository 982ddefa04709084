"""The GGUF sections of three pages, as layout: one block of a real format under the quantization
ruler, the shipped model as a GGUF download on the weights page, and a memory plan from a real
.gguf file on the KV-cache memory page (issue 16). Like ``ui.decode.actions``: streamlit only, every number
from one call into ``core/``; the pages stay short.

Files: the plan reads only the app's own exports, the ``*.gguf`` directly in the folder the
operator names on the command line (``streamlit run main.py -- --models-dir DIR``, chosen from a
list by name) and uploads (within streamlit's upload limit). Never a path a student types.
"""

from __future__ import annotations

import sys

import streamlit as st

from core.checkpoints.app_options import parse_app_args, script_args
from core.checkpoints.gguf_files import list_gguf_files, read_from_models_dir, read_upload
from core.cost import counts as cost
from core.cost.gguf_plan import budget_bytes, gguf_memory_plan, plan_parts_gib, plan_size, slides
from core.cost.weight_bytes import verdict
from core.gguf.writer import EXPORT_FORMATS, export_file
from core.quant import ruler_block as ruler_blocks
from core.quant.ruler_block import BLOCK_FORMATS, block_count
from core.text import markdown_literal, plural
from core.viz.memory import fig_memory_budget
from core.viz.quant import fig_block
from core.viz.theme import described
from ui import figures, tables
from ui.models import model, tokenizer
from ui.page import chart, refuse

# The memory page's plan from a .gguf file: where the file comes from, and the plan's terms.
GGUF_EXPORTS, GGUF_FOLDER, GGUF_UPLOAD = "this app's exports", "the models folder (--models-dir)", "upload a .gguf"

MEMORY_GGUF_FILE = "memory.gguf_file"

MEMORY_GGUF_N_CTX = "memory.gguf_n_ctx"

MEMORY_GGUF_SHOWN = "memory.gguf_shown"

MEMORY_GGUF_SOURCE = "memory.gguf_source"

MEMORY_GGUF_EXPORT = "memory.gguf_export"

MEMORY_GGUF_CACHE_TYPE = "memory.gguf_cache_type"

MEMORY_GGUF_BUDGET_GIB = "memory.gguf_budget_gib"

WEIGHTS_EXPORT_FORMAT = "weights.export_format"

QUANT_BLOCK = "quant.block"

QUANT_BLOCK_FORMAT = "quant.block_format"

MEMORY_GGUF_SWA_FULL = "memory.gguf_swa_full"  # bool: llama.cpp's --swa-full (local layers at n_ctx)

MEMORY_GGUF_BUDGET_FIG = "memory.gguf_budget_fig"

QUANT_BLOCK_FIG = "quant.block_fig"

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    MEMORY_GGUF_SOURCE: GGUF_EXPORTS,
    MEMORY_GGUF_EXPORT: "Q4_0",
    MEMORY_GGUF_FILE: None,  # a name listed in the models folder
    MEMORY_GGUF_N_CTX: 4096,
    MEMORY_GGUF_SHOWN: None,  # (name, bytes) of the file whose context length set n_ctx
    MEMORY_GGUF_CACHE_TYPE: "f16",
    MEMORY_GGUF_BUDGET_GIB: 8.0,  # GiB: the GGUF plan speaks MiB/GiB throughout
    WEIGHTS_EXPORT_FORMAT: "Q4_0",
    QUANT_BLOCK_FORMAT: "Q4_0",  # the real-format block under the ruler (core.quant.ruler_block.BLOCK_FORMATS)
    QUANT_BLOCK: 0,  # which block of 32 values
    MEMORY_GGUF_SWA_FULL: False,
}


kw = {"persist_state": "session"}
MAX_N_CTX = 10**7  # positions; a crafted header may claim any context length
UPLOAD_MB = 1  # .streamlit/config.toml's server.maxUploadSize (streamlit's "MB" is 2²⁰ bytes); nginx admits the same


# ---- the ruler: one block ------------------------------------------------------------------------


def ruler_block(values) -> None:
    """The ruler's values as one 32-value block of llama.cpp's Q4_0 … Q8_0, byte by byte."""
    st.subheader("One block of a real format (llama.cpp)")
    st.caption(
        "The ruler above is the chapters' teaching format (teaching int4: −7 … 7, ties to even, one scale "
        "for the whole list). llama.cpp stores blocks of 32 values, each with its own fp16 scale (and min): "
        "these are its formats byte for byte — the same bytes as the `gguf` package's quantizer."
    )
    a, b = st.columns([3, 1])
    fmt = a.radio("Block format", BLOCK_FORMATS, key=QUANT_BLOCK_FORMAT, horizontal=True, **kw)
    n_blocks = block_count(values)
    st.session_state[QUANT_BLOCK] = min(int(st.session_state[QUANT_BLOCK]), n_blocks - 1)
    index = b.number_input(
        f"Block (0 … {n_blocks - 1})", 0, n_blocks - 1, key=QUANT_BLOCK, disabled=n_blocks == 1, **kw
    )
    try:
        blk = ruler_blocks.ruler_block(values, fmt, int(index))
    except ValueError as err:
        refuse(err, f"Cannot store these values as {fmt}: ")
        return
    v = blk.view
    st.markdown(blk.sentence + ".")
    m = st.columns(4)
    m[0].metric("scale d (fp16)", f"{v.d:.8g}", help=f"Stored in bytes 0–1: {v.raw[:2].hex(' ')} (little-endian).")
    m[1].metric("min m (fp16)", "—" if v.m is None else f"{v.m:.8g}", help="Q4_1 and Q5_1 store a min too.")
    m[2].metric("bytes per block", len(v.raw))
    m[3].metric("bits per weight", f"{float(blk.bits_per_weight):g}", help="8 · bytes per block / 32 values.")
    chart(figures.figure(fig_block, v, blk.n_appended), key=QUANT_BLOCK_FIG)
    st.markdown(f"The block's {len(v.raw)} bytes in file order (hex): `{v.hex}`")
    left, right = st.columns([2, 3])
    left.table(tables.arrow(v.byte_parts()), hide_index=True)
    if v.packing():
        right.table(tables.arrow(v.packing()), hide_index=True)
        right.caption("Low nibble first: byte j of qs holds value j in its low 4 bits, value j + 16 in its high 4.")
    with st.expander("Every value: stored code, q, x̂ = d·q (+ m), error, where its bits are"):
        st.dataframe(tables.arrow(v.rows()), hide_index=True)


# ---- the weights page: export --------------------------------------------------------------------


@st.cache_data(show_spinner="Writing the GGUF file…", max_entries=len(EXPORT_FORMATS))
def exported(fmt: str):
    """The shipped model as a GGUF file (``core.gguf.writer.export_file``): deterministic, so
    written once per format for every session."""
    return export_file(model(), tokenizer(), fmt)


@st.cache_data(show_spinner=False, max_entries=len(EXPORT_FORMATS))
def exported_summary(fmt: str):
    """The header and tensor table of ``exported(fmt)``, read back as any uploaded file is."""
    f = exported(fmt)
    return read_upload(f.data, f.file_name)


def export_section() -> None:
    """A download button for the shipped model as GGUF F32, F16, Q8_0 or Q4_0, naming its size."""
    st.subheader("The shipped model as a GGUF file")
    st.caption(
        "GGUF is what llama.cpp, Ollama and LM Studio load. F32 keeps every tensor in float32; F16 stores the "
        "matrices in fp16; Q8_0 and Q4_0 store the block projections in llama.cpp's block formats (as *Quantizing "
        "the model* does) and keep the embedding, output head and norms in float32."
    )
    a, b = st.columns([2, 3])
    fmt = a.radio("Format", EXPORT_FORMATS, key=WEIGHTS_EXPORT_FORMAT, horizontal=True, **kw)
    f = exported(fmt)
    b.download_button(
        f"Download {f.file_name} ({len(f.data):,} bytes)",
        data=lambda: exported(fmt).data,
        file_name=f.file_name,
        mime="application/octet-stream",
        icon=":material/download:",
        on_click="ignore",
    )
    st.markdown(
        f"**{len(f.data):,} bytes** = {f.header_bytes:,} B header (metadata, tokenizer, tensor table) + "
        f"{f.storage_bytes:,} B of tensor data"
        + (f" + {f.padding_bytes:,} B of alignment between tensors" if f.padding_bytes else "")
        + ". Read it back on *KV-cache memory* (a memory plan from this file)."
    )


# ---- the memory page: a plan from a .gguf file ---------------------------------------------------


def models_dir():
    """The folder named by ``--models-dir`` on the app's command line, or None; a bad command line
    is said once here."""
    try:
        return parse_app_args(script_args(sys.argv)).models_dir
    except ValueError as err:
        refuse(err, "The app's ", level="warning")
        return None


def _summary():
    """The chosen file's ``GGUFSummary``, or None (with a message or a hint shown)."""
    sources = (GGUF_EXPORTS, GGUF_FOLDER, GGUF_UPLOAD)
    source = st.radio("The file", sources, key=MEMORY_GGUF_SOURCE, horizontal=True, **kw)
    try:
        if source == GGUF_EXPORTS:
            fmt = st.radio("Export", EXPORT_FORMATS, key=MEMORY_GGUF_EXPORT, horizontal=True, **kw)
            return exported_summary(fmt)
        if source == GGUF_FOLDER:
            folder = models_dir()
            if folder is None:
                st.info(
                    "No models folder: start the app with `streamlit run main.py -- --models-dir DIR` to list "
                    "the .gguf files in DIR here (students choose from the list; nobody types a path)."
                )
                return None
            files = {f.name: f for f in list_gguf_files(folder)}
            if not files:
                st.info("The models folder holds no .gguf files.")
                return None
            if st.session_state.get(MEMORY_GGUF_FILE) not in files:
                st.session_state[MEMORY_GGUF_FILE] = next(iter(files))
            name = st.selectbox(
                "File in the models folder",
                list(files),
                key=MEMORY_GGUF_FILE,
                format_func=lambda n: f"{n} ({plan_size(files[n].size_bytes)})",
                **kw,
            )
            return read_from_models_dir(folder, name)
        up = st.file_uploader(f"Upload a .gguf file (≤ {UPLOAD_MB} MiB)", type=["gguf"], max_upload_size=UPLOAD_MB)
        if up is None:
            st.info("A real model is larger than the upload limit: a teacher can put it in the models folder.")
            return None
        return read_upload(up.getvalue(), up.name, max_bytes=UPLOAD_MB * 2**20)
    except ValueError as err:  # may quote the file (a tensor name): literally
        refuse(err)
        return None


def gguf_plan_section() -> None:
    """Header facts, the tensor table, then weights + KV cache for a chosen n_ctx and cache type
    against a budget."""
    st.subheader("A memory plan from a real .gguf file")
    st.caption(
        "Only the header and the tensor table are read (memory-mapped): a file of several GiB reads in well under a "
        "second. Weights = the tensors' bytes (parameters × bits per weight ÷ 8, Ch. 19; a quantized block's "
        "scales included); the KV cache from the file's layers, KV heads and head size."
    )
    s = _summary()
    if s is None:
        return
    left, right = st.columns([2, 3])
    facts = s.facts()  # the header's strings are the file's: shown literally, never as markdown
    left.table({"": list(facts), "from the header": [markdown_literal(v) for v in facts.values()]}, hide_index=True)
    with right:
        count = st.column_config.NumberColumn(format="localized")
        st.dataframe(s.tensor_rows(), hide_index=True, column_config={"values": count, "bytes": count})
        st.caption(
            "Every tensor: its ggml type and bytes. By type: "
            + "; ".join(f"{t} {plural(r['tensors'], 'tensor')}, {r['bytes']:,} B" for t, r in s.by_type().items())
        )
    if st.session_state.get(MEMORY_GGUF_SHOWN) != (s.source, s.file_bytes):  # a new file: its own context
        st.session_state[MEMORY_GGUF_SHOWN] = (s.source, s.file_bytes)
        st.session_state[MEMORY_GGUF_N_CTX] = min(s.context_length or DEFAULTS[MEMORY_GGUF_N_CTX], MAX_N_CTX)
    # Hand each box its value again before drawing it: hidden for a run (a refused upload: no plan), the boxes
    # came back showing their first option and minimum (f32, 0.001 GiB) while the plan used f16 and 8 GiB.
    for key in (MEMORY_GGUF_N_CTX, MEMORY_GGUF_CACHE_TYPE, MEMORY_GGUF_BUDGET_GIB):
        st.session_state[key] = st.session_state[key]
    c = st.columns(3)
    n_ctx = c[0].number_input("n_ctx: positions", 1, MAX_N_CTX, key=MEMORY_GGUF_N_CTX, **kw)
    ctype = c[1].selectbox(
        "Cache type (llama.cpp --cache-type-k/v)", list(cost.KV_CACHE_TYPES), key=MEMORY_GGUF_CACHE_TYPE, **kw
    )
    budget = c[2].number_input(
        "Memory budget (GiB)", 0.001, 100_000.0, step=1.0, format="%.3f", key=MEMORY_GGUF_BUDGET_GIB, **kw
    )  # three decimals: its smallest value, 0.001 GiB (1.02 MiB), showed as 0.00 beside a 1.02 MiB budget
    swa_full = slides(s) and st.toggle(
        "--swa-full: cache local layers at full size", key=MEMORY_GGUF_SWA_FULL, **kw,
        help="llama.cpp keeps only the window (plus a micro-batch) for sliding-window layers unless --swa-full.",
    )  # fmt: skip
    try:
        plan = gguf_memory_plan(s, int(n_ctx), ctype, budget_bytes=budget_bytes(budget), swa_full=swa_full)
    except ValueError as err:  # may quote the header's architecture: literally
        refuse(err, "No plan: ")
        return
    for note in plan["notes"]:
        st.warning(note)
    unsure = not_counted_warning(plan["uncounted"])
    k, v, kv, total = (plan[x] for x in ("kv_cache/keys_bytes", "kv_cache/values_bytes", "memory/kv_cache", "total"))
    weights, rec = plan["memory/weights"], plan["memory/recurrent_state"]
    state_words = f"; recurrent state {plan_size(rec)} ({rec:,} bytes)" if rec else ""
    st.markdown(  # one unit for the whole plan: MiB (GiB from 1 GiB on) as llama.cpp logs its cache, bytes exact
        f"KV cache in {ctype} at {int(n_ctx):,} positions: K = **{plan_size(k)}**, V = **{plan_size(v)}**, "
        f"K + V = **{plan_size(kv)}** ({kv:,} bytes); weights {plan_size(weights)} ({weights:,} bytes){state_words}."
    )
    chart(budget_figure(plan, budget), key=MEMORY_GGUF_BUDGET_FIG)
    fits, text = verdict(total, budget_bytes(budget), plan_size)
    if unsure:
        text += " Not sure: it counts without the fields named above."
    say = st.info if unsure else st.success if fits else st.error
    say(text + " Compute buffers and the runtime are not counted.")


def not_counted_warning(fields) -> bool:
    """A warning naming the fields no reader here counts (``core.cost.config_fields``); True when there were any."""
    if not fields:
        return False
    shown = ", ".join(f"`{f}`" for f in fields[:12]) + (f" and {len(fields) - 12} more" if len(fields) > 12 else "")
    st.warning(
        f"Not counted: {shown}. These fields may change what a layer keeps, and no reader here models them: the "
        "numbers below leave them out, so they are not sure."
    )
    return True


def gib_budget_figure(parts_gib: dict, budget_gib: float, labels: dict, budget_label: str):
    """``core.viz.fig_memory_budget`` of ``parts_gib`` (GiB) against ``budget_gib``, its axis, budget line and hover
    in GiB (``labels``: each part's size as text; ``budget_label``: the budget line's)."""
    fig = fig_memory_budget(parts_gib, budget_gib, labels)
    fig.update_xaxes(title_text="memory (GiB = 2³⁰ bytes)")
    fig.update_annotations(text=budget_label)
    fig.update_traces(hovertemplate="%{fullData.name}<extra></extra>")
    return fig


def budget_figure(plan: dict, budget_gib: float):
    """``core.viz.fig_memory_budget`` (drawn in GB) with the plan's parts and budget in GiB, its text in GiB:
    the axis, the budget's label, the hover and the text alternative say the unit the plan uses."""
    labels = {"weights": plan_size(plan["memory/weights"]), "KV cache": plan_size(plan["memory/kv_cache"])}
    if plan.get("memory/recurrent_state"):
        labels["recurrent state"] = plan_size(plan["memory/recurrent_state"])
    budget_label = f"budget {plan_size(budget_bytes(budget_gib))}"
    fig = figures.figure(gib_budget_figure, plan_parts_gib(plan), budget_gib, labels, budget_label)
    need, have = plan["total"], budget_bytes(budget_gib)
    spare = f"{plan_size(have - need)} spare" if need <= have else f"{plan_size(need - have)} over the budget"
    items = " + ".join(f"{name} {size}" for name, size in labels.items())
    return described(fig, f"Needed: {items} = {plan_size(need)}, against a budget of {plan_size(have)}: {spare}.")
