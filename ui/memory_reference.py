"""The memory page's check of a config.json against transformers' own cache (``core.cost.kv_reference``), and
what it says when a field the readers do not count may change the number (``core.cost.config_fields``)."""

from __future__ import annotations

import json

import streamlit as st

from core.cost.kv_reference import compare, reference_cache
from core.cost.kv_shape import KVShape
from ui.gguf import not_counted_warning


def checked(shape: KVShape, raw: str | bytes | None) -> bool:
    """Ask transformers about the pasted config ``raw`` and say whether its cache agrees with ``shape``'s count;
    then name the fields not counted. True when the number is sure: transformers agrees, or nothing is left
    uncounted."""
    agreed = False
    try:
        cfg = json.loads(raw) if raw else None
    except ValueError:
        cfg = None
    if isinstance(cfg, dict):
        try:
            with st.spinner("Asking transformers: building the model on the meta device (no weights)…"):
                reference = reference_cache(cfg)
        except ValueError as err:
            st.caption(f"Not checked against transformers: {err}. The count below is this page's own reading.")
        else:
            agreed = _said(shape, reference)
    if not agreed:
        return not not_counted_warning(shape.uncounted)
    if shape.uncounted:
        st.caption("Fields no reader here counts, which transformers' cache takes into account: "
                   + ", ".join(f"`{f}`" for f in shape.uncounted) + ".")  # fmt: skip
    return True


def _said(shape: KVShape, reference) -> bool:
    a = compare(shape, reference)
    theirs = f"{reference.per_position:,} B per position and {reference.fixed:,} B fixed"
    if a.agrees:
        st.success(
            f"transformers' own cache agrees: {theirs} per request at b = {reference.dtype_bytes} "
            f"({reference.cache_class}, built on the meta device from this config)."
        )
        return True
    rows = "; ".join(f"layer {i}: {o:,} here, {t:,} in transformers" for i, o, t in a.layers[:6])
    more = f" (and {len(a.layers) - 6} more layers)" if len(a.layers) > 6 else ""
    st.warning(
        f"transformers' own cache differs: {theirs}; this page counts {a.ours_per_position:,} B per position and "
        f"{a.ours_fixed:,} B fixed at b = {reference.dtype_bytes}. Bytes per position that differ: {rows or 'none'}"
        f"{more}. Trust neither number without reading the model's code."
    )
    return False
