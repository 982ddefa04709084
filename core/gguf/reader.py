"""A memory plan from a real .gguf file: its header and tensor table (``gguf.GGUFReader``,
memory-mapped, so tensor data is never read), then the KV cache for a chosen context and cache
type against a memory budget (GGUF: the format's spec, https://github.com/ggml-org/ggml/blob/master/docs/gguf.md).

Which files may be read at all is ``core.checkpoints.gguf_files``' business (an operator's folder, uploads).
A malformed, truncated or hostile file gets a ``ValueError`` saying so; before ``GGUFReader`` walks the
metadata, ``core.gguf.header.check_header`` bounds every count by the file's size, so a crafted count cannot make
the reader loop for ever.
``core.gguf.header`` bounds the header first and reads it with ``GGUFReader`` quickly; the layers
a plan sums over are capped too (``MAX_LAYERS``).
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

from core.gguf.header import STRING, check_header, open_reader
from core.text import quoted

MAX_DIMS = 4  # ggml tensors have at most 4 dimensions
MAX_LAYERS = 10_000  # real models have at most a few hundred; a plan over 10⁶ "layers" took 28 s


@dataclass(frozen=True)
class TensorRow:
    """One tensor of the file: name, ggml type, ``shape`` in numpy order (rows, row length),
    number of values and bytes of data."""

    name: str
    ggml_type: str
    shape: tuple[int, ...]
    n_elements: int
    n_bytes: int


@dataclass(frozen=True)
class GGUFSummary:
    """What a memory plan needs from a GGUF header. KV terms are None where the file does not
    give them; ``n_kv_head`` may be a tuple (one per layer). ``bits_per_weight`` = 8 · bytes /
    values over all tensors."""

    source: str
    file_bytes: int
    architecture: str | None
    model_name: str | None
    file_type: str | None
    n_layer: int | None
    n_head: int | tuple[int, ...] | None
    n_kv_head: int | tuple[int, ...] | None
    head_dim_k: int | None
    head_dim_v: int | None
    context_length: int | None
    tensors: tuple[TensorRow, ...]
    n_params: int
    weight_bytes: int
    bits_per_weight: float
    sliding_window: int | None = None  # <arch>.attention.sliding_window: positions a local layer attends to (0: off)
    full_attention_interval: int | None = None  # <arch>.full_attention_interval: Qwen3-Next's attention layers
    ssm: tuple[tuple[str, int], ...] = ()  # <arch>.ssm.* whole-number terms (conv_kernel, state_size, …)
    arch_keys: tuple[str, ...] = ()  # every <arch>.* key whose value is not off (0, false, empty)

    def tensor_rows(self) -> list[dict]:
        """The tensor table, in file order: name, ggml type, shape (numpy order: rows, row length),
        values, bytes, bits per weight (8 · bytes / values)."""
        return [
            {
                "tensor": t.name,
                "type": t.ggml_type,
                "shape": " × ".join(str(d) for d in t.shape),
                "values": t.n_elements,
                "bytes": t.n_bytes,
                "bits per weight": round(8 * t.n_bytes / t.n_elements, 4) if t.n_elements else None,
            }
            for t in self.tensors
        ]

    def facts(self) -> dict[str, str]:
        """What the header says, as text for a table ("not in the file" where a term is missing;
        KV heads per layer when they vary)."""

        def say(v):
            if v is None:
                return "not in the file"
            if isinstance(v, tuple):
                return "per layer: " + ", ".join(str(x) for x in v[:8]) + (" …" if len(v) > 8 else "")
            return f"{v:,}" if isinstance(v, int) else str(v)

        return {
            "architecture": say(self.architecture),
            "name": say(self.model_name),
            "file type (general.file_type)": say(self.file_type),
            "layers (n_layer)": say(self.n_layer),
            "query heads (n_head)": say(self.n_head),
            "KV heads (n_kv_head)": say(self.n_kv_head),
            "head size (K / V)": f"{say(self.head_dim_k)} / {say(self.head_dim_v)}",
            "context length": say(self.context_length),
            "tensors": f"{len(self.tensors):,}",
            "parameters (values in tensors)": f"{self.n_params:,}",
            "tensor bytes": f"{self.weight_bytes:,}",
            "file bytes": f"{self.file_bytes:,}",
            "bits per weight, all tensors (8 · tensor bytes / values)": f"{self.bits_per_weight:.4f}",
        }

    def by_type(self) -> dict[str, dict]:
        """Per ggml type: tensors, values and bytes (where the file's bytes go)."""
        out: dict[str, dict] = {}
        for t in self.tensors:
            row = out.setdefault(t.ggml_type, {"tensors": 0, "values": 0, "bytes": 0})
            row["tensors"] += 1
            row["values"] += t.n_elements
            row["bytes"] += t.n_bytes
        return out


def _scalar_ints(reader, key: str, lowest: int = 1):
    """An integer field (or an array of integers, as a tuple), None if absent, not integers or
    below ``lowest``."""
    field = reader.get_field(key)
    if field is None or not field.types:
        return None
    if field.types[0] == 9:  # GGUFValueType.ARRAY
        values = field.contents()
        ok = field.types[-1] in (0, 1, 2, 3, 4, 5, 10, 11) and values
        return tuple(int(v) for v in values) if ok and all(0 <= v <= 10**7 for v in values) else None
    if field.types[0] not in (0, 1, 2, 3, 4, 5, 10, 11):
        return None
    v = int(field.contents())
    return v if lowest <= v <= 2**40 else None


def _string(reader, key: str) -> str | None:
    field = reader.get_field(key)
    if field is None or field.types != [STRING]:
        return None
    try:
        return field.contents()[:200]
    except UnicodeDecodeError:
        raise ValueError(f"the file is corrupt: its {key} is not UTF-8 text") from None


def _arch_keys(reader, arch: str | None) -> tuple[str, ...]:
    """The header's keys under ``<arch>.`` whose value is not off (0, false or an empty array), in file order."""
    if not arch:
        return ()
    out = []
    for name, field in reader.fields.items():
        if not name.startswith(f"{arch}.") or not field.types:
            continue
        try:
            value = field.contents()
        except (ValueError, UnicodeDecodeError):
            value = True  # unreadable: listed, not hidden
        if value in (0, False, None, "", []):
            continue
        out.append(name[:120])
    return tuple(out[:400])


def _ssm_terms(reader, a: str) -> tuple[tuple[str, int], ...]:
    names = ("conv_kernel", "state_size", "group_count", "inner_size", "time_step_rank")
    terms = ((n, _scalar_ints(reader, f"{a}.ssm.{n}")) for n in names)
    return tuple((n, v) for n, v in terms if isinstance(v, int))


def _file_type_name(code) -> str | None:
    import gguf

    if not isinstance(code, int):
        return None
    try:
        return gguf.LlamaFileType(code).name.replace("MOSTLY_", "").replace("ALL_", "")
    except ValueError:
        return f"unknown ({code})"


def read_gguf(path: str | Path, source: str | None = None) -> GGUFSummary:
    """Read the header and tensor table of the GGUF file at ``path`` (memory-mapped).

    Raises ``ValueError`` for an empty, truncated, malformed or hostile file, naming the problem."""
    path = Path(path)
    size = path.stat().st_size
    if size == 0:
        raise ValueError("the file is empty")
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        spans = check_header(buf, size)
    try:
        reader = open_reader(path, spans)
    except (ValueError, KeyError, IndexError, OverflowError, TypeError, RecursionError, struct.error) as err:
        raise ValueError(
            f"the file is truncated or corrupt: gguf cannot read it ({type(err).__name__}: {str(err)[:100]})"
        ) from None
    rows = []
    for t in reader.tensors:
        n_bytes = int(t.n_bytes)
        if len(t.shape) > MAX_DIMS or t.data_offset + n_bytes > size or int(t.data.nbytes) != n_bytes:
            raise ValueError(f"the file is truncated or corrupt: tensor {quoted(t.name, 60)} runs past its end")
        shape = tuple(int(d) for d in reversed(t.shape.tolist()))
        rows.append(TensorRow(t.name[:200], t.tensor_type.name, shape, int(t.n_elements), n_bytes))
    arch = _string(reader, "general.architecture")
    a = arch or "?"
    n_head = _scalar_ints(reader, f"{a}.attention.head_count")
    n_embd = _scalar_ints(reader, f"{a}.embedding_length")
    # n_embd / n_head when the file gives no key/value length, as llama.cpp derives it; llama.cpp
    # refuses an embedding that does not divide into the heads (66 over 4 read as 16 here).
    whole = isinstance(n_embd, int) and isinstance(n_head, int) and n_head and n_embd % n_head == 0
    head_dim = n_embd // n_head if whole else None
    n_params = sum(r.n_elements for r in rows)
    weight_bytes = sum(r.n_bytes for r in rows)
    summary = GGUFSummary(
        source=(source or path.name)[:100],
        file_bytes=size,
        architecture=arch,
        model_name=_string(reader, "general.name"),
        file_type=_file_type_name(_scalar_ints(reader, "general.file_type", lowest=0)),
        n_layer=_scalar_ints(reader, f"{a}.block_count"),
        n_head=n_head,
        n_kv_head=_scalar_ints(reader, f"{a}.attention.head_count_kv") or n_head,
        head_dim_k=_scalar_ints(reader, f"{a}.attention.key_length") or head_dim,
        head_dim_v=_scalar_ints(reader, f"{a}.attention.value_length") or head_dim,
        context_length=_scalar_ints(reader, f"{a}.context_length"),
        tensors=tuple(rows),
        n_params=n_params,
        weight_bytes=weight_bytes,
        bits_per_weight=8 * weight_bytes / n_params if n_params else 0.0,
        sliding_window=_scalar_ints(reader, f"{a}.attention.sliding_window", lowest=0),  # 0: switched off (Llama 4)
        full_attention_interval=_scalar_ints(reader, f"{a}.full_attention_interval"),
        ssm=_ssm_terms(reader, a),
        arch_keys=_arch_keys(reader, arch),
    )
    del reader  # release the memory map
    return summary
