"""Where real checkpoints come from: folders found offline, and the app's command line.

The app never downloads. A teacher puts a checkpoint on the machine themselves (``hf download
HuggingFaceTB/SmolLM2-135M --local-dir …``, or anything that fills the Hugging Face cache) and
either names it (``streamlit run main.py -- --model PATH``) or lets the sidebar list what the
cache and ``--models-dir`` hold. Paths come only from the command line and these folders, never
from a student's browser.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from core.checkpoints.families import SUPPORTED
from core.checkpoints.load import checkpoint_name
from core.cost.shapes import MAX_CONFIG_BYTES


def hub_dir() -> Path:
    """The Hugging Face hub cache, where ``huggingface_hub`` (2.x, ``constants.HF_HUB_CACHE``) looks:
    ``HF_HUB_CACHE``, else the legacy ``HUGGINGFACE_HUB_CACHE``, else ``HF_HOME/hub``, with ``HF_HOME``
    defaulting to ``XDG_CACHE_HOME/huggingface``, then ``~/.cache/huggingface``; "~" and "$VARS" expanded
    as it expands them. Read at each call (the library reads them once, at import)."""
    home = os.path.expandvars(
        os.path.expanduser(
            os.getenv(
                "HF_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "huggingface")
            )
        )
    )
    legacy = os.getenv("HUGGINGFACE_HUB_CACHE", os.path.join(home, "hub"))
    return Path(os.path.expandvars(os.path.expanduser(os.getenv("HF_HUB_CACHE", legacy))))


@dataclass(frozen=True)
class FoundCheckpoint:
    """A folder that looks loadable: ``name`` ("org/name", plus "@rev" when a model has several
    snapshots), its ``path``, ``architecture`` and safetensors ``file_bytes`` on disk."""

    name: str
    path: Path
    architecture: str
    file_bytes: int


def find_checkpoints(models_dir: str | Path | None = None, hub: Path | None = None) -> list[FoundCheckpoint]:
    """Checkpoints on this machine, sorted by name: every snapshot in the hub cache (``hub``,
    default ``hub_dir()``: ``models--org--name/snapshots/<rev>/``) and every sub-folder of
    ``models_dir`` (or hub-style ``models--*`` folders inside it) whose ``config.json`` names a
    supported architecture without remote code, with ``*.safetensors`` and ``tokenizer.json``.
    Only reads small JSON files and directory listings; a missing folder lists nothing."""
    candidates: list[tuple[Path, str | None]] = []
    for root in [hub or hub_dir()] + ([Path(models_dir).expanduser()] if models_dir else []):
        if not root.is_dir():
            continue
        for entry in sorted(root.iterdir()):
            if not inside(entry, root):  # one rule with .gguf files: a link leading out of the folder is left out
                continue
            snapshots = entry / "snapshots"
            if entry.name.startswith("models--") and snapshots.is_dir():
                revs = sorted(p for p in snapshots.iterdir() if p.is_dir() and inside(p, root))
                candidates += [(p, p.name[:7] if len(revs) > 1 else None) for p in revs]
            elif entry.is_dir():
                candidates.append((entry, None))
    found = []
    for path, rev in candidates:
        arch = _loadable_architecture(path)
        size = _safetensors_bytes(path) if arch is not None else None
        if size is not None:  # an unreadable shard (a broken link: an interrupted download) leaves it out
            name = checkpoint_name(path) + (f"@{rev}" if rev else "")
            found.append(FoundCheckpoint(name, path, arch, size))
    return sorted(found, key=lambda c: c.name.lower())


def inside(path: Path, root: Path) -> bool:
    """Whether ``path`` resolves (links followed) to ``root`` or somewhere below it: the rule for every entry of
    a models folder, checkpoint folders and .gguf files alike (``core.checkpoints.gguf_files``)."""
    try:
        real, top = path.resolve(), root.resolve()
    except (OSError, RuntimeError):  # a link loop
        return False
    return real == top or top in real.parents


def _safetensors_bytes(folder: Path) -> int | None:
    """Bytes of a folder's ``*.safetensors`` files, or None when one cannot be read: a hub snapshot's
    files are links to blobs, and an interrupted download leaves a link to nothing, whose ``stat``
    raised and took every page down for every session."""
    try:
        return sum(f.stat().st_size for f in folder.glob("*.safetensors"))
    except OSError:
        return None


def _loadable_architecture(folder: Path) -> str | None:
    """The architecture a folder's checkpoint would load as, or None. Never raises: one odd folder in
    the cache (config.json nested 100,000 deep, a named pipe) must not take the picker down."""
    config = folder / "config.json"
    if not config.is_file():  # a named pipe would block the read
        return None
    try:
        if config.stat().st_size > MAX_CONFIG_BYTES:  # 2 GB "config.json": refused by its size, never read
            return None
        hf = json.loads(config.read_text(encoding="utf-8"))
        arch = hf["architectures"][0]
    except (OSError, ValueError, KeyError, IndexError, TypeError, RecursionError):
        return None
    if not isinstance(arch, str) or arch not in SUPPORTED or hf.get("auto_map"):
        return None
    if not (folder / "tokenizer.json").is_file():
        return None
    return arch if any(folder.glob("*.safetensors")) else None
