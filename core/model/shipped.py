"""Load the shipped model from assets/: safetensors weights and JSON only (never pickle)."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import load_file

from core.model.config import GPTConfig
from core.model.model import GPT
from core.model.tokenizer import load_tokenizer

# The checkout (or the installed package's site-packages folder): assets/ and frontend/ sit beside core/.
ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "assets"
DTYPES = {"float32": torch.float32, "float64": torch.float64}


def load_model(dtype: str = "float32", assets: Path = ASSETS) -> GPT:
    """The shipped model in eval mode with gradients off, as ``dtype`` ('float32' or 'float64').
    In float32 (the file's own dtype) the weights stay memory-mapped from ``model.safetensors``.

    Raises ``ValueError`` for another dtype and ``FileNotFoundError`` if assets are missing.
    """
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {sorted(DTYPES)}, got {dtype!r}")
    cfg = GPTConfig.load(assets / "config.json")
    model = GPT(cfg)
    # safetensors maps the file into memory; assign=True makes those mapped tensors the model's
    # parameters instead of copying them, so the replicas of a class server (each its own
    # process) share one copy of the weights in the OS page cache. Nothing writes to them.
    model.load_state_dict(load_file(str(assets / "model.safetensors")), assign=True)
    model = model.to(DTYPES[dtype]).eval()
    for p in model.parameters():
        p.requires_grad_(False)  # shared across sessions: read-only
    return model


def load_shipped_tokenizer(assets: Path = ASSETS):
    return load_tokenizer(assets / "tokenizer.json")


def load_model_card(assets: Path = ASSETS) -> dict:
    return json.loads((assets / "model_card.json").read_text(encoding="utf-8"))
