"""Ch. 19's two-phase figure, drawn from a run: one square per cached position, the chapter's words."""

from core.decode.two_speeds import Pass
from core.viz.theme import description_of
from core.viz.two_speeds import CAPTION, fig_two_speeds


def _passes(n: int) -> list[Pass]:
    prompt = Pass(tuple(f"t{i}" for i in range(n - 1)) + ("<b>x</b>",), n, "a", 1, 40.0)
    return [prompt, *(Pass(("a",), n + k, "a", k + 1, 5.0) for k in range(1, 4))]


def test_one_square_per_cached_position():
    """Five prompt positions: drums of 5, 6, 7 and 8 squares (the chapter's figure); the newest square
    of each decode drum is the step's own new K/V."""
    fig = fig_two_speeds(_passes(5))
    assert [len(t.x) for t in fig.data] == [5, 6, 7, 8]
    assert [t.marker.color[-1] for t in fig.data[1:]] == [fig.data[1].marker.color[-1]] * 3
    texts = [a.text for a in fig.layout.annotations]
    assert any("prefill — the pause" in t for t in texts) and any("generation — the stream" in t for t in texts)
    assert any(CAPTION in t for t in texts) and "each new token: compute 1, read the rest" in texts
    assert "processed together, one parallel pass: 5 positions, 40 ms" in texts


def test_typed_tokens_are_text_and_long_prompts_fold():
    """A token '<b>x</b>' is escaped, never markup; 30 prompt positions show 3 + '… 24 more …' + 3 chips."""
    fig = fig_two_speeds(_passes(30))
    texts = [a.text for a in fig.layout.annotations]
    assert "&lt;b&gt;x&lt;/b&gt;" in texts and "… 24 more …" in texts
    assert "30 positions" in texts and description_of(fig).startswith("Prefill processes 30 prompt positions")
