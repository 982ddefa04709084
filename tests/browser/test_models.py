"""Real browser: pick a checkpoint in the sidebar and step it on the decode stage."""

import pytest

from bench.browser import browser_page, heatmap_rows, rerun, running_app, screenshot, wait_rows
from core.checkpoints.load import load
from core.decode import settings as decode_settings
from core.model.tokenizer import encode

pytestmark = pytest.mark.browser
NAME = "tiny-llama"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``streamlit run main.py -- --models-dir DIR`` with one tiny random checkpoint in DIR and an
    empty Hugging Face cache."""
    from tests.core.checkpoints.test_load import write_checkpoint

    root = tmp_path_factory.mktemp("browser-models")
    folder = write_checkpoint(root / "models" / NAME, "llama")
    config = folder / "config.json"  # RoPE: a longer window is only a number
    config.write_text(config.read_text().replace('"max_position_embeddings": 64', '"max_position_embeddings": 512'))
    (root / "hub").mkdir()
    with running_app(120, ("--models-dir", str(root / "models")), {"HF_HUB_CACHE": str(root / "hub")}) as url:
        yield url, folder


def pick_and_step(page, url: str, query: str, steps: int) -> int:
    """Open the app, choose the checkpoint in the sidebar, Prefill, press → ``steps`` times;
    returns the heatmap's rows."""
    page.goto(f"{url}/{query}")
    page.get_by_role("button", name="Prefill").wait_for(timeout=60000)
    page.get_by_test_id("stExpandSidebarButton").click()
    picker = page.get_by_role("combobox", name="Model")
    picker.wait_for(timeout=30000)
    picker.click()
    picker.press_sequentially(NAME)  # filters the list to the checkpoint
    option = page.get_by_role("option", name=f"{NAME} · Llama · ", exact=False)
    option.wait_for(timeout=60000)
    with rerun(page):  # as a student sees the switch done (presenter mode hides the card below)
        option.click()
    if "present=1" not in query:  # presenter mode hides the card
        page.get_by_text("The model in use").wait_for(timeout=60000)
        screenshot(page, "checkpoint-sidebar-card")
    page.get_by_test_id("stSidebarCollapseButton").locator("button").click()
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    # The switch can run the page once more after the picker's rerun (the checkpoint's load): a click
    # while that run replaces the button was lost once in a CI run. Click on an idle page; if the run that
    # followed still shows the empty stage's hint, the click did not reach the server: click once more.
    # A CI run beside two busy processes lost the click itself: no run followed it in 60 s and the hint stayed.
    for _ in range(2):
        try:
            with rerun(page, timeout_ms=20000):
                page.get_by_role("button", name="Prefill").click()
        except PlaywrightTimeout:
            continue  # no run followed the click: as a user would, click once more
        if not page.get_by_text("to run the prompt through the model").count():  # the empty stage's hint
            break
    try:
        page.locator(".attn-root").wait_for(timeout=60000)
    except PlaywrightTimeout as err:  # once in a CI run (not reproduced): keep what the page showed
        shot = screenshot(page, f"checkpoint-no-stage{query.replace('?', '-').replace('=', '')}")
        text = page.get_by_test_id("stMain").inner_text()[:1500]
        raise AssertionError(f"no stage 60 s after Prefill; screenshot {shot}; the main area read:\n{text}") from err
    page.wait_for_function("() => document.querySelector('.attn-root')?.dataset.rows > 0", timeout=60000)
    for _ in range(steps):
        rows = heatmap_rows(page)
        page.keyboard.press("ArrowRight")
        wait_rows(page, rows + 1)
    return heatmap_rows(page)


@pytest.mark.parametrize("width,height,query", [(1280, 800, ""), (1920, 1080, "?present=1")])
def test_pick_a_checkpoint_in_the_sidebar_and_step_it(server, width, height, query):
    """After choosing the checkpoint, Prefill draws one row per prompt position of its tokenizer and
    each → adds one; the stage's text names no error."""
    url, folder = server
    _, tok, _ = load(folder)
    n = len(encode(tok, decode_settings.DEFAULT_PROMPT))
    with browser_page(width, height) as page:
        rows = pick_and_step(page, url, query, 3)
        assert rows == n + 3
        assert page.locator("[data-testid='stException']").count() == 0
        screenshot(page, f"checkpoint-stage-{width}x{height}")
