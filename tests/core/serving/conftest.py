"""The serving tests run torch on one thread, as the app does."""

import pytest
import torch


@pytest.fixture(autouse=True)
def one_thread():
    """One torch thread, as the app runs: on a loaded 2-core machine two threads contend (~10× slower)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
