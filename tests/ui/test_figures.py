"""Shared figures (ui.figures.figure): the same drawing as building the figure anew, and a copy of
one's own, so presenter mode's fonts in one session never reach another."""

import json

import plotly.io as pio

from core.cost import bill
from core.quant import quantize as quant
from core.quant import ruler, ruler_block
from core.viz.cost import fig_growth_shapes, fig_step_work
from core.viz.quant import fig_bits_per_weight, fig_block
from core.viz.ruler import fig_ruler

VALUES = quant.parse_values("0.1, -0.5, 1.2, 0.33, -2.1, 0.9, 7")


def cases():
    sizes = [1, 2, 4, 8, 16, 32, 64, 128, 256]
    r = ruler.ruler(VALUES, 4, None, True, None, list(quant.ROUNDING)[0], True)
    blk = ruler_block.ruler_block(VALUES, ruler_block.BLOCK_FORMATS[0], 0)
    return [
        (fig_ruler, (r,)),
        (fig_bits_per_weight, (sizes, ruler.bits_per_weight_curves(sizes))),
        (fig_block, (blk.view, blk.n_appended)),
        (fig_growth_shapes, (bill.growth(20_000, 2, 3), "× 2 layers × 3 heads")),
        (fig_step_work, (bill.step_work(5_000),)),
    ]


def test_shared_figure_draws_what_building_it_draws():
    from ui import figures

    for name, args in cases():
        fresh = json.loads(pio.to_json(name(*args)))
        assert json.loads(pio.to_json(figures.figure(name, *args))) == fresh, name
        assert json.loads(pio.to_json(figures.figure(name, *args))) == fresh, name  # from the cache


def test_each_caller_gets_its_own_figure():
    from ui import figures

    name, args = cases()[1]
    mine = figures.figure(name, *args)
    mine.update_layout(font_size=20)  # what ui.chart does in presenter mode
    theirs = figures.figure(name, *args)
    assert mine is not theirs and theirs.layout.font.size != 20


def test_the_cache_tells_arguments_apart():
    """Keyed by the arguments' pickle: the bill page's curves for 3 heads and for 4 are two figures,
    each equal to its own fresh drawing, whichever was cached first."""
    from ui import figures

    three, four = bill.growth(20_000, 2, 3), bill.growth(20_000, 2, 4)
    for growth, per in [
        (three, "× 2 layers × 3 heads"),
        (four, "× 2 layers × 4 heads"),
        (three, "× 2 layers × 3 heads"),
    ]:
        fresh = json.loads(pio.to_json(fig_growth_shapes(growth, per)))
        assert json.loads(pio.to_json(figures.figure(fig_growth_shapes, growth, per))) == fresh
    assert three.marks != four.marks
