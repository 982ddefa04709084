"""Shared fixtures: tiny random models with fixed seeds, no network."""

import functools
from pathlib import Path

import pytest
import torch

from core.model.config import PRESETS
from core.model.model import GPT

# The slowest test files (``pytest --durations``): the bench quick modes ~330 s on a loaded 2-core machine, the two
# accessibility sweeps ~140 s, the stage ~120 s, the class server ~130 s, the classroom load ~80 s, GGUF in the
# browser ~90 s, the checkpoint picked in the browser ~80 s. The suite runs on two workers (``-n 2 --dist loadfile``
# in pyproject.toml), each taking a whole file: started first, the long files do not end up running alone at the
# end while the other worker idles. pytest-xdist 3.x sorts the files by their number of tests unless given
# --no-loadscope-reorder (pyproject.toml): without it this order was ignored.
ROOT = Path(__file__).resolve().parents[1]
SLOWEST_FIRST = (
    "tests/bench/test_quick_model.py",
    "tests/browser/test_a11y.py",
    "tests/browser/test_stage.py",
    "tests/browser/test_class_lesson.py",
    "tests/browser/test_see_it_move.py",
    "tests/serve/test_replicas.py",
    "tests/bench/test_quick_browser.py",
    "tests/bench/test_classroom_load.py",
    "tests/browser/test_gguf.py",
    "tests/browser/test_models.py",
    "tests/app/test_cost.py",
    "tests/test_package.py",
    "tests/app/test_see_it_move.py",
    "tests/browser/test_lesson.py",
    "tests/browser/test_cost.py",
    "tests/browser/test_quant.py",
    "tests/browser/test_pages.py",
    "tests/browser/test_projector.py",
    "tests/browser/test_paged.py",
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


def pytest_configure(config):
    """Browser tests keep a screenshot and a Playwright trace of a failure (``bench.browser.browser_page``) under
    test-artifacts/failures/<test>/."""
    from bench import browser

    browser.RECORD["on"] = True
    _scan_components_once()


def _scan_components_once() -> None:
    """Every ``AppTest`` run first scans the installed packages' metadata for streamlit components (v2), ~0.45 s
    of CPU per new AppTest (``importlib.metadata`` parsing ~270 distributions), more than the app's own first run.
    The packages cannot change during a test run, and a real server scans once at start; so the scan's result is
    kept for the test process (the servers the browser tests start are separate processes, untouched)."""
    from streamlit.components.v2 import manifest_scanner

    if not hasattr(manifest_scanner.scan_component_manifests, "cache_info"):
        manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)


FAILURE_SECTION = "browser failure: screenshots and trace"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Name the screenshots and traces a failed browser test saved in its failure report."""
    report = yield
    from bench.browser import take_saved_failures

    saved = take_saved_failures()
    if saved and report.failed:
        lines = [str(path.relative_to(ROOT)) for path in saved]
        lines.append(f"(open a trace with: playwright show-trace {lines[-1]})")
        report.sections.append((FAILURE_SECTION, "\n".join(lines)))
    return report


def pytest_terminal_summary(terminalreporter):
    """Say where the failed browser tests' screenshots and traces are (CI prints this at the end)."""
    from bench.browser import FAILURES

    if any(name == FAILURE_SECTION for r in terminalreporter.stats.get("failed", []) for name, _ in r.sections):
        where = FAILURES.relative_to(ROOT)
        terminalreporter.write_line(f"browser failures' screenshots and Playwright traces: {where}/")


@pytest.fixture(scope="module", autouse=True)
def _one_browser_per_process(request):
    """Browser tests share one Chromium per test process (``bench.browser.browser_page``) across their
    modules (starting playwright and Chromium costs ~1.3 s); a module outside tests/browser/ may drive
    playwright itself (sync or async, in asyncio.run), so it starts with none running."""
    if "tests/browser/" not in request.path.relative_to(ROOT).as_posix():
        from bench.browser import close_browser

        close_browser()
    yield


@pytest.fixture(scope="session", autouse=True)
def _close_the_browser_at_the_end():
    yield
    from bench.browser import close_browser

    close_browser()


@pytest.fixture
def tiny_model():
    return make_model()


@pytest.fixture
def tiny_model64():
    return make_model(dtype=torch.float64)
