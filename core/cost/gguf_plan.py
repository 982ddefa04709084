"""A memory plan for a real .gguf file (``core.gguf.reader``'s summary of its header and tensor table):
the weights plus the KV cache for a chosen context and llama.cpp cache type, against a memory budget.

Sliding windows as llama.cpp allocates them (``src/llama-kv-cache-iswa.cpp``): an architecture its loader
gives sliding-window (SWA) layers gets two caches, the global layers at n_ctx cells, the local layers at
min(n_ctx, W + n_ubatch) cells per sequence, padded up to a multiple of 256, unless ``--swa-full`` (every
layer n_ctx). Which layers are local, and where W comes from, is the loader's per-architecture choice
(``llama_model::load_hparams`` in ``src/llama-model.cpp``, ``llama_hparams::set_swa_pattern`` in
``src/llama-hparams.cpp``): ``SWA_RULES`` below, one entry per architecture.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from core.cost.config_fields import gguf_uncounted
from core.cost.counts import kv_cache_bytes_typed
from core.gguf.reader import MAX_LAYERS, GGUFSummary
from core.text import format_bytes, quoted


@dataclass(frozen=True)
class SwaRule:
    """How llama.cpp's loader gives one architecture its sliding-window layers.

    ``period`` P (``set_swa_pattern(P)``): layer i is local when i mod P < P − 1 (the global layer last in
    each group of P), or with ``dense_first`` when i mod P ≠ 0 (global first). ``window``: the W llama.cpp
    sets itself: used when the header gives none, or always when ``fixed``. ``needs_header``: the layers
    slide only when the header gives a window > 0; ``off_at_zero``: a header window of 0 switches them off.
    ``only_n_layer``: they slide only at this layer count. ``kv_layers``: only the layers below this one keep
    a cache, the later ones reuse an earlier layer's (``n_layer_kv_from_start``). ``chunked``: attention
    within chunks of W (``LLAMA_SWA_TYPE_CHUNKED``), cached like a window of W."""

    period: int
    dense_first: bool = False
    window: int | None = None
    fixed: bool = False
    needs_header: bool = False
    off_at_zero: bool = False
    only_n_layer: int | None = None
    kv_layers: int | None = None
    chunked: bool = False

    def local(self, i: int) -> bool:
        """Whether layer i slides."""
        return i % self.period != 0 if self.dense_first else i % self.period < self.period - 1


# llama.cpp's sliding-window architectures, by the header's general.architecture (read from its loader).
SWA_RULES = {
    "gemma2": SwaRule(2, window=4096),  # every 2nd layer global; W 4,096 unless the header says
    "gemma3": SwaRule(6),  # 5 local, then 1 global
    "gemma3n": SwaRule(5, kv_layers=20),  # 4 local, 1 global; layers from 20 on reuse earlier caches
    "cohere2": SwaRule(4),  # 3 local, 1 global
    "gpt-oss": SwaRule(2),  # alternating, local first
    "olmo2": SwaRule(4, needs_header=True),  # OLMo 3: 3 local, 1 global, when the header gives a window
    "exaone4": SwaRule(4, window=4096, only_n_layer=64),  # the 32B only: 3 local, 1 global
    "smallthinker": SwaRule(4, dense_first=True, window=4096, fixed=True, needs_header=True),  # 1 global, 3 local
    "llama4": SwaRule(4, window=8192, fixed=True, off_at_zero=True, chunked=True),  # 3 chunked, 1 full
}
# Architectures whose header may carry a window that llama.cpp's loader switches off: every layer at n_ctx.
SWA_IGNORED = {"phi3": "llama.cpp switches Phi-3's sliding window off (its loader warns and caches every layer)"}
N_UBATCH = 512  # llama.cpp's default --ubatch-size
SWA_PAD = 256  # "the SWA cache is always padded to 256"

KV_TERM_WORDS = {  # the KV-cache terms a plan needs, as a message names them
    "n_layer": "the layer count (n_layer)",
    "n_kv_head": "the KV heads (n_kv_head)",
    "head_dim_k": "the key head size (head_dim_k)",
    "head_dim_v": "the value head size (head_dim_v)",
}


def llama_swa(architecture: str | None, n_layer: int, header_window: int | None) -> tuple[int | None, SwaRule | None]:
    """The window W and rule llama.cpp's loader gives a file of ``architecture`` with ``n_layer`` layers
    whose header gives ``header_window`` (None if absent): (None, None) when no layer slides."""
    rule = SWA_RULES.get(architecture or "")
    if rule is None or (rule.only_n_layer is not None and n_layer != rule.only_n_layer):
        return None, None
    if header_window == 0 and rule.off_at_zero:
        return None, None
    if rule.needs_header and not header_window:
        return None, None
    window = rule.window if rule.fixed or not header_window else header_window
    return (window, rule) if window else (None, None)


def slides(summary: GGUFSummary) -> bool:
    """Whether llama.cpp gives this file sliding-window layers (so ``--swa-full`` changes its cache)."""
    return (
        summary.n_layer is not None
        and llama_swa(summary.architecture, summary.n_layer, summary.sliding_window)[0] is not None
    )


def _swa_notes(summary: GGUFSummary, window, rule, n_ctx: int, swa_cells, n_kv_layers: int) -> list[str]:
    arch, header = summary.architecture, summary.sliding_window
    notes = []
    if n_kv_layers < summary.n_layer:
        notes.append(
            f"Only the first {n_kv_layers:,} of {summary.n_layer:,} layers keep a cache: the later ones reuse an "
            "earlier layer's keys and values (llama.cpp's n_layer_kv_from_start)."
        )
    if window is not None:
        n_local = sum(rule.local(i) for i in range(n_kv_layers))
        kind = "Chunked attention, chunks" if rule.chunked else "Sliding window"
        said = "none" if header is None else f"{header:,}"
        given = "" if header == window else f" (llama.cpp's own for {quoted(arch, 40)}; the header gives {said})"
        if swa_cells is None:
            notes.append(
                f"{kind} of {window:,}{given}: --swa-full caches all {n_kv_layers:,} layers at n_ctx {n_ctx:,}."
            )
        else:
            notes.append(
                f"{kind} of {window:,}{given}: {n_local:,} of {n_kv_layers:,} layers are local, each cached at "
                f"{swa_cells:,} cells (min(n_ctx, W + n_ubatch {N_UBATCH}) padded to {SWA_PAD}), as llama.cpp "
                "allocates them; --swa-full would cache every layer at n_ctx."
            )
    elif header and (arch or "") in SWA_IGNORED:
        notes.append(f"The header gives a sliding window of {header:,}, but {SWA_IGNORED[arch]}: every layer at n_ctx.")
    elif header and (arch or "") in SWA_RULES:
        notes.append(
            f"The header gives a sliding window of {header:,}, but llama.cpp slides {quoted(arch, 40)} only at "
            f"{SWA_RULES[arch].only_n_layer:,} layers: all {summary.n_layer:,} are cached at n_ctx, as it allocates."
        )
    elif header:
        notes.append(
            f"The header gives a sliding window of {header:,}, but which layers of {quoted(arch, 40)} "
            "slide is not known here: every layer is counted at n_ctx, an upper bound."
        )
    return notes


STATE_TYPE_BYTES = 4  # llama.cpp's recurrent memory holds its r (conv) and s (SSM) states in F32


def recurrent_layers(summary: GGUFSummary) -> tuple[bool, ...]:
    """Which layers keep a recurrent state instead of a KV cache, as llama.cpp's loader marks them
    (``recurrent_layer_arr``): Qwen3-Next's every layer but each ``full_attention_interval``-th ((i + 1) mod P ≠ 0),
    a hybrid's layers with 0 KV heads in a per-layer ``head_count_kv`` (Granite-4.0-H) when the file has ssm.* keys."""
    n = summary.n_layer or 0
    if summary.full_attention_interval:
        return tuple((i + 1) % summary.full_attention_interval != 0 for i in range(n))
    if summary.ssm and isinstance(summary.n_kv_head, tuple) and len(summary.n_kv_head) == n:
        return tuple(h == 0 for h in summary.n_kv_head)
    return (False,) * n


def recurrent_state(summary: GGUFSummary, n_seq: int) -> tuple[int, str | None]:
    """Bytes of the recurrent layers' state for ``n_seq`` sequences, as llama.cpp sizes it (``llama_hparams``'
    ``n_embd_r`` = (d_conv − 1)·(d_inner + 2·n_group·d_state) and ``n_embd_s`` = d_state·d_inner values per layer
    and sequence, F32), and a sentence; (0, None) without recurrent layers; (0, a sentence naming what is missing)
    when the file lacks the ssm.* terms."""
    n_rec = sum(recurrent_layers(summary))
    if not n_rec:
        return 0, None
    ssm = dict(summary.ssm)
    missing = [k for k in ("conv_kernel", "state_size", "inner_size") if k not in ssm]
    if missing:
        names = ", ".join(f"{summary.architecture}.ssm.{k}" for k in missing)
        return 0, f"{n_rec:,} layers keep a recurrent state, not counted: the file lacks {names}."
    d_conv, d_state, d_inner = ssm["conv_kernel"], ssm["state_size"], ssm["inner_size"]
    groups = ssm.get("group_count", 0)  # Mamba-1 files give none: llama.cpp's ssm_n_group stays 0
    r = (d_conv - 1) * (d_inner + 2 * groups * d_state)
    s = d_state * d_inner
    total = n_seq * n_rec * (r + s) * STATE_TYPE_BYTES
    return total, (
        f"{n_rec:,} of {summary.n_layer:,} layers keep a recurrent state instead of a KV cache, the same at every "
        f"n_ctx: per layer and sequence r = (d_conv − 1)·(d_inner + 2·n_group·d_state) = {d_conv - 1}·({d_inner:,} + "
        f"2·{groups}·{d_state:,}) = {r:,} and s = d_state·d_inner = {d_state:,}·{d_inner:,} = {s:,} values in F32, "
        f"so {n_seq:,} · {n_rec:,} · ({r:,} + {s:,}) · 4 B = {total:,} B, as llama.cpp allocates it."
    )


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

    Returns ``"memory/weights"``, ``"memory/kv_cache"``, ``"memory/recurrent_state"`` (``recurrent_state``),
    ``"kv_cache/keys_bytes"``, ``"kv_cache/values_bytes"``, ``"total"``, ``"fits"`` (None without a budget),
    ``"notes"`` and ``"uncounted"`` (header keys no reader here counts: ``core.cost.config_fields``).
    Local (SWA) layers hold ``swa_cells`` positions (module docstring), all layers n_ctx with ``swa_full``;
    ``"kv_cache/swa_cells"`` says how many (None without a window); layers past a rule's ``kv_layers`` hold
    none. Compute buffers and the runtime are not counted. Raises ``ValueError`` if the file lacks the
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
    recurrent = recurrent_layers(summary)
    kv = tuple(0 if r else h for h, r in zip(kv, recurrent, strict=True))  # a recurrent layer keeps no KV cache
    window, rule = llama_swa(summary.architecture, summary.n_layer, summary.sliding_window)
    reuse = SWA_RULES.get(summary.architecture or "", SwaRule(1)).kv_layers  # Gemma 3n: with or without a window
    n_kv_layers = summary.n_layer if reuse is None else min(reuse, summary.n_layer)
    swa_cells = None
    if window is not None and not swa_full:
        swa_cells = -(-min(n_ctx, window + N_UBATCH) // SWA_PAD) * SWA_PAD  # per sequence (one stream each)
    cells = [
        0 if i >= n_kv_layers else swa_cells if swa_cells is not None and rule.local(i) else n_ctx
        for i in range(summary.n_layer)
    ]
    notes = _swa_notes(summary, window, rule, n_ctx, swa_cells, n_kv_layers)
    keys = values = 0
    for (n_kv, n_cells), layers in Counter(zip(kv, cells, strict=True)).items():  # one term per kind of layer
        if not n_kv:
            continue
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
    state, said = recurrent_state(summary, n_seq)
    if said:
        notes.append(said)
    total = summary.weight_bytes + keys + values + state
    return {
        "memory/weights": summary.weight_bytes,
        "memory/kv_cache": keys + values,
        "memory/recurrent_state": state,
        "uncounted": gguf_uncounted(summary.architecture, summary.arch_keys),
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
PARTS = {"memory/weights": "weights", "memory/kv_cache": "KV cache", "memory/recurrent_state": "recurrent state"}


def plan_size(n_bytes: int) -> str:
    """``n_bytes`` in the plan's unit: MiB below 1 GiB, GiB from there ("4,352.00 MiB", "8.50 GiB"), exact
    decimals (``core.text.format_bytes``)."""
    return format_bytes(n_bytes, unit="GiB" if abs(n_bytes) >= 2**30 else "MiB")


def plan_parts_gib(plan: dict) -> dict[str, float]:
    """The plan's weights and KV cache in GiB (2³⁰ bytes), for the bar (drawing needs floats)."""
    shown = [k for k in PARTS if k in plan and (plan[k] or k != "memory/recurrent_state")]  # no empty state part
    return {PARTS[key]: plan[key] / 2**30 for key in shown}


def budget_bytes(budget_gib: float) -> int:
    """A budget typed in GiB as whole bytes."""
    return round(budget_gib * 2**30)
