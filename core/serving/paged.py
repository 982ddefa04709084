"""A paged KV cache: logical positions stored in fixed-size blocks of one physical pool.

Ch. 30 §30.4: "Allocated blocks, padding, metadata and reserved future capacity can make actual
allocation larger" than the payload M = 2·B·L·T·H_kv·d·b. PagedAttention (Kwon et al., 2023, §4.1)
separates a request's *logical* KV blocks (positions 0 … bs−1, bs … 2bs−1, …) from *physical*
blocks anywhere in a preallocated pool; a per-request **block table** maps one to the other, so a
request holds only ceil(length / bs) blocks (at most one partly filled) instead of a buffer for
the whole context window.

- **Pool**: per layer, K and V tensors ``(n_blocks, n_kv_head, block_size, head_dim)``; a free list
  (lowest id first, so a freed block is visibly reused) and a reference count per block.
- **Prefix sharing** (§4.4): a full block is indexed by (the physical block before it, its tokens);
  a newcomer whose prompt starts with the same whole blocks points at them (count + 1).
- **Copy-on-write**: appending to a partly filled block that another request also holds (after
  ``fork``) first copies it to a fresh block.
- **Attention through the block table**: ``view`` returns the cache one ``GPT.forward`` pass sees;
  its ``update`` writes new K/V into each request's physical slots and gathers every row's blocks
  by index into ``(B, n_kv_head, S, head_dim)``, S = (longest table) · block_size, with a mask for
  the unused tail — the same transformer as every other path.
"""

from __future__ import annotations

import heapq

import torch

from core.model.config import GPTConfig


class OutOfBlocks(ValueError):
    """Not enough free physical blocks: ``needed`` blocks asked, ``free`` available."""

    def __init__(self, needed: int, free: int, what: str = "this step"):
        self.needed, self.free = needed, free
        super().__init__(f"out of KV blocks: {what} needs {needed} block(s) but only {free} are free")


def blocks_for(n_positions: int, block_size: int) -> int:
    """Blocks that hold ``n_positions`` positions: ceil(n / block_size)."""
    return -(-n_positions // block_size)


class PagedKVCache:
    """A pool of ``n_blocks`` physical blocks of ``block_size`` positions and one block table per request.

    Requests are keyed by any hashable name. Per request: ``tables[r]`` (physical block ids, logical
    order), ``tokens[r]`` (ids placed in its blocks: written, or to be written by the next pass) and
    ``lengths[r]`` (positions whose K/V are written). Raises ``ValueError`` for ``block_size`` < 1 or
    larger than the context window, or ``n_blocks`` < 1.
    """

    def __init__(self, cfg: GPTConfig, n_blocks: int, block_size: int = 16, dtype: torch.dtype = torch.float32):
        if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
            raise ValueError(f"block size must be a whole number of positions ≥ 1, got {block_size!r}")
        if block_size > cfg.block_size:
            raise ValueError(f"block size {block_size} is larger than the context window of {cfg.block_size} positions")
        if isinstance(n_blocks, bool) or not isinstance(n_blocks, int) or n_blocks < 1:
            raise ValueError(f"the pool needs at least 1 block, got {n_blocks!r}")
        self.cfg, self.n_blocks, self.block_size, self.dtype = cfg, n_blocks, block_size, dtype
        shape = (n_blocks, cfg.n_kv_head, block_size, cfg.head_dim)
        self.k = [torch.zeros(shape, dtype=dtype) for _ in range(cfg.n_layer)]
        self.v = [torch.zeros(shape, dtype=dtype) for _ in range(cfg.n_layer)]
        self.ref = [0] * n_blocks
        self._free = list(range(n_blocks))  # a min-heap: the lowest free id is handed out first
        self.tables: dict = {}
        self.tokens: dict = {}
        self.lengths: dict = {}
        self._prefix: dict[tuple, int] = {}  # (block before or -1, its tokens) -> physical block
        self._key_of: dict[int, tuple] = {}

    # -- bytes (Ch. 30 §30.4) ------------------------------------------------------------------
    @property
    def bytes_per_position(self) -> int:
        """K and V of one position in every layer: 2·L·H_kv·d·b bytes."""
        return 2 * self.cfg.n_layer * self.cfg.n_kv_head * self.cfg.head_dim * self.dtype.itemsize

    @property
    def bytes_per_block(self) -> int:
        return self.bytes_per_position * self.block_size

    @property
    def n_free(self) -> int:
        return len(self._free)

    @property
    def n_used(self) -> int:
        return self.n_blocks - len(self._free)

    @property
    def pool_bytes(self) -> int:
        """Bytes of the whole pool, measured from its tensors (= allocated + free)."""
        return sum(t.numel() * t.element_size() for t in self.k + self.v)

    @property
    def allocated_bytes(self) -> int:
        """Bytes of the blocks in use (a shared block counted once)."""
        return self.n_used * self.bytes_per_block

    @property
    def free_bytes(self) -> int:
        return self.n_free * self.bytes_per_block

    def block_fill(self) -> dict[int, int]:
        """Positions written or reserved in each block in use (the most any holder has placed there)."""
        fill: dict[int, int] = {}
        for r, table in self.tables.items():
            n = len(self.tokens[r])
            for i, b in enumerate(table):
                fill[b] = max(fill.get(b, 0), min(self.block_size, n - i * self.block_size))
        return fill

    # -- the allocator -------------------------------------------------------------------------
    def _allocate(self) -> int:
        if not self._free:
            raise OutOfBlocks(1, 0, "one more block")
        b = heapq.heappop(self._free)
        self.ref[b] = 1
        return b

    def _release(self, b: int) -> None:
        """Drop one reference; at zero the block is free again and leaves the prefix index."""
        self.ref[b] -= 1
        if self.ref[b] == 0:
            key = self._key_of.pop(b, None)
            if key is not None and self._prefix.get(key) == b:
                del self._prefix[key]
            heapq.heappush(self._free, b)

    def _shared_prefix(self, ids: list[int]) -> list[int]:
        """Physical blocks already holding ``ids``' leading whole blocks. At least the last token is
        left to compute, since its logits are what prefill is for."""
        found, prev = [], -1
        for i in range((len(ids) - 1) // self.block_size):
            b = self._prefix.get((prev, tuple(ids[i * self.block_size : (i + 1) * self.block_size])))
            if b is None:
                break
            found.append(b)
            prev = b
        return found

    def blocks_needed(self, r, n_new: int) -> int:
        """Free blocks appending ``n_new`` positions to request ``r`` takes (copy-on-write included)."""
        n = len(self.tokens[r])
        cow = n % self.block_size != 0 and self.ref[self.tables[r][-1]] > 1
        return blocks_for(n + n_new, self.block_size) - len(self.tables[r]) + cow

    def blocks_needed_to_add(self, ids: list[int], share: bool = True) -> int:
        """Free blocks ``add(r, ids)`` would take: the prompt's blocks minus those it can share."""
        return blocks_for(len(ids), self.block_size) - (len(self._shared_prefix(ids)) if share else 0)

    # -- requests ------------------------------------------------------------------------------
    def add(self, r, ids: list[int], share: bool = True) -> int:
        """Admit request ``r`` with the ``ids`` to prefill; returns how many leading positions it
        shares with blocks already in the pool (their K/V need not be computed again). Raises
        ``ValueError`` for a known name or empty ids, ``OutOfBlocks`` (nothing changed) if the rest
        does not fit."""
        if r in self.tables:
            raise ValueError(f"request {r!r} is already in the cache")
        if not ids:
            raise ValueError("a request needs at least one token")
        if len(ids) > self.cfg.block_size:
            raise ValueError(f"{len(ids)} positions exceed the context window of {self.cfg.block_size}")
        shared = self._shared_prefix(ids) if share else []
        if blocks_for(len(ids), self.block_size) - len(shared) > self.n_free:
            raise OutOfBlocks(blocks_for(len(ids), self.block_size) - len(shared), self.n_free, f"request {r}")
        for b in shared:
            self.ref[b] += 1
        n = len(shared) * self.block_size
        self.tables[r], self.tokens[r], self.lengths[r] = list(shared), list(ids[:n]), n
        self.append(r, ids[n:])
        return n

    def append(self, r, ids: list[int]) -> None:
        """Place ``ids`` after request ``r``'s tokens: allocate blocks on demand (copy-on-write first
        if its partly filled last block is shared); the next ``view`` pass writes their K/V.
        Raises ``OutOfBlocks`` (nothing changed) or ``ValueError`` past the context window."""
        n, bs = len(self.tokens[r]), self.block_size
        if n + len(ids) > self.cfg.block_size:
            raise ValueError(f"{n + len(ids)} positions exceed the context window of {self.cfg.block_size}")
        need = self.blocks_needed(r, len(ids))
        if need > self.n_free:
            raise OutOfBlocks(need, self.n_free, f"request {r}")
        table = self.tables[r]
        if n % bs and self.ref[table[-1]] > 1:  # copy-on-write: never write into another request's block
            old, new = table[-1], self._allocate()
            for buf in self.k + self.v:
                buf[new] = buf[old]
            self._release(old)
            table[-1] = new
        while len(table) < blocks_for(n + len(ids), bs):
            table.append(self._allocate())
        self.tokens[r].extend(ids)
        toks = self.tokens[r]
        for i in range(n // bs, len(toks) // bs):  # blocks this append fills become shareable
            key = (table[i - 1] if i else -1, tuple(toks[i * bs : (i + 1) * bs]))
            if key not in self._prefix and table[i] not in self._key_of:
                self._prefix[key], self._key_of[table[i]] = table[i], key

    def fork(self, src, dst) -> None:
        """Request ``dst`` starts as a copy of ``src`` holding the *same* blocks (parallel sampling,
        PagedAttention §4.4); the first append to a shared, partly filled block copies it."""
        if dst in self.tables:
            raise ValueError(f"request {dst!r} is already in the cache")
        if self.lengths[src] != len(self.tokens[src]):
            raise ValueError(f"request {src!r} has tokens not yet written: run its pass first")
        for b in self.tables[src]:
            self.ref[b] += 1
        self.tables[dst], self.tokens[dst], self.lengths[dst] = (
            list(self.tables[src]),
            list(self.tokens[src]),
            self.lengths[src],
        )

    def truncate(self, r, n_positions: int) -> None:
        """Keep request ``r``'s first ``n_positions`` positions (rollback); later blocks are released."""
        if not 0 <= n_positions <= self.lengths[r]:
            raise ValueError(f"cannot truncate to {n_positions}: request {r!r} holds {self.lengths[r]} positions")
        table, keep = self.tables[r], blocks_for(n_positions, self.block_size)
        for b in table[keep:]:
            self._release(b)
        del table[keep:]
        if n_positions % self.block_size and self.ref[table[-1]] == 1:
            key = self._key_of.pop(table[-1], None)  # partly filled again: no longer a whole shareable block
            if key is not None and self._prefix.get(key) == table[-1]:
                del self._prefix[key]
        del self.tokens[r][n_positions:]
        self.lengths[r] = n_positions

    def free(self, r) -> int:
        """Request ``r`` leaves: release its blocks at once. Returns how many became free."""
        before = self.n_free
        for b in self.tables.pop(r):
            self._release(b)
        del self.tokens[r], self.lengths[r]
        return self.n_free - before

    def view(self, rows: list) -> PagedView:
        """The cache one ``GPT.forward`` pass sees: one row per request in ``rows``, bringing the
        tokens placed by ``add``/``append`` and not yet written."""
        return PagedView(self, rows)


class PagedView:
    """One batched forward pass over a paged cache (the protocol of ``KVCache``, see ``GPT.forward``).

    Row i brings ``n[i]`` new positions at ``starts[i] ..``, right-padded to the longest (padded query
    rows are computed and ignored). Keys and values are gathered through the block tables: row i's
    logical block j is physical block ``table[i, j]``; slot s of the gathered sequence is position s.
    """

    def __init__(self, cache: PagedKVCache, rows: list):
        bs = cache.block_size
        self.cache, self.rows = cache, list(rows)
        starts = [cache.lengths[r] for r in self.rows]
        self.n = [len(cache.tokens[r]) - s for r, s in zip(self.rows, starts, strict=True)]
        self.starts = torch.tensor(starts)  # (B,)
        width = max(len(cache.tables[r]) for r in self.rows)
        # Short tables are padded with block 0: those slots lie past the row's length and are masked.
        self.table = torch.tensor([cache.tables[r] + [0] * (width - len(cache.tables[r])) for r in self.rows])
        row, t, blk, off = [], [], [], []
        for i, (r, s, n) in enumerate(zip(self.rows, starts, self.n, strict=True)):
            for j in range(n):
                p = s + j
                row.append(i), t.append(j), blk.append(cache.tables[r][p // bs]), off.append(p % bs)
        self._row, self._t = torch.tensor(row, dtype=torch.long), torch.tensor(t, dtype=torch.long)
        self._blk, self._off = torch.tensor(blk, dtype=torch.long), torch.tensor(off, dtype=torch.long)

    def check_room(self, t_new: int) -> None:
        pass  # the window was checked when the tokens were placed (``add``/``append``)

    def positions(self, t_new: int) -> torch.Tensor:
        """``(B, t_new)``: each row's own absolute positions (padded queries clamped into the window)."""
        pos = self.starts.unsqueeze(1) + torch.arange(t_new)  # (B, t_new)
        return pos.clamp(max=self.cache.cfg.block_size - 1)

    def mask(self, t_new: int) -> torch.Tensor:
        """``(B, t_new, S)``: query t of row i reads slots 0 … starts[i] + t; the unused tail of its last
        block and the padding blocks are never readable."""
        S = self.table.shape[1] * self.cache.block_size
        q_slot = self.starts.view(-1, 1, 1) + torch.arange(t_new).view(1, -1, 1)  # (B, t_new, 1)
        return torch.arange(S).view(1, 1, -1) <= q_slot  # (B, t_new, S)

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor):
        """Write each row's real new K/V ``(B, n_kv_head, T, hd)`` into its physical slots, then
        gather every row's blocks by index: returns K and V ``(B, n_kv_head, S, hd)``. All rows write
        before any row reads, so a newcomer sharing a block another row fills in this pass reads it."""
        c = self.cache
        for new, pool in ((k, c.k[layer]), (v, c.v[layer])):
            pool[self._blk, :, self._off] = new[self._row, :, self._t]  # (N, n_kv_head, hd)
        B, nb = self.table.shape
        H, bs, hd = c.cfg.n_kv_head, c.block_size, c.cfg.head_dim
        # One copy: index the block axis of the (n_kv_head, n_blocks, bs, hd) view by the tables.
        kk = c.k[layer].transpose(0, 1)[:, self.table].reshape(H, B, nb * bs, hd).transpose(0, 1)
        vv = c.v[layer].transpose(0, 1)[:, self.table].reshape(H, B, nb * bs, hd).transpose(0, 1)
        return kk, vv  # (B, n_kv_head, S, hd) each

    def advance(self, t_new: int) -> None:
        for r, n in zip(self.rows, self.n, strict=True):
            self.cache.lengths[r] += n
