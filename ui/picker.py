"""The sidebar's model picker and the card of the checkpoint in use, and a refused choice said in the
main area. What is loaded and kept per session is ``ui.models``; a student picks a name from the
list, never a path."""

from __future__ import annotations

import streamlit as st

from core.cost.counts import kv_cache_bytes_for
from core.text import sentence
from ui import models, tables

# How a teacher adds a checkpoint without internet (issue 37): where the folder goes, the flag, the restart.
OFFLINE_STEPS = (
    "Your own checkpoint, offline: copy its folder (`config.json`, `tokenizer.json`, `*.safetensors`) into one "
    "models folder, DIR, then **restart** the app with `streamlit run main.py -- --models-dir DIR` (installed: "
    "`inference-explainer --models-dir DIR`). The option is read at start-up only; the app never downloads. "
    "Step by step: docs/models.md."
)


def refusal_note() -> None:
    """A refused choice, said where the class looks (the main area), once."""
    kept = st.session_state.get(models.MODEL_REFUSAL)
    if kept and not st.session_state.get(models.MODEL_REFUSAL_SHOWN) == kept:
        st.session_state[models.MODEL_REFUSAL_SHOWN] = kept
        name, message = kept
        now = "the shipped model" if models.active().path is None else models.active().name
        st.error(sentence(f"Cannot use {name}: {message}. The pages use {now}"))
    _, bad_args = models.app_args()
    if bad_args and not st.session_state.get(models.MODEL_ARGS_SHOWN):  # the operator's slip: once per session
        st.session_state[models.MODEL_ARGS_SHOWN] = True
        st.error(sentence(f"{bad_args}; the app runs with its defaults"))


def picker() -> None:
    """The sidebar's model picker: the shipped model and every checkpoint found offline."""
    opts = models.options()
    with st.sidebar:
        st.selectbox(
            "Model",
            list(opts),
            key=models.MODEL_CHOICE,
            persist_state="session",
            format_func=lambda n: opts[n].label if n in opts else n,
            help="The shipped model, the folder given with --model, and checkpoints found on this machine (the "
            "Hugging Face cache and --models-dir). Your choice is yours alone; other sessions keep theirs.",
        )
        st.caption(OFFLINE_STEPS)
        kept = st.session_state.get(models.MODEL_REFUSAL)
        if kept:
            st.error(sentence(f"Cannot use {kept[0]}: {kept[1]}"))


def sidebar_card(path: str) -> None:
    """The sidebar's card for a loaded checkpoint: what ``core.checkpoints.load.load`` read."""
    model, _, card = models.checkpoint(path)
    cfg, mib = model.cfg, 2**20
    kind = "MHA" if cfg.n_kv_head == cfg.n_head else "MQA" if cfg.n_kv_head == 1 else "GQA"
    window = f"{card.context_window:,} positions" + (
        f" (cache allocated for {card.block_size:,})" if card.block_size < card.context_window else ""
    )
    rows = {
        "architecture": card.architecture,
        "parameters": f"{card.n_params:,}",
        "n_layer": card.n_layer,
        "n_head (query heads)": card.n_head,
        "n_kv_head (KV heads)": f"{card.n_kv_head} ({kind})",
        "head_dim": card.head_dim,
        "d_model": card.d_model,
        "MLP width": f"{card.ffn_hidden:,}",
        "context window": window,
        "vocabulary": f"{card.vocab_size:,} tokens",
        f"weight bytes ({card.dtype})": f"{card.weight_bytes:,} B ({card.weight_bytes / mib:,.1f} MiB)",
        "on disk": f"{card.file_bytes:,} B ({card.stored_dtype})",
        "KV bytes per token (float32)": f"{kv_cache_bytes_for(cfg, 1, 4):,} B",
        "load time": f"{card.load_ms:,.0f} ms" if card.load_ms < 1000 else f"{card.load_ms / 1000:,.1f} s",
        "server memory after loading (RSS)": f"{card.rss_bytes / mib:,.0f} MiB",
    }
    with st.sidebar:
        st.subheader("The model in use")
        st.caption(f"{card.name} — a checkpoint read from this machine (safetensors), shared by every session.")
        st.table(tables.arrow({"": list(rows), "value": [str(v) for v in rows.values()]}), hide_index=True)
