"""Shared fixtures: tiny random models with fixed seeds, no network."""

import pytest
import torch

from core.config import PRESETS
from core.model import GPT


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
    """Browser tests share one Chromium per module (``tests.browser_util.browser_page``); it closes
    with the module, so a module that drives playwright itself starts with none running."""
    yield
    from tests.browser_util import close_browser

    close_browser()


@pytest.fixture
def tiny_model():
    return make_model()


@pytest.fixture
def tiny_model64():
    return make_model(dtype=torch.float64)
