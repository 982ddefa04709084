"""Which model a session runs: the shipped one or a checkpoint found on this machine.

The picker lists the shipped model, the ``--model`` folder and the checkpoints
``core.checkpoints.sources.find_checkpoints`` finds (the Hugging Face cache, ``--models-dir``); a
student chooses among these names and never types a path. Loaded checkpoints are shared
read-only by every session of a server process (``ModelStore``), each session keeps its own
choice. Also here: the draft for speculative decoding (a smaller found checkpoint with the same
vocabulary), and the limits that keep a page's work bounded for a large model.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from tokenizers import Tokenizer

from core.checkpoints.app_options import DEFAULT_MAX_GIB
from core.checkpoints.load import checkpoint_name, load
from core.checkpoints.sources import FoundCheckpoint
from core.text import format_bytes

SHIPPED = "The shipped model"
DTYPES = {"float32": torch.float32, "float64": torch.float64}


@dataclass(frozen=True)
class ModelOption:
    """One entry of the picker: its ``name`` (what a session stores and a share link carries),
    the checkpoint folder ``path`` (None: the shipped model), its ``architecture`` and the
    safetensors bytes on disk."""

    name: str
    path: str | None = None
    architecture: str = "LlamaForCausalLM"
    file_bytes: int = 0

    @property
    def label(self) -> str:
        """What the picker shows: name · family · bytes on disk ("SmolLM2-135M · Llama · 269.06 MB")."""
        if self.path is None:
            return f"{SHIPPED} (1 M parameters, trained here)"
        family = self.architecture.removesuffix("ForCausalLM").removesuffix("LMHeadModel")
        return f"{self.name} · {family} · {format_bytes(self.file_bytes, binary=False)}"


def model_options(command_line_model: Path | None, found: list[FoundCheckpoint]) -> dict[str, ModelOption]:
    """The picker's entries by name: the shipped model first, then the ``--model`` folder (unless
    found already), then every found checkpoint. The ``--model`` folder is listed even if it will
    be refused: choosing it says why."""
    options = {SHIPPED: ModelOption(SHIPPED)}
    paths = {str(Path(c.path).resolve()) for c in found}
    if command_line_model is not None and str(command_line_model.resolve()) not in paths:
        name = checkpoint_name(command_line_model)
        options[name] = ModelOption(
            name, str(command_line_model), _architecture(command_line_model), _bytes(command_line_model)
        )
    for c in found:
        name = c.name if c.name not in options else f"{c.name} ({c.path})"
        options[name] = ModelOption(name, str(c.path), c.architecture, c.file_bytes)
    return options


def default_choice(command_line_model: Path | None, options: dict[str, ModelOption]) -> str:
    """What a new session starts with: the ``--model`` folder if given, else the shipped model."""
    if command_line_model is not None:
        want = str(command_line_model.resolve())
        for name, opt in options.items():
            if opt.path is not None and str(Path(opt.path).resolve()) == want:
                return name
    return SHIPPED


def _architecture(folder: Path) -> str:
    try:
        return str(json.loads((folder / "config.json").read_text(encoding="utf-8"))["architectures"][0])
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return "unknown architecture"


def _bytes(folder: Path) -> int:
    try:
        return sum(f.stat().st_size for f in folder.glob("*.safetensors"))
    except OSError:
        return 0


def vocabulary(folder: str | Path) -> dict[str, int] | None:
    """The token → id map of a checkpoint's tokenizer.json (added tokens included), or None if
    it cannot be read."""
    try:
        return Tokenizer.from_file(str(Path(folder) / "tokenizer.json")).get_vocab(with_added_tokens=True)
    except Exception:  # tokenizers raises a plain Exception for a malformed file
        return None


def _vocab_size(folder: str | Path) -> int | None:
    try:
        hf = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
        return int(hf["vocab_size"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def draft_candidates(target: ModelOption, options: dict[str, ModelOption]) -> list[ModelOption]:
    """Drafts for speculative decoding with ``target``, best first: the other checkpoints with fewer
    bytes on disk (smallest first) whose tokenizer maps every token to the same id and whose
    output layer has the same ``vocab_size`` (the acceptance rule compares p and q over one
    vocabulary), e.g. SmolLM2-135M for SmolLM2-360M. Empty if there is none, or for the shipped
    model (its draft ships beside it)."""
    if target.path is None:
        return []
    want_vocab, want_size = vocabulary(target.path), _vocab_size(target.path)
    if want_vocab is None or want_size is None:
        return []
    smaller = sorted(
        (
            o
            for o in options.values()
            if o.path is not None and o.name != target.name and o.file_bytes < target.file_bytes
        ),
        key=lambda o: o.file_bytes,
    )
    return [o for o in smaller if _vocab_size(o.path) == want_size and vocabulary(o.path) == want_vocab]


def find_draft(target: ModelOption, options: dict[str, ModelOption]) -> ModelOption | None:
    """The first of ``draft_candidates`` (None if there is none)."""
    return next(iter(draft_candidates(target, options)), None)


class ModelStore:
    """Loaded checkpoints of one server process, keyed by (folder, dtype) and shared read-only by
    every session: ``get`` loads once (``core.checkpoints.load.load``), later calls return the same
    ``(model, tokenizer, card)``. At most ``max_models`` are kept: the least recently used one is
    dropped (a session still holding it keeps it alive until it lets go). Thread-safe: a server
    runs sessions in threads; two sessions asking for one folder load it once (the second waits).
    ``load`` refusals (``ValueError``) are not kept, so a folder fixed on disk loads next time."""

    def __init__(self, max_gib: float = DEFAULT_MAX_GIB, max_models: int = 3, loader=load):
        self.max_gib, self.max_models, self._loader = max_gib, max_models, loader
        self._lock = threading.Lock()
        self._models: OrderedDict = OrderedDict()
        self._loading: dict = {}

    def loaded(self, path: str, dtype: str) -> bool:
        with self._lock:
            return (str(path), dtype) in self._models

    def get(self, path: str, dtype: str = "float32", progress: Callable[[float], None] | None = None):
        """``(model, tokenizer, card)`` of the folder ``path`` as ``dtype`` ('float32' or
        'float64'). Raises ``ValueError`` with ``load``'s message for a refused folder."""
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {sorted(DTYPES)}, got {dtype!r}")
        key = (str(path), dtype)
        with self._lock:
            if key in self._models:
                self._models.move_to_end(key)
                return self._models[key]
            key_lock = self._loading.setdefault(key, threading.Lock())
        with key_lock:  # one load per folder and dtype; a second session waits for the first
            with self._lock:
                if key in self._models:
                    return self._models[key]
            entry = self._loader(path, DTYPES[dtype], max_gib=self.max_gib, progress=progress)
            with self._lock:
                self._models[key] = entry
                while len(self._models) > self.max_models:
                    self._models.popitem(last=False)
                return entry


# ---- bounded work for a large model -------------------------------------------------------------


CONTEXT_BUDGET = 64 * 2**20  # bytes one session's context-page run may hold (KV cache + attention kept)
CONTEXT_MAX_NEW = 200  # the context page's largest "tokens to generate"


def window_cap(
    cfg, budget_bytes: int = CONTEXT_BUDGET, n_new: int = CONTEXT_MAX_NEW, itemsize: int = 4, step: int = 8
) -> int:
    """The context page's largest window (a multiple of ``step``, at most ``cfg.block_size``, at least
    ``step``) whose run on the context page fits ``budget_bytes``: the KV cache (2·L·H_kv·d·b per
    position) plus the attention kept for the figure, ``n_layer · n_head`` shares per query and
    key (the prompt's W² when it fills the window, then W per generated token, ``n_new`` of them)."""
    per_kv = 2 * cfg.n_layer * cfg.n_kv_head * cfg.head_dim * itemsize
    per_share = cfg.n_layer * cfg.n_head * itemsize

    def need(w: int) -> int:
        return w * per_kv + per_share * (w * w + n_new * w)

    w = cfg.block_size - cfg.block_size % step
    while w > step and need(w) > budget_bytes:
        w -= step
    return max(step, w)


def prefill_positions_cap(n_params: int, budget_flops: float) -> int:
    """Positions a prefill may process within ``budget_flops`` (≈ 2 · parameters FLOPs per
    position, the weights' multiply-adds): bounds a check that runs the real model."""
    return int(budget_flops // (2 * n_params))
