"""Inside the cache (Ch. 19 "What the cache stores", Ch. 30 §30.2, §30.4): the rows shown are the live cache's, and a
Step never changes an earlier one, on the shipped model's own cache tensors."""

import numpy as np
import pytest
import torch

from core.decode import cache_rows, session
from core.decode import settings as decode_settings
from core.decode.generate import SamplingConfig
from core.model.config import PRESETS, GPTConfig
from core.model.shipped import load_model, load_shipped_tokenizer
from core.model.tokenizer import encode
from tests.helpers.hf_cache import llama_twin

transformers = pytest.importorskip("transformers")
PROMPT = encode(load_shipped_tokenizer(), decode_settings.DEFAULT_PROMPT)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_rows_are_the_cache_tensors_slices_exactly(dtype):
    """After Prefill and 3 Steps, every layer and KV head's rows are the cache tensors' slices, bit for bit, in the
    cache's own dtype, one row per cached position."""
    model = load_model(dtype)
    sess = session.start(model, PROMPT, SamplingConfig())
    for _ in range(3):
        session.step(model, sess, check=False)
    T = len(PROMPT) + 3
    for layer in range(model.cfg.n_layer):
        for kv in range(model.cfg.n_kv_head):
            rows = cache_rows.head_rows(sess.cache, layer, kv)
            assert rows.keys.dtype == rows.values.dtype == np.dtype(dtype) and rows.keys.shape == (T, 32)
            assert np.array_equal(rows.keys, sess.cache.k_cache[layer][0, kv, :T].numpy())
            assert np.array_equal(rows.values, sess.cache.v_cache[layer][0, kv, :T].numpy())


@torch.no_grad()
def test_the_rows_match_transformers_llama_cache():
    """The shipped model's weights in transformers' LlamaForCausalLM: its DynamicCache holds the same keys (after
    RoPE) and values for every layer and KV head, to 1e-5 (|K| up to ~4.5), after a prefill and 3 cached decode
    steps. float32: transformers computes the RoPE angles in float32 whatever the model's dtype (3e-6 apart in
    float64 too)."""
    model = load_model()
    sess = session.start(model, PROMPT, SamplingConfig())
    for _ in range(3):
        session.step(model, sess, check=False)
    hf = llama_twin(model)
    past = hf(torch.tensor([PROMPT]), use_cache=True).past_key_values
    for token in sess.consumed[len(PROMPT) :]:  # the 3 tokens the Steps consumed, one cached step each
        past = hf(torch.tensor([[token]]), past_key_values=past, use_cache=True).past_key_values
    for layer, hf_layer in enumerate(past.layers):
        for kv in range(model.cfg.n_kv_head):
            rows = cache_rows.head_rows(sess.cache, layer, kv)
            assert np.allclose(rows.keys, hf_layer.keys[0, kv].numpy(), atol=1e-5, rtol=0)
            assert np.allclose(rows.values, hf_layer.values[0, kv].numpy(), atol=1e-5, rtol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_earlier_rows_stay_bit_for_bit_over_10_steps(dtype):
    """Over 10 Steps of the shipped model, the T − 1 earlier rows of every layer are, after each Step, exactly the
    tensors' bytes before it (a copy kept here, compared with torch.equal), and ``compare`` says so."""
    model = load_model(dtype)
    sess = session.start(model, PROMPT, SamplingConfig())
    for k in range(1, 11):
        before = [(sess.cache.keys(layer).clone(), sess.cache.values(layer).clone()) for layer in range(4)]
        session.step(model, sess, check=False)
        T = len(PROMPT) + k
        for layer, (keys, values) in enumerate(before):
            assert torch.equal(sess.cache.keys(layer)[:, :, : T - 1], keys)
            assert torch.equal(sess.cache.values(layer)[:, :, : T - 1], values)
        check = cache_rows.compare(sess.cache, sess.row_prints, T - 1)
        assert check.unchanged and check.earlier == T - 1 and len(sess.row_prints) == T


def test_predict_first_commits_leave_earlier_rows_unchanged():
    """Predict first computes a Step on a copy of the cache and commits the copy: its earlier rows are still the
    bytes the request wrote."""
    model = load_model()
    sess = session.start(model, PROMPT, SamplingConfig())
    for _ in range(3):
        session.commit(sess, session.preview_step(model, sess, check=False))
    assert cache_rows.compare(sess.cache, sess.row_prints, len(PROMPT) + 2).unchanged


@pytest.mark.parametrize("which", ["k_cache", "v_cache"])
def test_a_changed_earlier_row_is_reported(which):
    """One float's last bit flipped in a copy of the cache (position 7, layer 2, KV head 1) is reported as
    exactly (position 7, layer 2), loudly; the request's own cache still passes."""
    model = load_model()
    sess = session.start(model, PROMPT, SamplingConfig())
    for _ in range(3):
        session.step(model, sess, check=False)
    copy = sess.cache.clone()
    cell = getattr(copy, which)[2][0, 1, 7, 5:6]
    cell.view(torch.int32).bitwise_xor_(1)  # the smallest change a float32 can have
    check = cache_rows.compare(copy, sess.row_prints, copy.pos - 1)
    assert check.changed == ((7, 2),) and not check.unchanged
    said = cache_rows.proof(check, len(PROMPT), 0, 3)
    assert said.startswith("An earlier row changed: position 7 in layer 2 ") and "No earlier vector" not in said
    assert cache_rows.compare(sess.cache, sess.row_prints, sess.cache.pos - 1).unchanged


def test_the_sentence_counts_the_rows_each_pass_wrote():
    """Prefill of P positions and 3 Steps: P + 2 earlier rows, written before Step 3 by the Prefill (P) and Steps 1–2;
    after the Prefill alone, it wrote all P."""
    model, P = load_model(), len(PROMPT)
    sess = session.start(model, PROMPT, SamplingConfig())
    first = cache_rows.proof(cache_rows.compare(sess.cache, sess.row_prints, 0), P, 0, 0)
    assert first.startswith(f"Prefill wrote all {P} rows in one parallel pass.")
    for _ in range(3):
        session.step(model, sess, check=False)
    said = cache_rows.proof(cache_rows.compare(sess.cache, sess.row_prints, P + 2), P, 0, 3)
    assert said == (
        f"No earlier vector was recomputed: the {P + 2} earlier rows, in all 4 layers and 2 KV heads, are bit for "
        f"bit what was written before Step 3 (Prefill wrote {P}, Steps 1–2 one each)."
    )


def test_a_reprefill_keeps_the_fingerprints_of_the_rows_it_reuses(tiny_model64):
    """Editing the prompt after position 3: the 3 reused rows keep their fingerprints and still match; the sentence
    names the request before."""
    old = session.start(tiny_model64, [1, 2, 3, 4, 5, 6], SamplingConfig())
    session.step(tiny_model64, old)
    sess, reuse = session.restart(tiny_model64, old, [1, 2, 3, 9, 9, 6, 7], SamplingConfig(), old.model_key)
    assert reuse.reused == 3 and len(sess.row_prints) == 7
    check = cache_rows.compare(sess.cache, sess.row_prints, 3)
    assert check.unchanged
    assert cache_rows.proof(check, 7, 3, 0).endswith("before this Prefill (the request before left 3).")
    session.step(tiny_model64, sess)
    said = cache_rows.proof(cache_rows.compare(sess.cache, sess.row_prints, 7), 7, 3, 1)
    assert "the 7 earlier rows" in said and said.endswith("(the request before left 3, Prefill wrote 4).")


@pytest.mark.parametrize("cfg", [PRESETS["tiny"], PRESETS["larger"], GPTConfig(n_head=4, n_kv_head=1)])
def test_a_query_head_reads_the_kv_head_transformers_repeats_for_it(cfg):
    """GQA: query head h reads the KV head that transformers' ``repeat_kv`` places at h."""
    from transformers.models.llama.modeling_llama import repeat_kv

    kv = torch.arange(cfg.n_kv_head, dtype=torch.float64).reshape(1, cfg.n_kv_head, 1, 1)
    repeated = repeat_kv(kv, cfg.n_head // cfg.n_kv_head)
    assert [cache_rows.kv_head_of(cfg, h) for h in range(cfg.n_head)] == [int(x) for x in repeated.flatten()]


def test_the_shipped_models_gqa_note():
    """The shipped model (4 query heads, 2 KV heads): head 3 reads KV head 1 with head 2."""
    cfg = load_model().cfg
    assert cache_rows.head_note(cfg, 3).startswith("Head 3 reads KV head 1, shared by query heads 2–3 (GQA: 4 query")
    assert cache_rows.head_note(cfg, None).endswith("here KV head 0, read by query heads 0–1.")


def test_bytes_match_example_30_3_and_the_measured_cache():
    """Ch. 30 Example 30.3 (2 layers, 2 KV heads, 4 coordinates, 2 bytes): one more position adds 64 bytes; the
    shipped model's one Step adds exactly the bytes the note gives, measured from the cache tensors."""
    note = cache_rows.bytes_note(GPTConfig(n_layer=2, n_head=2, n_kv_head=2, n_embd=8), 2)
    assert "2 · 2 · 2 · 4 · 2 = 64 B per position" in note
    model = load_model()
    sess = session.start(model, PROMPT, SamplingConfig())
    before = sess.cache.nbytes
    session.step(model, sess, check=False)
    assert f"= {sess.cache.nbytes - before:,} B per position" in cache_rows.bytes_note(model.cfg, 4)


def test_rows_of_a_layer_or_head_the_model_lacks_are_refused():
    """Layer 4 or KV head 2 of the shipped model (4 layers, 2 KV heads): a plain ValueError."""
    model = load_model()
    sess = session.start(model, PROMPT[:3], SamplingConfig())
    with pytest.raises(ValueError, match="4 layers"):
        cache_rows.head_rows(sess.cache, 4, 0)
    with pytest.raises(ValueError, match="2 KV heads"):
        cache_rows.head_rows(sess.cache, 0, 2)
