"""A memory plan for a real .gguf file (``core.gguf.reader``'s summary of its header and tensor table):
the weights plus the KV cache for a chosen context and llama.cpp cache type, against a memory budget.
"""

from __future__ import annotations

from collections import Counter

from core.cost.counts import kv_cache_bytes_typed
from core.gguf.reader import MAX_LAYERS, GGUFSummary
from core.text import quoted

KV_TERM_WORDS = {  # the KV-cache terms a plan needs, as a message names them
    "n_layer": "the layer count (n_layer)",
    "n_kv_head": "the KV heads (n_kv_head)",
    "head_dim_k": "the key head size (head_dim_k)",
    "head_dim_v": "the value head size (head_dim_v)",
}


def gguf_memory_plan(
    summary: GGUFSummary,
    n_ctx: int,
    cache_type_k: str = "f16",
    cache_type_v: str | None = None,
    budget_bytes: int | None = None,
    n_seq: int = 1,
) -> dict:
    """Weights (the file's tensor bytes) + the KV cache of ``n_seq`` sequences of ``n_ctx``
    positions in llama.cpp's cache types, in bytes, and whether the total fits ``budget_bytes``.

    Returns ``"memory/weights"``, ``"memory/kv_cache"``, ``"kv_cache/keys_bytes"``,
    ``"kv_cache/values_bytes"``, ``"total"``, ``"fits"`` (None without a budget) and ``"notes"``.
    Compute buffers and the runtime are not counted. Raises ``ValueError`` if the file lacks the
    KV terms (layers, KV heads, head size) or a term is bad."""
    missing = [words for k, words in KV_TERM_WORDS.items() if getattr(summary, k) is None]
    if missing:
        arch = summary.architecture
        of = f"architecture {quoted(arch, 100)}" if arch is not None else "model (the file names no architecture)"
        raise ValueError(f"the file does not give {', '.join(missing)} for its {of}: no KV-cache plan")
    if summary.n_layer > MAX_LAYERS:
        raise ValueError(f"the file claims {summary.n_layer:,} layers: more than any model (up to {MAX_LAYERS:,})")
    kv = summary.n_kv_head if isinstance(summary.n_kv_head, tuple) else (summary.n_kv_head,) * summary.n_layer
    if len(kv) != summary.n_layer:
        raise ValueError(f"the file lists KV heads for {len(kv)} layers but has {summary.n_layer}: no KV-cache plan")
    keys = values = 0
    for n_kv, layers in Counter(kv).items():  # one term per KV-head count: some models vary it by layer
        keys += (
            layers
            * kv_cache_bytes_typed(1, n_kv, summary.head_dim_k, n_ctx, cache_type_k, batch_size=n_seq)[
                "kv_cache/keys_bytes"
            ]
        )
        values += (
            layers
            * kv_cache_bytes_typed(1, n_kv, summary.head_dim_v, n_ctx, cache_type_v or cache_type_k, batch_size=n_seq)[
                "kv_cache/values_bytes"
            ]
        )
    notes = []
    if summary.context_length and n_ctx > summary.context_length:
        notes.append(f"n_ctx {n_ctx:,} is past the context length the file states ({summary.context_length:,}).")
    total = summary.weight_bytes + keys + values
    return {
        "memory/weights": summary.weight_bytes,
        "memory/kv_cache": keys + values,
        "kv_cache/keys_bytes": keys,
        "kv_cache/values_bytes": values,
        "total": total,
        "fits": None if budget_bytes is None else total <= budget_bytes,
        "notes": tuple(notes),
    }
