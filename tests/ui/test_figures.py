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


def test_a_shared_figure_s_table_is_the_figure_s_own():
    """A shared figure keeps numpy arrays as plotly's typed arrays (base64): its "Show as table" reads the same
    numbers as the figure built anew (the worked example's heatmap had raised a TypeError)."""
    import math

    from core.model.worked import TOKENS, table_rows, vectors_from_rows, worked_example
    from core.viz.table import figure_table
    from core.viz.worked import fig_worked_grid
    from ui import figures

    w = worked_example(*vectors_from_rows(table_rows()))
    labels = [f"{i}: {t}" for i, t in enumerate(TOKENS)]
    args = (w.shares, labels, "Each new token adds just one row")
    shared = figure_table(figures.figure(fig_worked_grid, *args))
    assert shared == figure_table(fig_worked_grid(*args))
    e = [math.exp(s) for s in (1, 3, 1, 2)]  # Ch. 19's scores for "on": its shares e^s / Σ e^s
    assert [v for k, v in shared[-1].items() if k not in ("series", "row")][-4:] == [round(x / sum(e), 4) for x in e]


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
