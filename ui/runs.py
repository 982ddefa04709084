"""Deterministic runs a page shows, cached for the whole class (``st.cache_data``: every caller
gets its own copy): greedy continuations, the context window's policies and the paged page's two
schedulers.
"""

from __future__ import annotations

import streamlit as st

from core.decode.context import run_policy
from core.decode.generate import SamplingConfig, generate_cached
from core.model.tokenizer import end_token_id
from core.serving.paged_presets import compare_policies, preset_requests
from ui import models


@st.cache_data(show_spinner=False, max_entries=256)
def greedy_tokens(
    prompt_ids: tuple[int, ...], n_new: int, weight_bits: int | None = None, group: int = 32, source=None
):
    """Greedy continuation of the shipped model (``source`` None) or a loaded checkpoint (float32,
    or with quantized weights). Deterministic, so it is computed once and shared; every caller
    gets its own copy."""
    if source is not None:
        m = models.model_for(("float32", None, source))
        m = m if weight_bits is None else models.quantized_checkpoint(source, "float32", weight_bits, group)
    else:
        m = models.model() if weight_bits is None else models.quantized_model("float32", weight_bits, group)
    return generate_cached(m, list(prompt_ids), n_new, SamplingConfig()).tokens


@st.cache_data(show_spinner="Generating…", max_entries=64)
def window_run(
    prompt_ids: tuple[int, ...], n_new: int, window: int, policy: str, stop_at_end: bool = False, source=None
):
    """``core.decode.context.run_policy`` on the shipped model (``source`` None) or a loaded checkpoint
    (optionally up to its end token), cached (deterministic, greedy)."""
    end = end_token_id(models.tokenizer_for(source)) if stop_at_end else None
    return run_policy(models.model_for(("float32", None, source)), list(prompt_ids), n_new, window, policy, end)


@st.cache_data(show_spinner="Serving the requests both ways…", max_entries=64)
def policy_comparison(preset: str, block_size: int, n_blocks: int):
    """``core.serving.scheduler.compare_policies`` for a paged-page preset on the shipped model: deterministic
    (greedy), so computed once for the whole class; every caller gets its own copy."""
    tok = models.tokenizer()
    return compare_policies(
        models.model(), preset_requests(preset, tok), n_blocks, block_size, end_id=end_token_id(tok)
    )
