"""Where a .gguf file may come from on a classroom server: a folder the operator names, or bytes a
student uploads. Never a path a student types.

``list_gguf_files`` lists the ``*.gguf`` directly in the operator's folder (hidden files, folders
and symlinks that resolve outside it are left out); a file is then chosen by its listed name only.
Uploads are size-capped and written to a temporary file that is removed after reading.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from core.checkpoints.sources import inside
from core.gguf.reader import GGUFSummary, read_gguf
from core.text import quoted

MAX_UPLOAD_BYTES = 200 * 2**20  # streamlit's default upload limit (200 MB)


@dataclass(frozen=True)
class ModelFile:
    """A ``.gguf`` file listed in the models folder: its ``name`` there and size in bytes."""

    name: str
    size_bytes: int


def list_gguf_files(models_dir: str | Path) -> list[ModelFile]:
    """The ``*.gguf`` files directly in the operator's ``models_dir``, by name; hidden files,
    folders and symlinks that resolve outside the folder are left out. Raises ``ValueError`` if
    the folder does not exist."""
    root = Path(models_dir)
    if not root.is_dir():
        raise ValueError(f"the models folder {quoted(str(models_dir), 100)} does not exist")
    root = root.resolve()
    out = []
    for entry in sorted(os.scandir(root), key=lambda e: e.name):
        if entry.name.startswith(".") or not entry.name.lower().endswith(".gguf"):
            continue
        if not inside(Path(entry.path), root):  # a symlink leading elsewhere
            continue
        real = Path(entry.path).resolve()
        if real.is_file():
            out.append(ModelFile(entry.name, real.stat().st_size))
    return out


def read_from_models_dir(models_dir: str | Path, name: str) -> GGUFSummary:
    """Read the file listed as ``name`` in ``models_dir``. ``name`` must be one of
    ``list_gguf_files``' names exactly; anything else (a path, ``..``) is refused."""
    listed = {f.name for f in list_gguf_files(models_dir)}
    if name not in listed:
        raise ValueError(f"{quoted(str(name), 60)} is not a model in the models folder; choose one of the listed files")
    return read_gguf(Path(models_dir).resolve() / name, name)


def read_upload(data: bytes, name: str = "upload.gguf", max_bytes: int = MAX_UPLOAD_BYTES) -> GGUFSummary:
    """Read uploaded bytes as a GGUF file (written to a temporary file, removed afterwards).
    Raises ``ValueError`` above ``max_bytes`` or for a file that is not readable GGUF."""
    if len(data) > max_bytes:
        raise ValueError(f"the upload is {len(data):,} bytes; the limit is {max_bytes:,}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "upload.gguf"
        path.write_bytes(data)
        return read_gguf(path, name)
