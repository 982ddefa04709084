"""The ruler as shown (issue 37, item 11): the scale with no more digits than it needs, and the formula
without clip(…) when clipping is off."""

import numpy as np

from core.quant import ruler


def test_the_automatic_scale_reads_as_the_chapter_writes_it():
    """0.7 / 7 is 0.09999999999999999 in floating point; the title says 0.1."""
    r = ruler.ruler(np.array([-0.2, 0.35, 0.7]), 4, None)
    assert r.scale != 0.1 and abs(r.scale - 0.1) < 1e-15
    assert "scale s = 0.1" in r.title and "0.0999" not in r.title


def test_the_formula_names_clip_only_while_clipping():
    """Clipping on: q = clip(round(x/s), −7, 7); off: no clip(…), and the kept integers are said."""
    x = np.array([-1.2, -0.2, 0.7, 1.8, 8.0])
    on, off = ruler.ruler(x, 4, 0.5, clip=True), ruler.ruler(x, 4, 0.5, clip=False)
    assert on.formula.startswith("q = clip(round(x/s), -7, 7)")
    assert "clip(" not in off.formula and "not clipped" in off.formula
    affine = ruler.ruler(x, 4, 0.5, symmetric=False, zero_point=8, clip=True)
    assert "round(x/s) + z" in affine.formula and "s·(q − z)" in affine.formula
