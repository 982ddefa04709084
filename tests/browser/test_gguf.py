"""Real browser: GGUF on the pages — one block under the ruler, real formats and the GGUF download on the weights
page, llama.cpp's cache types and a memory plan from a .gguf (the operator's folder, an upload) on the memory page,
at 1280×800 and at 1920×1080 in presenter mode. Screenshots in test-artifacts/."""

import gguf
import numpy as np
import pytest

from bench.browser import browser_page, rerun, running_app, screenshot, wait_idle, wait_still

pytestmark = pytest.mark.browser

SIZES = [((1280, 800), "", "laptop"), ((1920, 1080), "?present=1", "projector")]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """A models folder with a one-layer F32 export (also uploaded below: 0.3 MB, under the 1 MB limit)."""
    from core.gguf.writer import write_gguf
    from core.model.config import GPTConfig
    from core.model.shipped import load_shipped_tokenizer
    from tests.conftest import make_model

    folder = tmp_path_factory.mktemp("models")
    cfg = GPTConfig(vocab_size=1024, block_size=64, n_layer=1, n_head=2, n_kv_head=1, n_embd=32, ffn_hidden=64)
    write_gguf(make_model(cfg), load_shipped_tokenizer(), "F32", folder / "tiny-F32.gguf", name="tiny")
    return folder


def _export(path, n_layer=1):
    """A small F32 export (one or two layers: two different files of well under the 1 MB upload limit)."""
    from core.gguf.writer import write_gguf
    from core.model.config import GPTConfig
    from core.model.shipped import load_shipped_tokenizer
    from tests.conftest import make_model

    cfg = GPTConfig(vocab_size=1024, block_size=64, n_layer=n_layer, n_head=2, n_kv_head=1, n_embd=32, ffn_hidden=64)
    write_gguf(make_model(cfg), load_shipped_tokenizer(), "F32", path, name="tiny")
    return path


@pytest.fixture(scope="module")
def url(models):
    with running_app(app_args=("--models-dir", str(models))) as u:
        yield u


def _open(page, url, path):
    page.goto(url + path)
    page.locator("h1").first.wait_for(timeout=60000)
    wait_idle(page)  # the page's first run has ended


# Where the heading is, scrolled to the top of the main area: figures still drawing above it move it.
HEADING_AT_TOP_JS = """(heading) => {
  const e = [...document.querySelectorAll('[data-testid=stMain] *')]
    .find((e) => e.childElementCount === 0 && e.textContent.trim() === heading);
  if (!e) return null;
  e.scrollIntoView({block: 'start'});
  return Math.round(e.getBoundingClientRect().top);
}"""


def _to_top(page, heading):
    """Scroll the main area so ``heading`` is at the top, until it stays there (for the screenshot)."""
    wait_idle(page)
    wait_still(page, HEADING_AT_TOP_JS, heading)


@pytest.mark.parametrize("size,query,tag", SIZES, ids=[s[2] for s in SIZES])
def test_gguf_views(url, size, query, tag):
    """The ruler's Q4_0 block shows gguf's bytes for the padded default values; “7B, Q2_K, 8K” reads 2.625 bits per
    weight; the models folder's file is listed and read (1 layer); each view screenshotted."""
    padded = np.zeros((1, 32), dtype=np.float32)
    padded[0, :4] = [0.34, -0.12, 0.7, 0.23]
    hex_ = gguf.quants.quantize(padded, gguf.GGMLQuantizationType.Q4_0).tobytes().hex(" ")
    with browser_page(*size) as page:
        _open(page, url, "/quantize" + query)
        page.get_by_text(hex_, exact=True).wait_for(timeout=30000)
        _to_top(page, "One block of a real format (llama.cpp)")
        screenshot(page, f"gguf-block-{tag}")
        _open(page, url, "/weights" + query)
        box = page.get_by_role("textbox", name="Model card")
        box.fill("7B, Q2_K, 8K")
        box.press("Enter")
        page.get_by_text("2.625 bits per weight ·").first.wait_for(timeout=30000)
        _to_top(page, "Reading a model card")
        screenshot(page, f"gguf-card-{tag}")
        _open(page, url, "/memory" + query)
        page.get_by_text("the models folder (--models-dir)").click()
        page.get_by_role("cell", name="tiny", exact=True).wait_for(timeout=30000)
        assert page.get_by_role("combobox", name="File in the models folder").input_value().startswith("tiny-F32.gguf")
        _to_top(page, "A memory plan from a real .gguf file")
        screenshot(page, f"gguf-plan-{tag}")


def test_download_and_upload(url, models, tmp_path):
    """The Q8_0 download is the size its label names = gguf's data offset + the tensors' bytes; the tiny file
    uploaded on the memory page is read back (1 layer, 1 KV head of 16)."""
    with browser_page(1280, 800) as page:
        _open(page, url, "/weights")
        page.get_by_text("Q8_0", exact=True).click()
        button = page.get_by_role("button", name="Download tiny-travel-gpt-Q8_0.gguf")
        button.wait_for(timeout=30000)
        with page.expect_download(timeout=60000) as dl:
            button.click()
        path = tmp_path / "got.gguf"
        dl.value.save_as(path)
        size = path.stat().st_size
        r = gguf.GGUFReader(path)
        assert size == r.data_offset + sum(int(t.n_bytes) for t in r.tensors)
        assert f"({size:,} bytes)" in button.inner_text()
        del r
        _open(page, url, "/memory")
        page.get_by_text("upload a .gguf").click()
        page.get_by_test_id("stMain").locator("input[type=file]").set_input_files(str(models / "tiny-F32.gguf"))
        page.get_by_role("cell", name="16 / 16", exact=True).wait_for(timeout=30000)
        _to_top(page, "A memory plan from a real .gguf file")
        screenshot(page, "gguf-upload-laptop")


def test_boxes_show_the_plans_values_after_a_refused_upload(url, models, tmp_path):
    """Upload a file, then one over the 1 MB limit (the uploader refuses it: no plan for a run), then another
    file: the boxes came back showing f32 and 0.001 GiB while the plan said f16 and 8 GiB (a hostile-input probe,
    3 of 3 runs). They show what the plan uses."""
    (tmp_path / "big.gguf").write_bytes(b"GGUF" + bytes(1_100_000))
    other = _export(tmp_path / "two-layers.gguf", n_layer=2)
    with browser_page(1280, 900) as page:
        _open(page, url, "/memory")
        with rerun(page):
            page.get_by_text("upload a .gguf").click()
        uploader = page.get_by_test_id("stMain").locator("input[type=file]").last
        with rerun(page):
            uploader.set_input_files(str(models / "tiny-F32.gguf"))
        page.get_by_role("cell", name="16 / 16", exact=True).wait_for(timeout=30000)  # its plan
        uploader.set_input_files(str(tmp_path / "big.gguf"))  # refused in the browser, over the limit
        page.get_by_test_id("stMain").get_by_text("1.0MB").first.wait_for(timeout=30000)
        wait_idle(page)
        with rerun(page):
            uploader.set_input_files(str(other))
        page.get_by_role("cell", name="2", exact=True).first.wait_for(timeout=30000)  # two layers
        budget = page.get_by_label("Memory budget (GiB)").input_value()
        cache_type = page.get_by_role("combobox", name="Cache type (llama.cpp --cache-type-k/v)").input_value()
        said = page.get_by_text("KV cache in").first.inner_text()
        screenshot(page, "gguf-after-refused-upload-laptop")
        assert (budget, cache_type) == ("8.000", "f16") and said.startswith("KV cache in f16 at 64 positions")


EVIL = "<b>bold</b> <img src=x onerror=alert(2)> **md** [l](javascript:alert(1)) :red[x]"


def test_header_text_stays_literal(url, tmp_path):
    """A .gguf whose architecture and name are markup: the header table and the “no plan” message show the
    characters as written; no element is made from them, no dialog opens."""
    path = tmp_path / "evil.gguf"
    w = gguf.GGUFWriter(str(path), EVIL)
    w.add_name(EVIL)
    w.add_tensor("token_embd.weight", np.zeros((2, 32), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with browser_page(1280, 800) as page:
        dialogs = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        _open(page, url, "/memory")
        page.get_by_text("upload a .gguf").click()
        page.get_by_test_id("stMain").locator("input[type=file]").set_input_files(str(path))
        page.get_by_text("No plan:").first.wait_for(timeout=30000)
        wait_idle(page)
        assert page.get_by_role("cell", name=EVIL, exact=True).count() == 2  # architecture and name
        assert EVIL in page.get_by_test_id("stAlert").filter(has_text="No plan:").inner_text()
        main = page.get_by_test_id("stMain")
        assert main.locator("img[src='x']").count() == 0 and main.locator("a[href^='javascript']").count() == 0
        assert main.locator("b:text('bold'), strong:text('md')").count() == 0 and dialogs == []
        _to_top(page, "A memory plan from a real .gguf file")
        screenshot(page, "gguf-header-literal-laptop")
