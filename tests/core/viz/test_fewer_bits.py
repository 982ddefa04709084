"""Fewer bits on two machines (core/viz/fewer_bits.py): this server's formats beside the reference GPU's, bars from
1× to each speed, labelled, with what was measured where."""

import pytest

from core.evaluate.format_speed.measure import FormatRow
from core.evaluate.format_speed.reference import gpu_headline, here_headline, here_ratios, load_reference
from core.viz.fewer_bits import fig_two_machines
from core.viz.theme import description_of

REF = load_reference()
ROWS = [
    FormatRow("float32", 4_000_000, 2.6, 9, 0.0, products_ms=0.6),
    FormatRow("bfloat16", 2_000_000, 3.9, 9, 0.01, products_ms=1.2),
    FormatRow("int4 (bf16 activations)", 600_000, 1.9, 9, 0.1, products_ms=0.5),
]


def _fig(rows):
    here = here_ratios(rows) if rows else None
    return fig_two_machines(here, here_headline(rows) if rows else "not measured yet", REF, gpu_headline(REF))


def test_the_gpu_panel_draws_every_reference_row_from_one():
    """Right panel: the reference's 17 rows grouped by model and batch, each bar from 1× to bfloat16's step over
    the row's (4.62 / 2.69 = 1.72 for int4 at batch 1, 4.85 / 34.16 = 0.142 at 64), labelled as a class reads it."""
    gpu = _fig(ROWS).data[1]
    assert list(gpu.y[0][:5]) == ["8B, B = 1"] * 5 and list(gpu.y[1][:5]) == [
        "float32",
        "bfloat16",
        "fp8",
        "int8",
        "int4 g64",
    ]
    assert len(gpu.x) == 17 and gpu.base == 1
    speed = {(g, f): x + 1 for g, f, x in zip(gpu.y[0], gpu.y[1], gpu.x, strict=True)}
    assert speed[("8B, B = 1", "int4 g64")] == pytest.approx(4.62 / 2.69)
    assert speed[("8B, B = 64", "int4 g64")] == pytest.approx(4.85 / 34.16)
    text = dict(zip(zip(gpu.y[0], gpu.y[1], strict=True), gpu.text, strict=True))
    assert text[("8B, B = 1", "int4 g64")] == "1.7× faster" and text[("8B, B = 64", "int4 g64")] == "7× slower"
    assert text[("8B, B = 1", "bfloat16")] == "baseline" and text[("8B, B = 64", "int8")] == "224× slower"


def test_this_servers_panel_and_both_titles_say_where():
    """Left panel: this server's formats against float32 (0.6 / 0.5 = 1.2 for int4); the titles say measured here
    and measured elsewhere on the reference's date, each with its lesson; both panels on one log range."""
    fig = _fig(ROWS)
    here = fig.data[0]
    assert list(here.y) == ["float32", "bfloat16", "int4 (bf16 activations)"]
    assert [x + 1 for x in here.x] == pytest.approx([1.0, 0.5, 1.2])
    titles = [a.text for a in fig.layout.annotations]
    assert any(
        "This server's CPU</b>, measured here" in t and "weight products vs float32: int4 1.2× faster" in t
        for t in titles
    )
    assert any("NVIDIA H200</b>, measured elsewhere, 2026-12-04" in t and "7× slower at batch 64" in t for t in titles)
    assert fig.layout.xaxis.range == fig.layout.xaxis2.range and fig.layout.xaxis.type == "log"
    assert fig.layout.xaxis.title.text == "speed against float32 (log)"
    assert fig.layout.xaxis2.title.text == "speed against bfloat16 (log)"


def test_before_a_measurement_the_reference_still_draws():
    """Nothing measured here: the left panel says so, the reference's panel is drawn, the description says both."""
    fig = _fig(None)
    assert len(fig.data) == 1 and len(fig.data[0].x) == 17
    assert any("Not measured on this server yet" in a.text for a in fig.layout.annotations)
    assert description_of(fig).startswith("This server: not measured yet. Reference GPU (one NVIDIA H200")
