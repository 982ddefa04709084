import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from core.decode import session, session_view
from core.decode.generate import SamplingConfig, generate_cached


def test_prefill_then_steps_grow_the_matrix(tiny_model):
    """Prefill of n gives an n×n triangle; each step adds one row; future cells are NaN."""
    sess = session.start(tiny_model, [1, 2, 3, 4, 5], SamplingConfig())
    assert session_view.attention_matrix(sess, 0, None).shape == (5, 5)
    for _ in range(3):
        session.step(tiny_model, sess)
    att = session_view.attention_matrix(sess, 1, 2)
    assert att.shape == (8, 8) and sess.n_steps == 3
    upper = np.triu_indices(8, 1)
    assert np.all(np.isnan(att[upper]))
    assert np.allclose(np.nansum(att, axis=1), 1.0, atol=1e-6)


def test_session_tokens_equal_generate_cached(tiny_model):
    """Stepping by hand chooses the same tokens as generate_cached with the same sampling."""
    sampling = SamplingConfig("sample", temperature=1.2, top_k=10, seed=5)
    sess = session.start(tiny_model, [7, 3, 7], sampling)
    for _ in range(6):
        session.step(tiny_model, sess)
    assert sess.outputs == generate_cached(tiny_model, [7, 3, 7], 7, sampling).tokens


def test_counters_and_clock(tiny_model):
    """Scores: cached 15+6+7 vs naive 15+21+28 for a 5-token prompt and 2 steps; one time per token."""
    sess = session.start(tiny_model, [1, 2, 3, 4, 5], SamplingConfig())
    session.step(tiny_model, sess)
    session.step(tiny_model, sess)
    assert sess.scores_cached == 15 + 6 + 7
    assert sess.scores_naive == 15 + 21 + 28
    assert len(sess.engine_ms) == len(sess.outputs) == 3
    assert all(t > 0 for t in sess.engine_ms)
    assert max(sess.max_diff) < 1e-5


def test_pending_is_not_cached(tiny_model):
    """Table 30.1: the chosen token is pending; the cache holds only consumed positions."""
    sess = session.start(tiny_model, [1, 2, 3, 4, 5, 6, 7, 8], SamplingConfig())
    assert sess.n_positions == 8 and sess.pending is not None
    session.step(tiny_model, sess)
    assert sess.n_positions == 9 and sess.consumed[-1] == sess.outputs[0]


def test_block_reasons(tiny_model):
    """End token and a full context window stop stepping with a reason."""
    cfg = tiny_model.cfg
    sess = session.start(tiny_model, [1] * cfg.block_size, SamplingConfig())
    assert "context window is full" in session.step_block_reason(sess, end_id=None)
    sess = session.start(tiny_model, [1, 2], SamplingConfig())
    assert "end token" in session.step_block_reason(sess, end_id=sess.pending)
    assert session.step_block_reason(sess, end_id=None) is None


def test_too_long_prompt_is_refused_with_count(tiny_model):
    """A prompt past the window is refused, saying how many tokens to remove."""
    with pytest.raises(ValueError, match="remove at least 3 tokens"):
        session.start(tiny_model, [1] * (tiny_model.cfg.block_size + 3), SamplingConfig())


def test_a_long_prompt_s_counts_have_thousands_separators_and_one_token_is_singular(tiny_model):
    """A 100,000-character paste read "the prompt is 60001 tokens … remove at least 59745 tokens"."""
    window = tiny_model.cfg.block_size
    with pytest.raises(ValueError) as err:
        session.start(tiny_model, [1] * (window + 59_745), SamplingConfig())
    assert f"is {window + 59_745:,} tokens" in str(err.value) and "remove at least 59,745 tokens" in str(err.value)
    with pytest.raises(ValueError, match="remove at least 1 token$"):
        session.start(tiny_model, [1] * (window + 1), SamplingConfig())


def test_two_sessions_are_independent(tiny_model):
    """Stepping one session leaves another's cache, tokens and matrix untouched."""
    a = session.start(tiny_model, [1, 2, 3], SamplingConfig("sample", seed=1))
    b = session.start(tiny_model, [4, 5], SamplingConfig("sample", seed=1))
    before = (b.n_positions, list(b.outputs), session_view.attention_matrix(b, 0, None).copy())
    for _ in range(4):
        session.step(tiny_model, a)
    assert (b.n_positions, b.outputs) == before[:2]
    assert np.array_equal(session_view.attention_matrix(b, 0, None), before[2], equal_nan=True)


def test_reuse_after_edit_equals_fresh_prefill(tiny_model64):
    """Editing the prompt reuses positions before the first change; logits equal a fresh prefill (1e-12)."""
    old = session.start(tiny_model64, [1, 2, 3, 4, 5, 6], SamplingConfig())
    session.step(tiny_model64, old)
    new_prompt = [1, 2, 3, 9, 9, 6, 7]
    sess, reuse = session.restart(tiny_model64, old, new_prompt, SamplingConfig(), old.model_key)
    assert (reuse.reused, reuse.recomputed) == (3, 4) and "position 3" in reuse.reason
    fresh = session.start(tiny_model64, new_prompt, SamplingConfig())
    assert float((sess.logits - fresh.logits).abs().max()) < 1e-12 and reuse.max_diff_vs_fresh < 1e-12
    assert np.allclose(
        session_view.attention_matrix(sess, 1, 0),
        session_view.attention_matrix(fresh, 1, 0),
        equal_nan=True,
        atol=1e-12,
    )
    assert sess.n_positions == 7 and sess.passes[-1][0].shape[1] == 4


def test_reuse_extends_over_generated_tokens(tiny_model64):
    """A new prompt that starts with everything consumed (prompt + output) reuses all of it."""
    old = session.start(tiny_model64, [1, 2, 3], SamplingConfig())
    session.step(tiny_model64, old)
    session.step(tiny_model64, old)
    prompt = old.consumed + [5, 6]
    sess, reuse = session.restart(tiny_model64, old, prompt, SamplingConfig(), old.model_key)
    assert reuse.reused == 5 and reuse.recomputed == 2 and "extends" in reuse.reason


def test_changing_the_model_invalidates_everything(tiny_model64):
    """Another precision or quantization: nothing reused, and the reason says why."""
    old = session.start(tiny_model64, [1, 2, 3], SamplingConfig(), ("float64", None))
    sess, reuse = session.restart(tiny_model64, old, [1, 2, 3], SamplingConfig(), ("float64", 4))
    assert reuse.reused == 0 and reuse.recomputed == 3 and "weights changed" in reuse.reason


def test_steps_after_a_reprefill_leave_the_prompt_alone(tiny_model64):
    """After a re-prefill, Steps add to the consumed text only: the prompt keeps its length, the
    step count starts again at 0 and counts each Step once."""
    old = session.start(tiny_model64, [1, 2, 3, 4, 5], SamplingConfig())
    session.step(tiny_model64, old)
    sess, _ = session.restart(tiny_model64, old, [1, 2, 3, 9, 5], SamplingConfig(), old.model_key)
    assert sess.n_steps == 0 and sess.consumed is not sess.prompt_ids
    session.step(tiny_model64, sess)
    session.step(tiny_model64, sess)
    assert sess.prompt_ids == [1, 2, 3, 9, 5] and sess.n_steps == 2
    assert sess.consumed == [1, 2, 3, 9, 5, *sess.outputs[:2]] and sess.n_positions == 7


def test_reprefill_of_the_same_prompt_says_unchanged(tiny_model64):
    """Prefill twice with the same prompt: every position but the last is reused and the reason
    says the prompt is unchanged; after steps, the decoded positions are dropped."""
    old = session.start(tiny_model64, [1, 2, 3, 4], SamplingConfig())
    sess, reuse = session.restart(tiny_model64, old, [1, 2, 3, 4], SamplingConfig(), old.model_key)
    assert (reuse.reused, reuse.recomputed) == (3, 1) and "unchanged" in reuse.reason
    session.step(tiny_model64, sess)
    again, reuse = session.restart(tiny_model64, sess, [1, 2, 3, 4], SamplingConfig(), sess.model_key)
    assert (reuse.reused, reuse.recomputed) == (3, 1) and "dropped" in reuse.reason
    assert again.n_positions == 4 and again.n_steps == 0


def test_a_costly_recompute_is_checked_every_ten_steps(tiny_model):
    """A small model's recompute is checked at every step; once its products pass the budget
    (n_params × positions multiply-adds), every 10th step is, and the badge reports the latest
    checked step (others are NaN, never a made-up 0)."""
    sess = session.start(tiny_model, [1, 2, 3], SamplingConfig())
    assert session.check_due(tiny_model, sess)
    session.step(tiny_model, sess, check=session.check_due(tiny_model, sess))
    assert session.last_check(sess)[0] == 1
    budget = tiny_model.n_params() * 4 - 1  # passed from the next step on (4 positions after it)
    checked = []
    for _ in range(20):
        due = session.check_due(tiny_model, sess, budget_macs=budget)
        session.step(tiny_model, sess, check=due)
        checked.append(due)
    assert [i + 2 for i, c in enumerate(checked) if c] == [11, 21]  # steps 11 and 21
    assert np.isnan(sess.max_diff[5]) and session.last_check(sess)[0] == 21 and session.last_check(sess)[1] < 1e-5


def test_why_a_check_is_spaced_out_the_models_size_or_a_busy_server():
    """The shipped model is checked at every step at its full window, a SmolLM2-135M-sized one
    (134.5 M parameters) at 67 positions is not ("model"); a recompute that took over 100 ms by the
    clock spaces the checks out too, as "busy" (a class server under load), so the badge can say
    why rather than "on this model" for the shipped model (a teacher saw that on a busy machine)."""
    from core.model.shipped import load_model

    shipped = load_model()
    full = session.start(shipped, [5] * (shipped.cfg.block_size - 1), SamplingConfig())
    assert shipped.n_params() * shipped.cfg.block_size <= session.CHECK_BUDGET_MACS < 134_515_008 * 67
    assert session.check_spacing(shipped, full) is None and session.check_due(shipped, full)
    full.check_ms = 140.0  # what a busy server measured
    assert session.check_spacing(shipped, full) == "busy" and not session.check_due(shipped, full)
    assert session.check_spacing(shipped, full, budget_macs=1) == "model"


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="pins processes to a core (Linux)")
def test_a_check_that_waited_for_a_core_spaces_the_checks_out():
    """A recompute check that shares its core with three busy processes (other replicas of a class
    server) runs about a quarter of the time it takes by the clock: its clock time is over twice its
    CPU time, so the server is "busy" and the next check waits 10 steps, though no step of this
    process is in line and the check took under 100 ms. Real contention, both clocks measured (with two
    rivals, a CI run on a busy machine once measured 1.87×)."""
    from core.model.shipped import load_model

    shipped, core = load_model(), min(os.sched_getaffinity(0))
    sess = session.start(shipped, [5] * (shipped.cfg.block_size - 2), SamplingConfig())
    before, threads = os.sched_getaffinity(0), torch.get_num_threads()
    spin = [sys.executable, "-c", "print('spinning', flush=True)\nwhile True: pass"]
    rivals = [subprocess.Popen(spin, stdout=subprocess.PIPE, text=True) for _ in range(3)]
    try:
        torch.set_num_threads(1)  # as the app runs torch (ui/models.py): the check's CPU is its thread's
        for pid in (0, *(p.pid for p in rivals)):
            os.sched_setaffinity(pid, {core})
        for p in rivals:  # each has said it is in its loop: both are running (a wait on state, not a pause)
            assert p.stdout.readline().strip() == "spinning"
        session.step(shipped, sess, check=True)
    finally:
        for p in rivals:
            p.kill()
            p.wait()
            p.stdout.close()
        os.sched_setaffinity(0, before)
        torch.set_num_threads(threads)
    assert sess.check_ms > session.CHECK_CONTENDED * sess.check_cpu_ms > 0
    assert session.check_spacing(shipped, sess) == "busy" and not session.check_due(shipped, sess)
    sess.check_ms = 1.5 * sess.check_cpu_ms  # a check that waited less than it ran: checked at every step
    assert session.check_spacing(shipped, sess) is None and session.check_due(shipped, sess)


def test_steps_waiting_in_line_space_the_check_out(tiny_model):
    """With other sessions' steps in line behind this one (``turns.waiting()`` in the app) the server
    is busy: a step right after a checked one is not checked, the 10th after it is; with none in line
    every step is (the last check's clock says nothing here: 0 ms)."""
    sess = session.start(tiny_model, [1, 2, 3], SamplingConfig())
    session.step(tiny_model, sess, check=True)
    sess.check_ms = 0.0
    assert session.check_spacing(tiny_model, sess) is None and session.check_due(tiny_model, sess)
    assert session.check_spacing(tiny_model, sess, queued=3) == "busy"
    checked = []
    for _ in range(10):
        due = session.check_due(tiny_model, sess, queued=3)
        session.step(tiny_model, sess, check=due)
        checked.append(due)
    assert checked == [False] * 9 + [True]  # steps 2-10 skip it, step 11 is checked (10 after step 1)


def test_a_step_writes_into_the_sessions_own_cache_and_equals_a_previewed_step(tiny_model):
    """Step consumes the pending token in the session's own buffers (copying a 2,048-position
    SmolLM2-sized cache took 100 ms alone, ~20 ms of server CPU per Step in the app), and chooses
    what preview-then-commit chooses, with the same logits, attention and check."""
    sampling = SamplingConfig("sample", temperature=1.3, top_k=20, seed=11)
    plain, previewed = (session.start(tiny_model, [4, 8, 15, 16, 23], sampling) for _ in range(2))
    buffers = [t.data_ptr() for t in plain.cache.k_cache + plain.cache.v_cache]
    for _ in range(4):
        session.step(tiny_model, plain)
        session.commit(previewed, session.preview_step(tiny_model, previewed))
    assert [t.data_ptr() for t in plain.cache.k_cache + plain.cache.v_cache] == buffers
    assert plain.outputs == previewed.outputs and plain.consumed == previewed.consumed
    assert torch.equal(plain.logits, previewed.logits) and plain.max_diff == previewed.max_diff
    assert all(np.array_equal(a, b) for a, b in zip(plain.passes[-1], previewed.passes[-1], strict=True))
    for layer in range(tiny_model.cfg.n_layer):
        assert torch.equal(plain.cache.keys(layer), previewed.cache.keys(layer))
        assert torch.equal(plain.cache.values(layer), previewed.cache.values(layer))


def test_a_step_that_cannot_run_changes_nothing(tiny_model):
    """With the context window full, Step raises and the session keeps its positions and outputs."""
    sess = session.start(tiny_model, [1] * (tiny_model.cfg.block_size - 1), SamplingConfig())
    session.step(tiny_model, sess)  # the last slot
    before = (sess.cache.pos, list(sess.outputs), list(sess.consumed))
    with pytest.raises(ValueError, match="context window"):
        session.step(tiny_model, sess)
    assert (sess.cache.pos, sess.outputs, sess.consumed) == before


def test_model_key_change_names_only_what_differs_from_plain():
    """The heatmap's title suffix: nothing for float32 with float weights, else the precision and/or the bits."""
    from core.decode.session_types import ModelKey

    assert [
        ModelKey(d, b).change for d, b in [("float32", None), ("float32", 4), ("float64", None), ("float64", 8)]
    ] == [
        "",
        "4-bit weights",
        "float64",
        "float64, 8-bit weights",
    ]
