"""Figure 30.1 as Ch. 30 §30.2 draws it: the chapter's three columns word for word on its own trace, the bytes
from M at each stage, and the sentences of §30.2, §30.3 and §30.6 with the trace's own numbers."""

import pytest

from core.cost.kv_shape import PRESETS
from core.decode.generate import decode_one_token, prefill
from core.decode.kv_cache import KVCache
from core.model.shipped import load_model
from core.serving.figure_30_1 import figure_30_1, kv_bytes, model_shape, notes
from core.serving.latency import CH30_TRACE, EXERCISE_1, RequestTrace

EXAMPLE_30_3 = PRESETS["Ch. 30 two-layer example"]


def _lines(columns):
    return [(c.title, [(s.kind, s.text) for s in c.steps], c.note) for c in columns]


def test_the_chapters_trace_gives_figure_30_1_word_for_word():
    """Ch. 30's trace with Example 30.3's cache: the three columns, their step kinds, texts and notes as the
    chapter prints Figure 30.1 (512 bytes = 2×1×2×8×2×4×2, 576 bytes with one more position)."""
    assert 2 * 1 * 2 * 8 * 2 * 4 * 2 == 512 and 2 * 1 * 2 * 9 * 2 * 4 * 2 == 576  # the chapter's products
    assert _lines(figure_30_1(CH30_TRACE, EXAMPLE_30_3)) == [
        (
            "Known prompt",
            [
                ("Outside the model", "Arrival 0 → queue until 30 ms"),
                ("An operation", "Prefill positions 1–8"),
                ("A list of numbers", "K/V for 8 positions: 512 bytes"),
                ("Text pieces", "150 ms: emit output 1"),
            ],
            "TTFT includes queueing: 150−0 = 150 ms.",
        ),
        (
            "First decode",
            [
                ("Text pieces", "Consume output 1 as new input"),
                ("An operation", "Append new K/V; query 9 positions"),
                ("A list of numbers", "9 positions: 576 bytes"),
                ("Text pieces", "190 ms: emit output 2"),
            ],
            "An emitted ID does not already contain its layer-by-layer K/V.",
        ),
        (
            "Later outputs",
            [
                ("Text pieces", "235 ms: output 3; cache length 10"),
                ("Text pieces", "270 ms: output 4"),
                ("An operation", "Gaps 40,45,35 → mean 40 ms"),
            ],
            "Four outputs form three later intervals; one output would have no TPOT.",
        ),
    ]


def test_each_step_is_on_the_input_or_the_output_side():
    """Arrival and the consumed output 1 are inputs; every emission is an output; the rest is the model's."""
    known, first, later = figure_30_1(CH30_TRACE, EXAMPLE_30_3)
    assert [s.side for s in known.steps] == ["input", "model", "model", "output"]
    assert [s.side for s in first.steps] == ["input", "model", "model", "output"]
    assert [s.side for s in later.steps] == ["output", "output", "model"]


def test_the_bytes_follow_m_at_another_prompt_length():
    """Ten prompt positions with Example 30.3's terms: 640 bytes (§30.4's third row), then 11 positions: 704."""
    trace = RequestTrace("ten", 0, 30, (150, 190, 235, 270), 10)
    known, first, later = figure_30_1(trace, EXAMPLE_30_3)
    assert known.steps[2].text == "K/V for 10 positions: 640 bytes"
    assert first.steps[2].text == f"11 positions: {2 * 1 * 2 * 11 * 2 * 4 * 2:,} bytes"
    assert later.steps[0].text == "235 ms: output 3; cache length 12"


def test_a_models_own_bytes_are_its_cache_tensors_bytes():
    """For a measured trace the bytes come from the model's own terms: after prefilling 8 positions and one
    decode step, they equal the real KVCache tensors' bytes (8 and 9 positions)."""
    model = load_model()
    shape = model_shape(model.cfg, model.dtype, "the shipped model")
    cache = KVCache(model.cfg, dtype=model.dtype)
    prefill(model, list(range(1, 9)), cache)
    assert kv_bytes(shape, 8) == cache.nbytes
    decode_one_token(model, 5, cache)
    assert kv_bytes(shape, 9) == cache.nbytes
    known, first, _ = figure_30_1(RequestTrace("measured", 0, 0, (2.5, 4.25, 6.0), 8), shape)
    assert known.steps[2].text == f"K/V for 8 positions: {cache.nbytes * 8 // 9:,} bytes"
    assert first.steps[2].text == f"9 positions: {cache.nbytes:,} bytes"
    assert (
        known.steps[0].text == "Arrival 0 ms → no queue"
        and known.note == "TTFT from arrival (no queue): 2.5−0 = 2.5 ms."
    )


def test_exercise_1_states_no_positions_or_bytes():
    """Exercise 1 gives no prompt length: no positions or bytes are invented; gaps 50, 60 → mean 55 ms."""
    known, first, later = figure_30_1(EXERCISE_1, EXAMPLE_30_3)
    assert known.steps[2].text == "K/V for the prompt: its length is not given"
    assert "positions" not in first.steps[2].text and "cache length" not in later.steps[0].text
    assert later.steps[-1].text == "Gaps 50,60 → mean 55 ms"
    assert later.note == "Three outputs form two later intervals; one output would have no TPOT."


def test_one_output_and_a_failed_request():
    """One output: no pass consumes it, TPOT missing (not zero); no output: an error, with no decode."""
    one = figure_30_1(RequestTrace("one", 0, 20, (90,), 5), EXAMPLE_30_3)
    assert one[1].steps[0].text == "no pass consumes output 1: the request stopped"
    assert one[1].note == "One output: TTFT exists, TPOT is missing, not zero."
    failed = figure_30_1(RequestTrace("failed", 0, 40, (), 6), EXAMPLE_30_3)
    assert failed[0].steps[3].text == "no output: the request failed"
    assert failed[0].note == "No output: an error to count, not a latency."


def test_a_recomputing_request_keeps_no_cache():
    """Served by recomputing the prefix: each pass recomputes every position and keeps no cache, so no cache
    length is claimed and nothing is said to be left after stopping."""
    trace = RequestTrace("request 1 (recompute)", 0, 0, (3.0, 5.0, 7.0), 8)
    known, first, later = figure_30_1(trace, EXAMPLE_30_3, cached=False)
    assert known.steps[2].text == "K/V for 8 positions: 512 bytes made, then dropped"
    assert first.steps[1].text == "Recompute all 9 positions; no cache kept"
    assert later.steps[0].text == "7 ms: output 3"
    assert not [n for n in notes(trace, False, cached=False) if "never consumed" in n]


def test_many_outputs_fold_and_count_their_gaps():
    """Twelve outputs: output 3, then outputs 4–11 folded, output 12; six gaps listed of eleven; their mean."""
    times = (100, 110, 125, 130, 140, 150, 160, 170, 180, 190, 200, 210)
    later = figure_30_1(RequestTrace("long", 0, 10, times, 4), EXAMPLE_30_3)[2]
    assert [s.text for s in later.steps] == [
        "125 ms: output 3; cache length 6",
        "outputs 4–11",
        "210 ms: output 12",
        "Gaps 10,15,5,10,10,10,… (11 gaps) → mean 10 ms",
    ]
    assert later.note == "Twelve outputs form eleven later intervals; one output would have no TPOT."


def test_the_chapters_sentences_carry_the_traces_numbers():
    """§30.3: 150−30 = 120 ms omits the queue; 1000/40 = 25 tokens/s is the post-first-token pace; a failed
    request is counted, not dropped. §30.2: output 4 is never consumed, 11 positions cached, and a server may
    keep or discard more. §30.6: a supplied trace is not this model's measured latency."""
    said = notes(CH30_TRACE, supplied=True)
    assert said[0] == (
        "TTFT is 150−0 = 150 ms. Measuring only 150−30 = 120 ms would omit the queue and answer a different question."
    )
    assert said[1].startswith("The reciprocal of TPOT, 1000/40 = 25 output tokens per second, describes this ")
    assert "not the entire request's throughput or a multi-request server rate" in said[1]
    assert "dropping it silently can make latency and quality appear better" in said[2]
    assert said[3].startswith("Output 4 is emitted but never consumed: the last pass left K/V for 11 positions.")
    assert "may retain or discard different amounts after stopping" in said[3]
    assert "150 ms TTFT cannot be cited as this model's measured latency" in said[4]
    assert not [n for n in notes(CH30_TRACE, supplied=False) if "cannot be cited" in n]
    assert not [n for n in notes(EXERCISE_1, supplied=True) if "Measuring only" in n]  # no queue to omit


def test_a_trace_out_of_order_is_refused():
    """An emission before prefill starts is refused in words, as the latency page refuses it."""
    with pytest.raises(ValueError, match="before prefill starts"):
        figure_30_1(RequestTrace("bad", 0, 30, (20,), 8), EXAMPLE_30_3)


def test_a_queue_too_short_to_write_is_no_queue():
    """A measured prefill 0.0003 ms after arrival reads 0 ms: 'no queue', not 'queue until 0 ms', and no sentence
    about omitting a queue of 0 ms."""
    trace = RequestTrace("measured", 0, 0.0003, (3.74, 5.2), 51)
    known = figure_30_1(trace, EXAMPLE_30_3)[0]
    assert known.steps[0].text == "Arrival 0 ms → no queue"
    assert not [n for n in notes(trace, False) if "Measuring only" in n]
