"""Two speeds from a real run: Ch. 19's phases table and Ch. 30's Table 30.1, read off the real cache."""

import pytest

from core.decode.two_speeds import (
    PHASES,
    PROMPT_PRESETS,
    TABLE_30_1_PROMPT,
    TABLE_30_1_STEPS,
    Pass,
    noisy_steps,
    run,
    table_30_1,
)
from core.model.shipped import load_model, load_shipped_tokenizer
from core.model.tokenizer import encode
from ui import cache_demo


@pytest.fixture(scope="module")
def shipped():
    return load_model(), load_shipped_tokenizer()


def test_eight_prompt_positions_give_table_30_1(shipped):
    """Ch. 30 Table 30.1: prefill of eight positions → 8 stored, token 1; consuming token 1 → 9, token 2;
    consuming token 2 → 10, token 3 (the default prompt is eight positions of the shipped tokenizer)."""
    model, tok = shipped
    prompt = TABLE_30_1_PROMPT
    assert len(encode(tok, prompt)) == 8 and TABLE_30_1_STEPS == 2
    rows = table_30_1(run(model, tok, prompt, steps=2))
    assert rows == [
        {"Computation just completed": "Prefill of 8 prompt positions", "Input positions whose K/V are stored": 8,
         "Newly selectable output": "Token 1"},
        {"Computation just completed": "Decode consuming token 1", "Input positions whose K/V are stored": 9,
         "Newly selectable output": "Token 2"},
        {"Computation just completed": "Decode consuming token 2", "Input positions whose K/V are stored": 10,
         "Newly selectable output": "Token 3"},
    ]  # fmt: skip


def test_each_pass_consumes_the_token_chosen_before_it(shipped):
    """Decode step k consumes exactly the token the pass before it selected (the sequential dependency)."""
    model, tok = shipped
    passes = run(model, tok, "User: Is 750 yuan allowed?", steps=3)
    assert [p.consumed[0] for p in passes[1:]] == [p.chosen for p in passes[:-1]]
    assert passes[0].consumed == tuple(tok.decode([i]) for i in encode(tok, "User: Is 750 yuan allowed?"))


def test_bad_prompts_are_refused(shipped):
    """An empty prompt, or one whose positions and steps pass the 256-position window, gets a ValueError."""
    model, tok = shipped
    with pytest.raises(ValueError, match="empty"):
        run(model, tok, "")
    with pytest.raises(ValueError, match="context window of 256"):
        run(model, tok, "yuan " * 300)


def test_the_phases_table_is_the_chapters():
    """Ch. 19 "What changes between the two phases?", word for word."""
    assert [row["Dependency"] for row in PHASES] == [
        "Known tokens allow parallel processing with a causal mask",
        "Wait for the previous choice; reuse cached keys and values",
    ]


def test_the_five_position_preset_gives_the_chapters_picture(shipped):
    """Ch. 19's figure: five prompt positions, then caches of six, seven and eight after t+1, t+2, t+3."""
    model, tok = shipped
    prompt = PROMPT_PRESETS["Ch. 19's figure: five positions"]
    assert len(encode(tok, prompt)) == 5
    assert [p.cached for p in run(model, tok, prompt, repeats=1)] == [5, 6, 7, 8]
    assert PROMPT_PRESETS["Table 30.1: eight positions"] == TABLE_30_1_PROMPT
    assert (
        PROMPT_PRESETS["Ch. 19's figure: five positions"] == cache_demo.DEFAULTS[cache_demo.CACHE_PROMPT]
    )  # the page opens on it


def _clock(durations_ms):
    """A stand-in for time.perf_counter whose every second reading is the next duration after the one before."""
    now, durations, started = [0.0], iter(durations_ms), [False]

    def clock() -> float:
        if started[0]:
            now[0] += next(durations) / 1000
        started[0] = not started[0]
        return now[0]

    return clock


def test_a_pass_slowed_by_a_busy_machine_does_not_reach_the_figure(shipped):
    """Each pass's time is the median of the repeats after a warm-up: in one of five runs a decode step waits
    40 ms for a core (longer than the 3 ms prefill), and the figure still reads prefill 3 ms, each step 1 ms."""
    model, tok = shipped
    runs = [[50, 30, 30, 30]] + [[3, 1, 1, 1]] * 2 + [[3, 40, 1, 1]] + [[3, 1, 1, 1]] * 2  # warm-up first
    passes = run(model, tok, "The cat sat on the", repeats=5, clock=_clock([d for r in runs for d in r]))
    assert [p.ms for p in passes] == pytest.approx([3, 1, 1, 1])
    assert passes[0].ms_per_position == pytest.approx(3 / 5) and passes[1].ms_per_position == pytest.approx(1)


def test_a_step_timed_longer_than_the_prefill_is_said_busy_not_drawn():
    """A decode step computes one position against the prefill's five: a step measured longer than the whole
    prefill is the machine's noise. It is named (noisy_steps), written "busy" in the figure and its text
    alternative, never drawn with its time (issue 58)."""
    from core.viz.theme import description_of
    from core.viz.two_speeds import fig_two_speeds

    prompt = ("The", " cat", " sat", " on", " the")
    passes = [Pass(prompt, 5, " mat", 1, 2.0), Pass((" mat",), 6, ".", 2, 1.1), Pass((".",), 7, " It", 3, 2.6),
              Pass((" It",), 8, " was", 4, 0.9)]  # fmt: skip
    assert noisy_steps(passes) == (2,)
    fig = fig_two_speeds(passes)
    texts = [a.text for a in fig.layout.annotations]
    assert "busy" in texts and "2.6 ms" not in texts and "1.1 ms" in texts and "0.9 ms" in texts
    assert "t+2 consumes one token, cache 7 positions, timed while the machine was busy" in description_of(fig)
    assert noisy_steps(passes[:2]) == ()
