"""Inside the cache: one layer and KV head's stored key and value rows, and the proof that no earlier row changed.

Ch. 19 "What the cache stores": "Each transformer layer stores its own keys and values. For causal attention,
earlier tokens cannot attend to the appended token, so their states remain valid". Ch. 30 §30.2: "We do not need to
recompute old positions merely to obtain their K/V again." The rows here are read from the live
``core.decode.kv_cache.KVCache`` of a request, in its own dtype. When a forward pass writes a position, its stored
bytes are fingerprinted (SHA-256, one digest per layer over every KV head's key and value); ``compare`` digests
the earlier rows again and names every (position, layer) whose bytes are no longer what was written.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from core.decode.kv_cache import KVCache
from core.model.config import GPTConfig
from core.text import plural

# A position's fingerprint: one SHA-256 digest (32 bytes) per layer.
Fingerprint = tuple[bytes, ...]


def kv_head_of(cfg: GPTConfig, head: int | None) -> int:
    """The KV head query head ``head`` reads (GQA: ``n_head // n_kv_head`` query heads share one; Ch. 30 §30.4),
    or KV head 0 for ``None`` (the mean over query heads has no KV head of its own). Raises ``ValueError`` for a
    head the model does not have."""
    if head is None:
        return 0
    if not 0 <= head < cfg.n_head:
        raise ValueError(f"head {head} does not exist: the model has {cfg.n_head} query heads")
    return head // (cfg.n_head // cfg.n_kv_head)


@dataclass(frozen=True)
class HeadRows:
    """One layer and KV head's cached rows: ``keys`` and ``values`` ``(T, head_dim)``, T = cached positions, in
    the cache's dtype (copies: a later Step never changes them)."""

    layer: int
    kv_head: int
    keys: np.ndarray
    values: np.ndarray


def head_rows(cache: KVCache, layer: int, kv_head: int) -> HeadRows:
    """The keys and values ``cache`` holds for ``layer`` and ``kv_head`` (request 0 of its batch), one row per
    cached position. Raises ``ValueError`` for a layer or KV head the cache does not have."""
    cfg = cache.cfg
    if not 0 <= layer < cfg.n_layer:
        raise ValueError(f"layer {layer} does not exist: the model has {cfg.n_layer} layers")
    if not 0 <= kv_head < cfg.n_kv_head:
        raise ValueError(f"KV head {kv_head} does not exist: the model has {cfg.n_kv_head} KV heads")
    keys = cache.keys(layer)[0, kv_head].numpy().copy()
    values = cache.values(layer)[0, kv_head].numpy().copy()
    return HeadRows(layer, kv_head, keys, values)


def fingerprints(cache: KVCache, start: int, stop: int) -> list[Fingerprint]:
    """One ``Fingerprint`` per position ``start … stop − 1`` of ``cache``: per layer, the SHA-256 of that
    position's stored key and value bytes over every request and KV head. Cost: one digest per layer and
    position (a Step fingerprints its one new position)."""
    if not 0 <= start <= stop <= cache.pos:
        raise ValueError(f"positions {start} … {stop - 1} are not all cached: the cache holds {cache.pos}")
    if start == stop:
        return []
    per_layer = []
    for layer in range(cache.cfg.n_layer):
        keys, values = cache.keys(layer), cache.values(layer)
        # (B, n_kv_head, n, head_dim) → (n, B·n_kv_head·head_dim): one contiguous byte row per position
        k, v = (t[:, :, start:stop].permute(2, 0, 1, 3).reshape(stop - start, -1) for t in (keys, values))
        rows = np.concatenate([k.numpy(), v.numpy()], axis=1)
        per_layer.append([hashlib.sha256(r.tobytes()).digest() for r in rows])
    return [tuple(d) for d in zip(*per_layer, strict=True)] if per_layer else []


@dataclass(frozen=True)
class CacheCheck:
    """The earlier rows compared: ``earlier`` positions (0 … earlier − 1) in ``n_layer`` layers of
    ``n_kv_head`` KV heads; ``changed`` every (position, layer) whose bytes differ from what was written."""

    earlier: int
    n_layer: int
    n_kv_head: int
    changed: tuple[tuple[int, int], ...]

    @property
    def unchanged(self) -> bool:
        return not self.changed


def compare(cache: KVCache, stored: list[Fingerprint], earlier: int) -> CacheCheck:
    """Digest positions ``0 … earlier − 1`` of ``cache`` again and compare them with ``stored`` (the
    fingerprints taken when each was written). Raises ``ValueError`` when fewer than ``earlier`` are stored."""
    if len(stored) < earlier:
        raise ValueError(f"only {len(stored)} of the {earlier} earlier positions were fingerprinted")
    now = fingerprints(cache, 0, earlier)
    changed = tuple(
        (pos, layer)
        for pos, (a, b) in enumerate(zip(now, stored[:earlier], strict=True))
        for layer in range(len(a))
        if a[layer] != b[layer]
    )
    return CacheCheck(earlier, cache.cfg.n_layer, cache.cfg.n_kv_head, changed)


def written_by(n_prompt: int, reused: int, n_steps: int) -> str:
    """Which passes wrote the earlier rows before Step ``n_steps`` (Step 0: the Prefill), in words:
    "Prefill wrote 50, Steps 1–2 one each", with the positions a re-prefill kept from the request before."""
    parts = [f"the request before left {reused}"] if reused else []
    if n_steps > 0 and n_prompt > reused:
        parts.append(f"Prefill wrote {n_prompt - reused}")
    if n_steps == 2:
        parts.append("Step 1 one")
    elif n_steps > 2:
        parts.append(f"Steps 1–{n_steps - 1} one each")
    return ", ".join(parts)


def proof(check: CacheCheck, n_prompt: int, reused: int, n_steps: int) -> str:
    """The sentence under the rows: that no earlier vector was recomputed (Ch. 19's words) with the real counts,
    or, loudly, which rows changed. ``n_steps`` is the latest pass (0: the Prefill)."""
    where = f"in all {plural(check.n_layer, 'layer')} and {plural(check.n_kv_head, 'KV head')}"
    if check.changed:
        shown = ", ".join(f"position {p} in layer {layer}" for p, layer in check.changed[:5])
        more = f" and {len(check.changed) - 5} more" if len(check.changed) > 5 else ""
        return (
            f"An earlier row changed: {shown}{more} no longer holds the bytes written when it was cached. "
            "A KV cache must never change a stored key or value: this is a bug, not a lesson."
        )
    if check.earlier == 0:
        return (
            f"Prefill wrote all {plural(n_prompt, 'row')} in one parallel pass. From Step 1 on, each Step "
            "writes one new row and reads every earlier one from the cache."
        )
    before = f"before Step {n_steps}" if n_steps else "before this Prefill"
    return (
        f"No earlier vector was recomputed: the {plural(check.earlier, 'earlier row')}, {where}, "
        f"{'is' if check.earlier == 1 else 'are'} bit for bit "
        f"what was written {before} ({written_by(n_prompt, reused, n_steps)})."
    )


def head_note(cfg: GPTConfig, head: int | None) -> str:
    """Which KV head the picked query head ``head`` reads (None: the mean over query heads), in words (Ch. 30
    §30.4: "Query heads do not appear independently"; GQA shares one KV head among several query heads)."""
    kv, group = kv_head_of(cfg, head), cfg.n_head // cfg.n_kv_head
    readers = f"query heads {kv * group}–{kv * group + group - 1}" if group > 1 else f"query head {kv}"
    if head is None:
        return f"The heatmap shows the mean over {cfg.n_head} query heads; here KV head {kv}, read by {readers}."
    if group == 1:
        return f"Head {head} reads its own KV head {kv} ({cfg.n_head} query heads, {cfg.n_kv_head} KV heads)."
    return (
        f"Head {head} reads KV head {kv}, shared by {readers} (GQA: {cfg.n_head} query heads, "
        f"{cfg.n_kv_head} KV heads)."
    )


def bytes_note(cfg: GPTConfig, itemsize: int) -> str:
    """What one more position adds to the cache, ``itemsize`` bytes per value, with Ch. 30 §30.4's factors: one row
    here and one in every other layer and KV head, 2·L·H_kv·d·b bytes."""
    L, H, d, b = cfg.n_layer, cfg.n_kv_head, cfg.head_dim, itemsize
    return (
        f"Each Step adds one row here and one in every layer and KV head: 2 · L · H_kv · d · b = "
        f"2 · {L} · {H} · {d} · {b} = {2 * L * H * d * b:,} B per position (Ch. 30 §30.4)."
    )
