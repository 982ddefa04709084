"""Shared fixtures: tiny random models with fixed seeds, no network."""

from pathlib import Path

import pytest
import torch

from core.model.config import PRESETS
from core.model.model import GPT

# The slowest test files (``pytest --durations``, one after another on a 2-core machine: the two
# accessibility sweeps 160 s, the stage 170 s, the classroom load 90 s, GGUF in the browser 90 s, the
# class server 60 s, the walked lesson 40 s). The suite runs on two workers (``-n 2 --dist loadfile``
# in pyproject.toml), each taking a whole file: started first, the long files do not end up running
# alone at the end while the other worker idles. pytest-xdist 3.x sorts the files by their number of
# tests unless given --no-loadscope-reorder (pyproject.toml): without it this order was ignored.
ROOT = Path(__file__).resolve().parents[1]
SLOWEST_FIRST = (
    "tests/browser/test_stage.py",
    "tests/browser/test_a11y.py",
    "tests/bench/test_classroom_load.py",
    "tests/browser/test_gguf.py",
    "tests/serve/test_replicas.py",
    "tests/browser/test_lesson.py",
    "tests/browser/test_cost.py",
    "tests/browser/test_quant.py",
    "tests/browser/test_projector.py",
)


def pytest_collection_modifyitems(items):
    """Put ``SLOWEST_FIRST``'s files first, in that order; the rest keep their order."""
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.relative_to(ROOT).as_posix(), len(rank)))


def make_model(cfg=PRESETS["tiny"], seed: int = 0, dtype=torch.float32) -> GPT:
    torch.manual_seed(seed)
    model = GPT(cfg)
    # Random init is small; scale up so attention is far from uniform and logits differ.
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                p.normal_(0, 0.3)
    return model.to(dtype).eval()


@pytest.fixture(scope="module", autouse=True)
def _close_the_modules_browser():
    """Browser tests share one Chromium per module (``bench.browser.browser_page``); it closes
    with the module, so a module that drives playwright itself starts with none running."""
    yield
    from bench.browser import close_browser

    close_browser()


@pytest.fixture
def tiny_model():
    return make_model()


@pytest.fixture
def tiny_model64():
    return make_model(dtype=torch.float64)
