"""A paged KV cache whose whole blocks stay cached after their requests leave: automatic prefix caching.

PagedAttention (Kwon et al., 2023, §4.1) stores a request's positions in fixed-size blocks of one pool, mapped by a
**block table**; ``core.serving.paged`` shares blocks only while a request holding them is running. vLLM's automatic
prefix caching keeps going: every *whole, computed* block gets a hash over its token ids **chained to its parent
block's hash**, so the same tokens after a different beginning never match. A block whose last holder left is not
wiped: it stays findable by its hash, on an LRU list, and is reused only when the free list is empty. A newcomer
whose first whole blocks hash the same reads them instead of computing them: its **prefix-cache hits**.

- Only whole blocks from the start match, and the prompt's last token is always computed (its logits are what the
  prefill is for): a prompt shorter than one block never hits; a changed first token misses every block after it.
- A block is hashed when the pass that wrote its last position has run (``mark_computed``), so a block is never
  read before its K/V exist.
- Storage and attention are ``core.serving.paged``'s: ``view`` returns the same ``PagedView`` the forward pass reads.
"""

from __future__ import annotations

import hashlib
import heapq
from collections import OrderedDict

import torch

from core.model.config import GPTConfig
from core.serving.paged import OutOfBlocks, PagedView, blocks_for

ROOT = b"prefix-cache-root"  # the parent hash of a request's first block


def block_hash(parent: bytes, tokens: list[int] | tuple[int, ...]) -> bytes:
    """SHA-256 over the parent block's hash and this block's token ids (each 8 bytes, little-endian): 32 bytes."""
    h = hashlib.sha256(parent)
    for t in tokens:
        h.update(int(t).to_bytes(8, "little", signed=True))
    return h.digest()


def chain(ids: list[int], block_size: int) -> list[bytes]:
    """The chained hashes of ``ids``' whole blocks, first to last."""
    out, parent = [], ROOT
    for i in range(len(ids) // block_size):
        parent = block_hash(parent, ids[i * block_size : (i + 1) * block_size])
        out.append(parent)
    return out


class PrefixCachingKVCache:
    """A pool of ``n_blocks`` physical blocks of ``block_size`` positions; per request ``tables[r]`` (block ids in
    logical order), ``tokens[r]`` (ids placed: written, or to be written by the next pass) and ``lengths[r]``
    (positions whose K/V are written). ``caching=False``: a freed block is forgotten at once (no hits).

    Per layer K and V are ``(n_blocks, n_kv_head, block_size, head_dim)``. Raises ``ValueError`` for a block size
    < 1 or past the context window, or fewer than 1 block.
    """

    def __init__(self, cfg: GPTConfig, n_blocks: int, block_size: int = 16, dtype=torch.float32, caching=True):
        if isinstance(block_size, bool) or not isinstance(block_size, int) or not 1 <= block_size <= cfg.block_size:
            raise ValueError(f"block size must be 1 … {cfg.block_size} positions, got {block_size!r}")
        if isinstance(n_blocks, bool) or not isinstance(n_blocks, int) or n_blocks < 1:
            raise ValueError(f"the pool needs at least 1 block, got {n_blocks!r}")
        self.cfg, self.n_blocks, self.block_size, self.dtype, self.caching = cfg, n_blocks, block_size, dtype, caching
        shape = (n_blocks, cfg.n_kv_head, block_size, cfg.head_dim)
        self.k = [torch.zeros(shape, dtype=dtype) for _ in range(cfg.n_layer)]
        self.v = [torch.zeros(shape, dtype=dtype) for _ in range(cfg.n_layer)]
        self.ref = [0] * n_blocks
        self._free = list(range(n_blocks))  # min-heap of blocks holding nothing findable
        self._idle: OrderedDict[int, None] = OrderedDict()  # ref 0 but findable by hash, least recently used first
        self._by_hash: dict[bytes, int] = {}
        self._hash_of: dict[int, bytes] = {}
        self.tables: dict = {}
        self.tokens: dict = {}
        self.lengths: dict = {}
        self.evictions = 0

    # -- counts ---------------------------------------------------------------------------------------------------
    @property
    def n_free(self) -> int:
        """Blocks a request can be given: empty ones plus cached ones nobody holds (evicted on demand)."""
        return len(self._free) + len(self._idle)

    @property
    def n_used(self) -> int:
        """Blocks some running request holds."""
        return self.n_blocks - self.n_free

    @property
    def n_cached(self) -> int:
        """Blocks findable by hash (held or idle)."""
        return len(self._by_hash)

    @property
    def bytes_per_position(self) -> int:
        """K and V of one position in every layer: 2·n_layer·n_kv_head·head_dim·bytes."""
        return 2 * self.cfg.n_layer * self.cfg.n_kv_head * self.cfg.head_dim * self.dtype.itemsize

    # -- the allocator --------------------------------------------------------------------------------------------
    def _allocate(self) -> int:
        if self._free:
            b = heapq.heappop(self._free)
        elif self._idle:  # evict the least recently used cached block: it stops being findable
            b, _ = self._idle.popitem(last=False)
            del self._by_hash[self._hash_of.pop(b)]
            self.evictions += 1
        else:
            raise OutOfBlocks(1, 0, "one more block")
        self.ref[b] = 1
        return b

    def _release(self, b: int) -> None:
        self.ref[b] -= 1
        if self.ref[b]:
            return
        if b in self._hash_of and self.caching:
            self._idle[b] = None  # most recently used at the end
        else:
            if b in self._hash_of:
                del self._by_hash[self._hash_of.pop(b)]
            heapq.heappush(self._free, b)

    def _hold(self, b: int) -> None:
        if self.ref[b] == 0:
            del self._idle[b]
        self.ref[b] += 1

    # -- requests -------------------------------------------------------------------------------------------------
    def hits(self, ids: list[int]) -> list[int]:
        """Cached blocks holding ``ids``' leading whole blocks (the last token always left to compute)."""
        if not self.caching:
            return []
        found = []
        for h in chain(ids[: len(ids) - 1], self.block_size):
            b = self._by_hash.get(h)
            if b is None:
                break
            found.append(b)
        return found

    def admit(self, r, ids: list[int]) -> int:
        """Start request ``r`` over ``ids``: it holds its hit blocks and nothing else yet; ``place`` adds the rest.
        Returns the positions read from the cache (hits × block size). Raises ``ValueError`` for a known name,
        empty ids or ids past the context window."""
        if r in self.tables:
            raise ValueError(f"request {r!r} is already in the cache")
        if not ids or len(ids) > self.cfg.block_size:
            raise ValueError(f"a request needs 1 … {self.cfg.block_size} positions, got {len(ids)}")
        hit = self.hits(ids)
        for b in hit:
            self._hold(b)
        n = len(hit) * self.block_size
        self.tables[r], self.tokens[r], self.lengths[r] = hit, list(ids[:n]), n
        return n

    def blocks_needed(self, r, n_new: int) -> int:
        """Free blocks placing ``n_new`` more positions for request ``r`` takes."""
        return blocks_for(len(self.tokens[r]) + n_new, self.block_size) - len(self.tables[r])

    def place(self, r, ids: list[int]) -> None:
        """Put ``ids`` after request ``r``'s tokens, allocating blocks; the next ``view`` pass writes their K/V.
        Raises ``OutOfBlocks`` (nothing changed) or ``ValueError`` past the context window."""
        n = len(self.tokens[r])
        if n + len(ids) > self.cfg.block_size:
            raise ValueError(f"{n + len(ids)} positions exceed the context window of {self.cfg.block_size}")
        need = self.blocks_needed(r, len(ids))
        if need > self.n_free:
            raise OutOfBlocks(need, self.n_free, f"request {r}")
        for _ in range(need):
            self.tables[r].append(self._allocate())
        self.tokens[r].extend(ids)

    def mark_computed(self, r) -> None:
        """After a pass: request ``r``'s whole, written blocks become findable (their chained hashes)."""
        if not self.caching:
            return
        bs, toks, table = self.block_size, self.tokens[r], self.tables[r]
        for i, h in enumerate(chain(toks[: self.lengths[r]], bs)):
            b = table[i]
            if b in self._hash_of or h in self._by_hash:
                continue  # already findable (its own hit), or the same tokens computed by another request first
            self._by_hash[h], self._hash_of[b] = b, h

    def free(self, r) -> int:
        """Request ``r`` leaves: its blocks are released (whole computed ones stay cached). Returns how many."""
        table = self.tables.pop(r)
        for b in reversed(table):  # the last block idles first, so it is evicted before the blocks it hangs from
            self._release(b)
        del self.tokens[r], self.lengths[r]
        return len(table)

    def view(self, rows: list) -> PagedView:
        """The cache one ``GPT.forward`` pass sees (``core.serving.paged.PagedView``)."""
        return PagedView(self, rows)
