"""Bounding a GGUF file's header before ``gguf.GGUFReader`` reads it, and reading it quickly.

``check_header`` walks the header and metadata with every count bounded by the file's size (a
crafted count cannot make the reader loop for ever) and by what a model file holds.

Speed: ``GGUFReader`` makes a numpy view per array element, so a large vocabulary (tokens, types,
merges) is slow to read that way (measured: docs/benchmarks.md, "GGUF formats"). A plan needs none
of those strings: ``open_reader`` reads arrays longer than ``BULK_ARRAY`` in one view (numbers) or
skips them with only their length kept (strings, nested arrays), using the extents
``check_header`` measured. What is left to read one by one, the metadata entries and the tensors
are capped (``MAX_SMALL_ELEMENTS``, ``MAX_METADATA``, ``MAX_TENSORS``), so no upload of a few MB
costs more than about a second.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from core.text import plural

# gguf.GGUFReader makes one numpy view per array element: a crafted array of 10⁸ numbers would
# take minutes and gigabytes. Real vocabularies (tokens, merges, scores) hold under 10⁶ entries.
MAX_ARRAY = 2_000_000
BULK_ARRAY = 16  # longer arrays: numbers read in one view, strings and nested arrays skipped (length kept)
# What GGUFReader still walks one element at a time (arrays of ≤ BULK_ARRAY, every nested element):
# real files hold a few dozen such elements, a crafted 1 MB upload held 900 × 1,024 (25 s, 600 MB).
MAX_SMALL_ELEMENTS = 10_000
MAX_METADATA = 10_000  # real files hold a few dozen entries; 60,000 one-byte ones took ~6 s to read
MAX_TENSORS = 10_000  # the largest real models have ~2,000 tensors; 20,000 tiny ones took ~4 s to read
SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}  # GGUF value type → bytes
STRING, ARRAY = 8, 9


def check_header(buf, size: int) -> dict[int, int]:
    """Walk the header and metadata with every length bounded by the bytes left; raise
    ``ValueError`` at the first count the file cannot hold. Returns the extents
    {start: end} of top-level array values longer than ``BULK_ARRAY``."""
    spans: dict[int, int] = {}
    small = 0  # array elements GGUFReader will read one by one

    def need(at: int, n: int, what: str) -> int:
        if n < 0 or at + n > size:
            raise ValueError(f"the file is truncated or corrupt: {what} runs past its end ({size:,} bytes)")
        return at + n

    def u32(at):
        need(at, 4, "a type")
        return struct.unpack_from("<I", buf, at)[0]

    def u64(at):
        need(at, 8, "a length")
        return struct.unpack_from("<Q", buf, at)[0]

    def value(at: int, vtype: int, depth: int, walked: bool = True) -> int:
        """The end of the value at ``at``; ``walked``: GGUFReader reads this one element by element."""
        nonlocal small
        if vtype in SCALAR:
            return need(at, SCALAR[vtype], "a value")
        if vtype == STRING:
            return need(at + 8, u64(at), "a string")
        if vtype == ARRAY and depth < 2:
            itype, count = u32(at), u64(at + 4)
            at += 12
            if count > MAX_ARRAY:
                raise ValueError(f"an array of {count:,} elements is more than this reader takes ({MAX_ARRAY:,})")
            walked = walked and (depth > 0 or count <= BULK_ARRAY)  # a long top-level array is read in bulk
            if walked:
                small += count
                if small > MAX_SMALL_ELEMENTS:
                    raise ValueError(
                        f"the file's metadata holds more than {MAX_SMALL_ELEMENTS:,} elements of short or nested "
                        "arrays: more than a model file holds, so it is not read"
                    )
            if itype in SCALAR:
                return need(at, count * SCALAR[itype], "an array")
            if count > (size - at) // 8:  # every element needs at least 8 bytes
                raise ValueError(f"the file is corrupt: an array claims {count:,} elements")
            for _ in range(count):
                at = value(at, itype, depth + 1, walked)
            return at
        raise ValueError(f"the file is corrupt: unknown or too deeply nested value type {vtype}")

    if bytes(buf[:4]) != b"GGUF":
        raise ValueError("not a GGUF file: it does not start with the bytes 'GGUF'")
    if size < 24:
        raise ValueError(f"the file is truncated: {size} bytes is shorter than a GGUF header (24 bytes)")
    if u32(4) not in (2, 3):
        raise ValueError(f"GGUF version {u32(4)} is not one this reader knows (2 or 3)")
    n_tensors, n_kv = u64(8), u64(16)
    if n_kv > (size - 24) // 13 or n_tensors > (size - 24) // 24:
        raise ValueError(
            f"the file is truncated or corrupt: it claims {plural(n_kv, 'metadata entry', 'metadata entries')} "
            f"and {plural(n_tensors, 'tensor')}"
        )
    if n_kv > MAX_METADATA:
        raise ValueError(f"the file has {n_kv:,} metadata entries: more than a model file holds ({MAX_METADATA:,})")
    if n_tensors > MAX_TENSORS:
        raise ValueError(f"the file lists {n_tensors:,} tensors: more than a model file holds (up to {MAX_TENSORS:,})")
    at = 24
    for _ in range(n_kv):
        at = need(at + 8, u64(at), "a metadata key")
        start = at + 4
        at = value(start, u32(at), 0)
        if u32(start - 4) == ARRAY and u64(start + 4) > BULK_ARRAY:
            spans[start] = at
    return spans


def open_reader(path: Path, spans: dict[int, int]):
    """``gguf.GGUFReader`` that reads the long arrays at ``spans`` in bulk (see the module note)."""
    import gguf

    # gguf 0.19.0 has no public hook for how a field is read: this overrides the reader's private
    # ``_get_field_parts`` (and calls its ``_get``) for the bulk arrays only; tests/core/gguf/test_reader.py
    # (test_tensor_rows_and_facts) compares the summary with the plain reader's, so a gguf release that
    # changes them fails there.
    class Reader(gguf.GGUFReader):
        def _get_field_parts(self, orig_offs, raw_type):
            end = spans.get(orig_offs)
            if raw_type != ARRAY or end is None:
                return super()._get_field_parts(orig_offs, raw_type)
            itype, count = self._get(orig_offs, np.uint32), self._get(orig_offs + 4, np.uint64)
            types = [gguf.GGUFValueType.ARRAY, gguf.GGUFValueType(int(itype[0]))]
            nptype = self.gguf_scalar_to_np.get(types[1])
            if nptype is None:  # an array of strings: skipped, its length kept
                return end - orig_offs, [itype, count], [], types
            return end - orig_offs, [itype, count, self._get(orig_offs + 12, nptype, int(count[0]))], [2], types

    return Reader(path, "r")
