"""The picker's Hugging Face cache is the one huggingface_hub uses, under every mix of its variables."""

import importlib
import itertools

import pytest

from core.checkpoints.sources import hub_dir

huggingface_hub = pytest.importorskip("huggingface_hub")
VARS = ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME")


@pytest.mark.parametrize("present", list(itertools.product([False, True], repeat=len(VARS))))
def test_hub_dir_matches_huggingface_hub_constants(present, tmp_path, monkeypatch):
    """Each subset of HF_HUB_CACHE, the legacy HUGGINGFACE_HUB_CACHE, HF_HOME and XDG_CACHE_HOME set (one with
    "~"): hub_dir() equals huggingface_hub.constants.HF_HUB_CACHE reloaded under the same environment."""
    monkeypatch.delenv("HUGGINGFACE_CO_STAGING", raising=False)
    for name, on in zip(VARS, present, strict=True):
        if on:
            monkeypatch.setenv(name, "~/x-home" if name == "HF_HOME" else str(tmp_path / name.lower()))
        else:
            monkeypatch.delenv(name, raising=False)
    constants = importlib.reload(huggingface_hub.constants)
    try:
        assert str(hub_dir()) == constants.HF_HUB_CACHE
    finally:
        monkeypatch.undo()
        importlib.reload(huggingface_hub.constants)
