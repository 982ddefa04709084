"""The ruler figure in Ch. 19's three bands ("Shrinking the numbers"), built from the real quantizer: the numbers
are the chapter's (0.34 → shelf 3 → 0.3, −0.12 → −1, 0.7 → 7, 0.23 → 2 at scale 0.1), Table 30.2's (scale 0.5),
and worked by hand for 8 bits; float32's digits come from ``struct``, not from numpy."""

import struct

import numpy as np
import pytest

from core.quant import ruler
from core.quant.ruler_bands import CHAR_PX, PLOT_PX, shelf_text
from core.viz.ruler import Y_NUMBER, fig_ruler

CH19 = [0.34, -0.12, 0.7, 0.23]


def _trace(fig, name):
    [t] = [t for t in fig.data if t.name == name]
    return t


def _annotations(fig):
    return [a.text for a in fig.layout.annotations if not a.showarrow]


def _float32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _numbers(fig) -> dict[int, float]:
    """Every shelf number drawn (plain and stored) → its x."""
    out = {}
    for t in fig.data:
        if t.mode == "text" and t.name in ("shelf numbers", "stored integers", "stored integers (flagged)"):
            for text, x in zip(t.text, t.x, strict=True):
                out[int(text.replace("<b>", "").replace("</b>", "").replace("−", "-").replace(",", ""))] = x
    return out


def test_chapter_19_top_band_every_shelf_numbered_under_the_title():
    """4 bits, s = 0.1: the title is the chapter's; 15 ticks every 0.1 from −0.7 to 0.7, the numbers −7 … 7 under
    them (each once, at q × 0.1), the line labelled −0.7, 0, 0.7."""
    fig = fig_ruler(ruler.ruler(CH19, 4, 0.1))
    assert fig.layout.title.text.startswith("the 4-bit ruler — 16 possible stored values, spacing = scale = 0.1<br>")
    assert "4-bit symmetric: stored integers -7 … 7, scale s = 0.1" in fig.layout.title.text
    ticks = _trace(fig, "representable levels (shelves)")
    assert np.allclose(ticks.x, np.arange(-7, 8) / 10)
    numbers = _numbers(fig)
    assert sorted(numbers) == list(range(-7, 8))
    assert all(abs(x - q / 10) < 1e-12 for q, x in numbers.items())
    assert list(fig.layout.xaxis.ticktext) == ["−0.7", "0", "0.7"]


def test_chapter_19_middle_band_dots_drop_to_their_shelves():
    """The four dots at 0.34, −0.12, 0.7, 0.23, labelled, each with an arrow from the dot to its shelf (0.3, −0.1,
    0.7, 0.2) and the stored 3, −1, 7, 2 beneath in bold."""
    fig = fig_ruler(ruler.ruler(CH19, 4, 0.1))
    dots = _trace(fig, "your values")
    assert list(dots.x) == CH19
    assert list(_trace(fig, "your values: labels").text) == ["0.34", "−0.12", "0.7", "0.23"]
    arrows = [(a.ax, a.x) for a in fig.layout.annotations if a.showarrow]
    assert [a for a, _ in arrows] == CH19
    assert np.allclose([b for _, b in arrows], [0.3, -0.1, 0.7, 0.2])
    stored = _trace(fig, "stored integers")
    assert list(stored.text) == ["<b>−1</b>", "<b>2</b>", "<b>3</b>", "<b>7</b>"]
    assert np.allclose(stored.x, [-0.1, 0.2, 0.3, 0.7]) and set(stored.y) == {Y_NUMBER[0]}


def test_chapter_19_bottom_band_pills_and_caption():
    """The pills for 0.34: float32's own digits (struct: 0.3400000035762787) and 4 bytes, then shelf 3 and half a
    byte; the caption "Fewer bits give fewer possible levels."; the hover has float32's exact decimal."""
    fig = fig_ruler(ruler.ruler(CH19, 4, 0.1))
    assert repr(_float32(0.34)) == "0.3400000035762787"
    texts = _annotations(fig)
    assert "32-bit: 0.3400000035762787 (4 bytes each)" in texts
    assert "4-bit: shelf 3, ruler times 0.1 (half a byte each)" in texts
    assert "<i>Fewer bits give fewer possible levels.</i>" in texts
    y = {a.text: a.y for a in fig.layout.annotations if not a.showarrow}  # the pills top down, joined by an arrow
    assert (
        y["32-bit: 0.3400000035762787 (4 bytes each)"]
        > y["↓"]
        > y["4-bit: shelf 3, ruler times 0.1 (half a byte each)"]
    )
    hovers = [a.hovertext for a in fig.layout.annotations if a.hovertext]
    assert any("0.3400000035762786865234375" in h for h in hovers)
    assert any("rebuilt as 3 × 0.1 = 0.3" in h for h in hovers)


def test_table_30_2_at_scale_half():
    """Another scale (Ch. 30 Table 30.2, s = 0.5): the title says spacing 0.5, −1.2 → shelf −2 (the table's
    stored q), float32's −1.2 is −1.2000000476837158 (struct)."""
    fig = fig_ruler(ruler.ruler([-1.2, -0.2, 0.7, 1.8], 4, 0.5))
    assert fig.layout.title.text.startswith("the 4-bit ruler — 16 possible stored values, spacing = scale = 0.5")
    texts = _annotations(fig)
    assert f"32-bit: {repr(_float32(-1.2)).replace('-', '−')} (4 bytes each)" in texts
    assert "4-bit: shelf −2, ruler times 0.5 (half a byte each)" in texts
    assert list(_trace(fig, "stored integers").text) == ["<b>−2</b>", "<b>0</b>", "<b>1</b>", "<b>4</b>"]
    assert np.allclose(_trace(fig, "representable levels (shelves)").x, np.arange(-7, 8) * 0.5)


def test_eight_bits_256_values_numbers_thinned_and_said():
    """8 bits, automatic scale 0.7/127: "256 possible stored values", one byte each; 255 ticks but not 255 numbers:
    every k-th, said in the title; 0.34 → 0.34 × 127 / 0.7 = 61.69 → shelf 62, −0.12 → −21.8 → −22, 0.23 →
    41.7 → 42, 0.7 → 127."""
    r = ruler.ruler(CH19, 8, None)
    fig = fig_ruler(r)
    title = fig.layout.title.text
    assert title.startswith("the 8-bit ruler — 256 possible stored values, spacing = scale = 0.00551181102362")
    assert "255 shelves: a number on every" in title and "so that the numbers stay readable" in title
    assert len(_trace(fig, "representable levels (shelves)").x) == 255
    plain = _trace(fig, "shelf numbers")
    assert 0 < len(plain.text) < 20
    assert list(_trace(fig, "stored integers").text) == ["<b>−22</b>", "<b>42</b>", "<b>62</b>", "<b>127</b>"]
    assert "8-bit: shelf 62, ruler times 0.00551181102362 (1 byte each)" in _annotations(fig)


@pytest.mark.parametrize("bits,scale", [(4, 0.1), (5, 0.1), (8, None), (16, None), (6, 0.01)])
def test_numbers_in_one_row_never_run_together(bits, scale):
    """In every row, neighbouring shelf numbers are at least their width apart on the narrowest plot the ruler is
    drawn in (PLOT_PX wide, CHAR_PX a character): readable, at any bit width."""
    r = ruler.ruler(CH19, bits, scale)
    fig = fig_ruler(r)
    lo, hi = fig.layout.xaxis.range
    px = PLOT_PX / (hi - lo)
    rows: dict[float, list[tuple[float, str]]] = {}
    for t in fig.data:
        if t.mode == "text" and "labels" not in (t.name or ""):
            for x, y, text in zip(t.x, t.y, t.text, strict=True):
                rows.setdefault(y, []).append((x, text.replace("<b>", "").replace("</b>", "")))
    for row in rows.values():
        row.sort()
        for (x1, a), (x2, b) in zip(row, row[1:], strict=False):
            assert (x2 - x1) * px >= (max(len(a), len(b)) + 1) * CHAR_PX - 1e-6, (a, b)


def test_sixteen_bits_too_many_shelves_to_draw_said():
    """16 bits: 65,535 shelves are not drawn one by one; the title says so and the ticks drawn are few, each a
    whole multiple of the step or a value's own shelf."""
    r = ruler.ruler(CH19, 16, None)
    fig = fig_ruler(r)
    assert "65,536 possible stored values" in fig.layout.title.text
    assert "65,535 shelves, too close to draw: a tick on every 10,000th" in fig.layout.title.text
    ticks = _trace(fig, "representable levels (shelves)").x
    assert len(ticks) < 20
    shelves = {round(x / r.scale) for x in ticks}
    assert shelves <= set(range(-30_000, 30_001, 10_000)) | {int(q) for q in r.q}


def test_affine_pill_counts_from_the_zero_point():
    """Affine, s = 0.1, zero point 7: 0.34 → round(3.4) + 7 = shelf 10, rebuilt as (10 − 7) × 0.1; shelf
    numbers 0 … 15 (all 16 used), shelf q at (q − 7) × 0.1."""
    fig = fig_ruler(ruler.ruler(CH19, 4, 0.1, symmetric=False, zero_point=7))
    assert "4-bit: shelf 10, (10 − 7) times 0.1 (half a byte each)" in _annotations(fig)
    numbers = _numbers(fig)
    assert sorted(numbers) == list(range(16))
    assert all(abs(x - (q - 7) / 10) < 1e-12 for q, x in numbers.items())


def test_clipped_value_is_labelled_so():
    """The outlier 8 at s = 0.5 clips to shelf 7: its label says "(clipped)" and its stored 7 is drawn in the
    flagged hue only where no unclipped value shares the shelf."""
    fig = fig_ruler(ruler.ruler([-1.2, -0.2, 0.7, 1.8, 8], 4, 0.5))
    assert list(_trace(fig, "clipped values (error not bounded by s/2): labels").text) == ["8 (clipped)"]
    assert list(_trace(fig, "stored integers (flagged)").text) == ["<b>7</b>"]
    assert shelf_text(-32767) == "−32,767"
