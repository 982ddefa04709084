"""Predict, then reveal: questions answered from the real (held-back) step."""

import numpy as np
import pytest

from core.cost.counts import causal_pairs, kv_cache_bytes_for
from core.decode import predict, session
from core.decode.generate import SamplingConfig

PROMPT = [3, 1, 4, 1, 5, 9, 2, 6]


GREEDY = SamplingConfig()


def _ask(model, kind, sampling=GREEDY, layer=1, head=2):
    sess = session.start(model, PROMPT, sampling)
    pending = session.preview_step(model, sess)
    labels = [f"{i}: t{t}" for i, t in enumerate([*sess.consumed, sess.pending])]
    q = predict.ask(kind, sess, pending, model.cfg, lambda t: f"tok{t}", labels, layer, head, f"head {head}")
    return sess, pending, q


def test_preview_holds_the_step_back_and_commit_equals_a_plain_step(tiny_model):
    """preview_step leaves the request untouched; committing it gives exactly what step gives."""
    sampling = SamplingConfig("sample", 1.0, 0, 7)
    a, b = session.start(tiny_model, PROMPT, sampling), session.start(tiny_model, PROMPT, sampling)
    for _ in range(5):
        pending = session.preview_step(tiny_model, a)
        assert a.n_positions == len(a.consumed) and a.pending == a.outputs[-1]  # nothing moved yet
        session.commit(a, pending)
        session.step(tiny_model, b)
    assert a.outputs == b.outputs and a.n_positions == b.n_positions
    assert float((a.logits - b.logits).abs().max()) == 0.0


def test_the_token_question_offers_the_chosen_token_among_five(tiny_model):
    """Five options, the right one is the token the held-back step chose."""
    sess, pending, q = _ask(tiny_model, "token")
    assert len(q.options) == 5 and q.options[q.answer] == f"tok{pending.chosen}"
    # The pending token (shown as chosen on the stage) is named: "next" read as that token.
    assert q.text == f"This step consumes tok{sess.pending}. Which token will the model choose after it?"


def test_sampling_outside_the_top_five_still_offers_the_chosen_token(tiny_model):
    """A sampled token outside the top five replaces the fifth option, so the right answer is offered."""
    for seed in range(20):
        sess, pending, q = _ask(tiny_model, "token", SamplingConfig("sample", 2.0, 0, seed))
        assert q.options[q.answer] == f"tok{pending.chosen}"


def test_numeric_questions_have_the_right_answer_and_the_classic_mistakes(tiny_model):
    """Positions T+1, bytes M(T+1) (2·L·T·H_kv·d·b), scores T+1, with the named wrong answers offered."""
    cfg, T = tiny_model.cfg, len(PROMPT)
    _, _, q = _ask(tiny_model, "positions")
    assert q.options[q.answer] == f"{T + 1:,}" and f"{T:,}" in q.options and f"{T + 2:,}" in q.options
    _, _, q = _ask(tiny_model, "bytes")
    right = 2 * cfg.n_layer * (T + 1) * cfg.n_kv_head * cfg.head_dim * 4
    assert right == kv_cache_bytes_for(cfg, T + 1, 4) and q.options[q.answer] == f"{right:,} B"
    assert f"{right // 2:,} B" in q.options  # no factor 2 for keys and values
    assert f"{right * cfg.n_head // cfg.n_kv_head:,} B" in q.options  # every query head counted
    sess, _, q = _ask(tiny_model, "scores")
    assert q.options[q.answer] == f"{T + 1:,}" and f"{causal_pairs(T + 1):,}" in q.options
    # The reveal says why the cached work counter then reads the recompute's number: Σ 1 … T+1 = (T+1)(T+2)/2.
    assert sum(range(1, T + 2)) == causal_pairs(T + 1) and sess.scores_cached + T + 1 == causal_pairs(T + 1)
    assert f"would score {causal_pairs(T + 1):,} pairs, the cache's total so far" in q.explain


def test_the_attends_question_is_the_new_rows_argmax(tiny_model):
    """The right position is where the held-back new row puts most attention (layer 1, head 2)."""
    sess, pending, q = _ask(tiny_model, "attends", layer=1, head=2)
    row = pending.result.att[1][2, -1]  # (T+1,)
    assert q.options[q.answer].startswith(f"{int(np.argmax(row))}: ")


def test_kinds_rotate_and_the_tally_counts():
    """Kinds cycle with the step number; the tally counts asked, answered and right."""
    assert [predict.kind_for(s) for s in range(1, 7)] == ["token", "positions", "bytes", "scores", "attends", "token"]
    q = predict.Question("token", "?", ("a", "b"), 1, "")
    t = predict.Tally()
    assert (t.record(q, 1), t.record(q, 0), t.record(q, None)) == (True, False, None)
    assert (t.asked, t.answered, t.right) == (3, 2, 1)
    with pytest.raises(ValueError, match="unknown question kind"):
        predict.ask("colour", None, None, None, None, None, 0, 0, "")


def test_the_token_question_offers_five_with_a_small_top_k_and_names_spaces(tiny_model):
    """With top-k 2 the question still offers five tokens (the most likely by the plain softmax, the
    drawn one among them); the explanation shows a leading space as ␣, as the options do (it wrote
    ' costs' with Python's quotes)."""
    sess = session.start(tiny_model, PROMPT, SamplingConfig("sample", 1.0, 2, 3))
    pending = session.preview_step(tiny_model, sess)
    labels = [str(i) for i in range(len(sess.consumed) + 1)]
    q = predict.ask("token", sess, pending, tiny_model.cfg, lambda t: f" tok{t}", labels, 0, 0, "head 0")
    assert len(q.options) == 5 and q.options[q.answer] == f" tok{pending.chosen}"
    assert f"It chose ␣tok{pending.chosen}" in q.explain


def test_a_wrong_pick_names_its_mistake(tiny_model):
    """The bytes question after an 8-position prompt: picking M(8), the cache before this step, is named as that
    (the reveal gave only the formula); M(10) as the token chosen but not cached yet; M(9)·n_head/n_kv_head as
    every query head. The right pick and no pick name nothing."""
    cfg, T = tiny_model.cfg, len(PROMPT)
    _, _, q = _ask(tiny_model, "bytes")
    m = lambda t: 2 * cfg.n_layer * t * cfg.n_kv_head * cfg.head_dim * 4  # noqa: E731
    at = {o: i for i, o in enumerate(q.options)}
    assert q.miss(at[f"{m(T):,} B"]).startswith("the cache before this step")
    assert q.miss(at[f"{m(T + 2):,} B"]).startswith("one position too many")
    if cfg.n_head != cfg.n_kv_head:
        assert q.miss(at[f"{m(T + 1) * cfg.n_head // cfg.n_kv_head:,} B"]).startswith("every query head")
    assert q.miss(q.answer) == "" and q.miss(None) == ""
    _, _, q = _ask(tiny_model, "scores")
    assert q.miss(q.options.index(f"{causal_pairs(T + 1):,}")).startswith("a full recompute")
