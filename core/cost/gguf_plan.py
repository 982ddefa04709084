"""A memory plan for a real .gguf file (``core.gguf.reader``'s summary of its header and tensor table):
the weights plus the KV cache for a chosen context and llama.cpp cache type, against a memory budget.

Sliding windows as llama.cpp allocates them (``src/llama-kv-cache-iswa.cpp``): a header with
``<arch>.attention.sliding_window`` W gets two caches, the global layers at n_ctx cells, the local (SWA)
layers at min(n_ctx, W + n_ubatch) cells per sequence, padded up to a multiple of 256, unless ``--swa-full``
(every layer n_ctx). Which layers are local is llama.cpp's per-architecture pattern
(``llama_hparams::set_swa_pattern`` in ``src/llama-model.cpp``): layer i is local when i mod P < P − 1.
"""

from __future__ import annotations

from collections import Counter

from core.cost.counts import kv_cache_bytes_typed
from core.gguf.reader import MAX_LAYERS, GGUFSummary
from core.text import format_bytes, quoted

# llama.cpp's SWA pattern P per architecture (``set_swa_pattern(P)`` in src/llama-model.cpp); an
# architecture with a window but not listed here is counted full-size and said so.
SWA_PATTERNS = {"gemma2": 2, "gemma3": 6, "cohere2": 4, "gpt-oss": 2}
N_UBATCH = 512  # llama.cpp's default --ubatch-size
SWA_PAD = 256  # "the SWA cache is always padded to 256"

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
    swa_full: bool = False,
) -> dict:
    """Weights (the file's tensor bytes) + the KV cache of ``n_seq`` sequences of ``n_ctx``
    positions in llama.cpp's cache types, in bytes, and whether the total fits ``budget_bytes``.

    Returns ``"memory/weights"``, ``"memory/kv_cache"``, ``"kv_cache/keys_bytes"``,
    ``"kv_cache/values_bytes"``, ``"total"``, ``"fits"`` (None without a budget) and ``"notes"``.
    Local (SWA) layers hold ``swa_cells`` positions (module docstring), all layers n_ctx with ``swa_full``;
    ``"kv_cache/swa_cells"`` says how many (None without a window). Compute buffers and the runtime are not
    counted. Raises ``ValueError`` if the file lacks the
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
    notes = []
    cells = [n_ctx] * summary.n_layer
    swa_cells = None
    window, pattern = summary.sliding_window, SWA_PATTERNS.get(summary.architecture or "")
    if window and pattern and not swa_full:
        swa_cells = -(-min(n_ctx, window + N_UBATCH) // SWA_PAD) * SWA_PAD  # per sequence (one stream each)
        cells = [swa_cells if i % pattern < pattern - 1 else n_ctx for i in range(summary.n_layer)]
        notes.append(
            f"Sliding window {window:,}: {sum(c != n_ctx for c in cells):,} of {summary.n_layer:,} layers are local, "
            f"each cached at {swa_cells:,} cells (min(n_ctx, W + n_ubatch {N_UBATCH}) padded to {SWA_PAD}), as "
            "llama.cpp allocates them; --swa-full would cache every layer at n_ctx."
        )
    elif window and not swa_full:
        notes.append(
            f"The header gives a sliding window of {window:,}, but which layers of {quoted(summary.architecture, 40)} "
            "slide is not known here: every layer is counted at n_ctx, an upper bound."
        )
    keys = values = 0
    for (n_kv, n_cells), layers in Counter(zip(kv, cells, strict=True)).items():  # one term per kind of layer
        keys += (
            layers
            * kv_cache_bytes_typed(1, n_kv, summary.head_dim_k, n_cells, cache_type_k, batch_size=n_seq)[
                "kv_cache/keys_bytes"
            ]
        )
        values += (
            layers
            * kv_cache_bytes_typed(
                1, n_kv, summary.head_dim_v, n_cells, cache_type_v or cache_type_k, batch_size=n_seq
            )["kv_cache/values_bytes"]
        )
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
        "kv_cache/swa_cells": swa_cells,
        "notes": tuple(notes),
    }


# ---- the plan's one unit ---------------------------------------------------------------------------
# llama.cpp logs its KV cache in MiB, so the plan speaks binary units throughout: MiB, GiB from 1 GiB on, and the
# exact byte count beside them. (It mixed MiB in its sentence with GB/MB in its chart, budget and verdict.)
PARTS = {"memory/weights": "weights", "memory/kv_cache": "KV cache"}


def plan_size(n_bytes: int) -> str:
    """``n_bytes`` in the plan's unit: MiB below 1 GiB, GiB from there ("4,352.00 MiB", "8.50 GiB"), exact
    decimals (``core.text.format_bytes``)."""
    return format_bytes(n_bytes, unit="GiB" if abs(n_bytes) >= 2**30 else "MiB")


def plan_parts_gib(plan: dict) -> dict[str, float]:
    """The plan's weights and KV cache in GiB (2³⁰ bytes), for the bar (drawing needs floats)."""
    return {label: plan[key] / 2**30 for key, label in PARTS.items()}


def budget_bytes(budget_gib: float) -> int:
    """A budget typed in GiB as whole bytes."""
    return round(budget_gib * 2**30)
