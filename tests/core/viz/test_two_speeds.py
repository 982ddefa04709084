"""Ch. 19's two-phase figure, drawn from a run as the chapter draws it: five chips into a drum of five, then
t+1, t+2, t+3 into one second drum showing six, seven, then eight squares; each time beside its time per position."""

from core.decode.two_speeds import Pass
from core.viz.theme import description_of
from core.viz.two_speeds import CAPTION, FIGURE_CAPTION, fig_two_speeds


def _passes(n: int, prefill_ms: float = 40.0, step_ms: float = 5.0) -> list[Pass]:
    prompt = Pass(tuple(f"t{i}" for i in range(n - 1)) + ("<b>x</b>",), n, "a", 1, prefill_ms)
    return [prompt, *(Pass(("a",), n + k, "a", k + 1, step_ms) for k in range(1, 4))]


def _texts(fig) -> list[str]:
    return [a.text for a in fig.layout.annotations]


def test_five_chips_into_a_drum_of_five_then_one_drum_of_six_seven_eight():
    """Five prompt positions: five chips and a drum of five squares; then one second drum holding the five cached
    squares and the three arriving ones labelled 6, 7 and 8, each under its chip t+1, t+2, t+3 with an arrow down
    to it; two drums in all; the chapter's labels."""
    fig = fig_two_speeds(_passes(5))
    prefill, cached, arriving = fig.data
    assert len(prefill.x) == 5 and len(cached.x) == 5 and list(arriving.text) == ["6", "7", "8"]
    assert len([s for s in fig.layout.shapes if s.type == "circle"]) == 2  # two drums' lids
    chips = {a.text: a.x for a in fig.layout.annotations if a.text.startswith("t+")}
    assert list(chips) == ["t+1: a", "t+2: a", "t+3: a"] and list(chips.values()) == list(arriving.x)
    arrows = [(a.ax, a.x) for a in fig.layout.annotations if a.ax is not None and a.ax > 10]
    assert [ax for ax, _ in arrows] == list(arriving.x) and all(ax == x for ax, x in arrows)  # straight down
    texts = _texts(fig)
    assert "<b>prefill — the pause</b>" in texts and "<b>generation — the stream</b>" in texts
    assert (
        "each new token: compute 1, read the rest" in texts
        and "6, 7, then 8 positions · 5 ms per position (one per pass)" in texts
    )
    assert "processed together, one parallel pass: 5 positions, 40 ms" in texts


def test_the_chapters_caption_is_under_the_figure():
    """'Prefill is parallel; decoding is sequential.' is the figure's last line, under its own bottom caption."""
    fig = fig_two_speeds(_passes(5))
    [bottom] = [a for a in fig.layout.annotations if CAPTION in a.text]
    [caption] = [a for a in fig.layout.annotations if FIGURE_CAPTION in a.text]
    assert caption.text == "<b>Prefill is parallel; decoding is sequential.</b>" and caption.y < bottom.y
    assert caption.y == min(a.y for a in fig.layout.annotations)
    assert description_of(fig).endswith("Prefill is parallel; decoding is sequential.")


def test_each_time_has_its_time_per_position():
    """An 8-position prefill of 3 ms against 4 ms steps (a busy machine's pass times): 0.375 ms per position for
    the prefill beside 4 ms per position for a step, so the figure's point reads per position."""
    texts = _texts(fig_two_speeds(_passes(8, prefill_ms=3.0, step_ms=4.0)))
    assert "8 positions · 0.375 ms per position" in texts
    assert "9, 10, then 11 positions · 4 ms per position (one per pass)" in texts


def test_typed_tokens_are_text_and_long_prompts_fold():
    """A token '<b>x</b>' is escaped, never markup; 30 prompt positions show 2 + '… 26 more …' + 2 chips."""
    fig = fig_two_speeds(_passes(30))
    texts = _texts(fig)
    assert "&lt;b&gt;x&lt;/b&gt;" in texts and "… 26 more …" in texts
    assert any(t.startswith("30 positions · ") for t in texts)
    assert description_of(fig).startswith("Prefill processes 30 prompt positions")


def test_a_long_cache_draws_its_squares_up_to_a_limit_and_says_so():
    """60 prompt positions: 48 squares drawn in each drum, and the drums say so; the arriving three still drawn."""
    fig = fig_two_speeds(_passes(60))
    assert [len(t.x) for t in fig.data] == [48, 48, 3] and list(fig.data[2].text) == ["61", "62", "63"]
    texts = _texts(fig)
    assert "60 positions (48 of the 60 cached drawn) · 0.667 ms per position" in texts
    assert any(t.startswith("61, 62, then 63 positions (48 of the 60 cached drawn)") for t in texts)
