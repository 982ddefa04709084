"""The app's version: a checkout's ``pyproject.toml`` (the source of truth there, even when an older copy is
installed in the same environment), else the installed distribution's metadata. Imports no streamlit."""

from __future__ import annotations

import functools
import importlib.metadata
import tomllib
from pathlib import Path

HOME = Path(__file__).resolve().parents[1]  # the checkout, or the installed package's folder
DISTRIBUTION = "inference-explainer"


@functools.cache  # read once per process: every page run puts it in the menu
def app_version() -> str:
    """``"0.3.0"``; ``"unknown"`` when neither a checkout's pyproject.toml nor installed metadata says."""
    pyproject = HOME / "pyproject.toml"
    if pyproject.is_file():
        return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
