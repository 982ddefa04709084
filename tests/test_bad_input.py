"""Every text input on every page, fed hostile values: a clear message or a sane result, never a traceback."""

import pytest

from bench.fresh_app import new_app
from tests.helpers.app_util import click

LONG = "cat " * 25_000  # 100,000 characters
NASTY = {
    "empty": "",
    "whitespace": "   \n\t ",
    "very long": LONG,
    "control characters": "a\x00b\x07c\x1bd\x7f",
    "right-to-left and emoji": "مرحبا שלום 😀👩‍🏫",
    "html": "<b>x</b><img src=x onerror=alert(1)>",
    "nan": "nan",
    "inf": "inf",
    "negative": "-1",
    "zero": "0",
    "malformed json": '{"num_hidden_layers": 2,,}',
    "binary posing as json": "\x89PNG\r\n\x1a\n\x00\x00",
}


def _messages(at) -> list[str]:
    return [m.value for group in (at.error, at.warning, at.info, at.success, at.toast) for m in group]


def _set(at, kind, locator, value):
    widgets = getattr(at, kind)
    widget = widgets(key=locator) if isinstance(locator, str) else widgets[locator]
    widget.set_value(value)
    at.run()


# (page, widget kind, key or index, button to press after typing, values that must produce a message)
CASES = [
    ("app_pages/decode.py", "text_area", 0, "Prefill", {"empty", "whitespace", "very long"}),
    (
        "app_pages/memory.py",
        "text_input",
        0,
        None,
        {
            "empty",
            "whitespace",
            "very long",
            "control characters",
            "right-to-left and emoji",
            "html",
            "nan",
            "inf",
            "negative",
            "zero",
            "malformed json",
            "binary posing as json",
        },
    ),
    ("app_pages/weights.py", "text_input", 0, None, set(NASTY) - {"very long"}),
    ("app_pages/quantize.py", "text_area", "quant.values", None, set(NASTY) - {"negative", "zero"}),
    ("app_pages/batching.py", "text_area", "batch.prompts", "Prefill the batch", {"empty", "whitespace"}),
    ("app_pages/batching.py", "text_input", "batch.budgets", "Prefill the batch", set(NASTY)),
    # Practice answers: each unreadable value gets its message as a badge line (markdown, tested in
    # test_app_practice); here: no traceback for any of them.
    ("app_pages/practice.py", "text_input", "practice.in.ch30-1.0.ttft", "Check", set()),
]


@pytest.mark.parametrize("page,kind,locator,button,needs_message", CASES, ids=[f"{c[0]}:{c[2]}" for c in CASES])
def test_hostile_text_everywhere(page, kind, locator, button, needs_message):
    """For each hostile value: no exception element; a message where the value cannot be used."""
    at = new_app(page)
    if page.endswith("memory.py") and kind == "text_input":
        locator = next(i for i, t in enumerate(at.text_input) if t.label.startswith("T:"))
    for name, value in NASTY.items():
        if page.endswith("weights.py") and name == "very long":
            value = value[:40]  # the card box takes 40 characters
        _set(at, kind, locator, value)
        if button:
            click(at, button)
        assert not at.exception, (name, at.exception)
        if name in needs_message:
            assert _messages(at), f"{page}: no message for {name}"


def test_config_paste_hostile_values():
    """The config.json box: every hostile value is refused with a reason naming the problem."""
    at = new_app("app_pages/memory.py")
    at.selectbox(key="memory.preset").set_value("From a config.json (paste or upload)").run()
    for name, value in NASTY.items():
        at.text_area[0].set_value(value).run()
        assert not at.exception, name
        assert _messages(at), name


@pytest.mark.parametrize(
    "page,key,values",
    [
        ("app_pages/cost.py", 0, [1, 10_000]),
        ("app_pages/cost.py", 2, [1, 10**12]),
        ("app_pages/quantize.py", "quant.scale", [0.0, -1.0, 1e-300, 1e300, 0.1]),
        ("app_pages/quantize.py", "quant.tie_scale", [0.0, 1e300]),
        ("app_pages/weights.py", 0, [0.001, 10_000.0]),
        ("app_pages/memory.py", "memory.gguf_n_ctx", [1, 10**7]),
        ("app_pages/memory.py", "memory.gguf_budget_gib", [0.001, 100_000.0]),
    ],
)
def test_number_extremes(page, key, values):
    """Number inputs at their extremes: exact results or a message, never a traceback."""
    at = new_app(page)
    for v in values:
        (at.number_input(key=key) if isinstance(key, str) else at.number_input[key]).set_value(v).run()
        assert not at.exception, (page, key, v)


@pytest.mark.parametrize(
    "page,key,values",
    [
        ("app_pages/quantize.py", "quant.bits", [1, 2, 8, 16]),
        ("app_pages/context.py", "ctx.window", [16, 256]),
        ("app_pages/context.py", "ctx.n_new", [10, 200]),
        ("app_pages/speculative.py", "spec.k", [1, 8]),
        ("app_pages/quant_model.py", "qm.diverge_bits", [8, 2]),
    ],
)
def test_slider_extremes(page, key, values):
    """Sliders at both ends: no traceback."""
    at = new_app(page)
    for v in values:
        widget = at.select_slider(key=key) if key in ("quant.bits", "qm.diverge_bits") else at.slider(key=key)
        widget.set_value(v).run()
        assert not at.exception, (page, key, v)


def _truncated_export() -> bytes:
    from core.gguf.writer import export_gguf_bytes
    from core.model.shipped import load_model, load_shipped_tokenizer

    return export_gguf_bytes(load_model(), load_shipped_tokenizer(), "Q4_0")[:40_000]  # header whole, tensors cut


BAD_GGUF = {
    **{name: text.encode("utf-8", "surrogatepass") for name, text in NASTY.items() if name != "very long"},
    "garbage": b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4,
    "magic only": b"GGUF",
    "version 99": b"GGUF" + (99).to_bytes(4, "little") + bytes(16),
    "crafted counts": b"GGUF" + (3).to_bytes(4, "little") + (2**63).to_bytes(8, "little") * 2,
    "truncated export": None,  # made on demand: the first 40,000 bytes of the Q4_0 export
    "over the 1 MB limit": b"GGUF" + bytes(2**20),
}


def test_hostile_gguf_uploads():
    """The memory page's .gguf upload: empty, text, garbage, magic-only, unknown version, crafted counts, a truncated
    export and an oversized file each get a message; the page never shows a traceback."""
    at = new_app("app_pages/memory.py")
    at.radio(key="memory.gguf_source").set_value("upload a .gguf").run()
    for name, data in BAD_GGUF.items():
        data = _truncated_export() if data is None else data
        at.file_uploader[0].set_value((f"{name}.gguf", data, "application/octet-stream")).run()
        assert not at.exception, (name, at.exception)
        assert at.error, f"no message for {name}"
