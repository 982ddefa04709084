"""Figure 30.1 drawn whole: three columns of steps with the chapter's kind labels, arrows where an output becomes
the next input, the notes, and the caption under it; sized for one projector screen."""

from core.cost.kv_shape import PRESETS
from core.serving.figure_30_1 import figure_30_1
from core.serving.latency import CH30_TRACE, RequestTrace
from core.viz.figure_30_1 import WRAP, fig_figure_30_1
from core.viz.table import figure_table
from core.viz.theme import description_of

EXAMPLE_30_3 = PRESETS["Ch. 30 two-layer example"]


def _fig(trace=CH30_TRACE):
    return fig_figure_30_1(figure_30_1(trace, EXAMPLE_30_3), "t")


def _texts(fig) -> list[str]:
    return [a.text.replace("<br>", " ") for a in fig.layout.annotations]


def test_three_columns_their_steps_kinds_and_caption():
    """Ch. 30's trace: the columns 'Known prompt', 'First decode', 'Later outputs'; 11 step boxes (4 + 4 + 3),
    each with its number, the chapter's kind and its side; 512 and 576 bytes; the three notes; the caption
    'Figure 30.1 — Output selection precedes consumption of that token.' at the foot."""
    fig = _fig()
    texts = _texts(fig)
    assert [t for t in texts if t.startswith("<b>")] == [
        "<b>Known prompt</b>",
        "<b>First decode</b>",
        "<b>Later outputs</b>",
    ]
    assert len([s for s in fig.layout.shapes if s.type == "rect"]) == 11
    for label in (
        "<i>1. Outside the model · input</i>",
        "<i>2. An operation</i>",
        "<i>3. A list of numbers</i>",
        "<i>4. Text pieces · output</i>",
        "<i>1. Text pieces · input</i>",
    ):
        assert label in texts, label
    for step in ("K/V for 8 positions: 512 bytes", "9 positions: 576 bytes", "Consume output 1 as new input",
                 "Append new K/V; query 9 positions", "Gaps 40,45,35 → mean 40 ms"):  # fmt: skip
        assert step in texts, step
    assert "<i>TTFT includes queueing: 150−0 = 150 ms.</i>" in texts
    caption = [a for a in fig.layout.annotations if "Output selection precedes consumption" in a.text]
    assert [a.text for a in caption] == ["<i>Figure 30.1 — Output selection precedes consumption of that token.</i>"]
    assert caption[0].y > max(s.y1 for s in fig.layout.shapes)  # under every box (the y axis runs down)


def test_outputs_become_the_next_passes_input():
    """An arrow runs from 'emit output 1' (column 1, step 4) to 'Consume output 1 as new input' (column 2, step
    1), and one from 'emit output 2' (column 2, step 4) to output 3 (column 3, step 1)."""
    arrows = [(round(a.ax, 2), a.ay, round(a.x, 2), a.y) for a in _fig().layout.annotations if a.showarrow]
    assert arrows == [(0.92, 4, 1.08, 1), (1.92, 4, 2.08, 1)]


def test_no_arrow_where_no_pass_consumes_the_output():
    """One output: column 2 says no pass consumes it, and no arrow claims one does."""
    fig = _fig(RequestTrace("one", 0, 20, (90,), 5))
    assert not [a for a in fig.layout.annotations if a.showarrow]
    assert "no pass consumes output 1: the request stopped" in _texts(fig)


def test_every_box_text_fits_its_box_and_the_figure_one_screen():
    """A long measured trace: no box holds more than two lines of at most WRAP characters (a box is sized for a
    kind label and two lines), and the figure at presenter size (× 1.25) is under 1,080 px with the top bar."""
    times = tuple(1234.5678 + 3.14159 * k for k in range(40))
    fig = fig_figure_30_1(figure_30_1(RequestTrace("long", 0, 1000.25, times, 200), EXAMPLE_30_3), "t")
    for a in fig.layout.annotations:
        if not a.text.startswith("<i>") and not a.text.startswith("<b>") and a.text:
            lines = a.text.split("<br>")
            assert len(lines) <= 2 and all(len(line) <= WRAP for line in lines), a.text
    assert fig.layout.height * 1.25 <= 1080 - 60


def test_the_text_alternative_and_table_list_every_step():
    """The sentence under the figure and its 'Show as table' rows name every step in order, with kinds."""
    fig = _fig()
    text = description_of(fig)
    assert text.startswith("Known prompt: 1. Outside the model · input: Arrival 0 → queue until 30 ms; ")
    assert "3. A list of numbers: 9 positions: 576 bytes" in text and text.endswith("consumption of that token.")
    rows = [r["details"] for r in figure_table(fig)]
    assert len(rows) == 11 and rows[6] == "First decode · 3. A list of numbers: 9 positions: 576 bytes"
