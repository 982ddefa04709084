"""What the cache is not (Ch. 30 §30.4), checked on the shipped model's own cache tensors."""

import pytest

from core.decode.cache_not import answer_cache_vs_kv_cache, continue_chat, reuse_checks, weights_digest
from core.model.shipped import load_model, load_shipped_tokenizer
from core.model.tokenizer import encode

TEXT, EDITED = "User: The limit is 600 yuan.", "User: The limit is 750 yuan."


@pytest.fixture(scope="module")
def checks():
    model, tok = load_model(), load_shipped_tokenizer()
    return {r.condition: r for r in reuse_checks(model, tok, TEXT, EDITED, window=4)}, tok


def test_only_the_unchanged_run_may_reuse_the_cache(checks):
    """The same text, IDs, positions, rule and weights give bit-identical K/V; every other condition does not."""
    rows, _ = checks
    assert rows["nothing"].reusable and rows["nothing"].max_key_diff == 0 == rows["nothing"].max_value_diff
    assert [c for c, r in rows.items() if r.reusable] == ["nothing"]


def test_an_edit_invalidates_from_the_changed_position_on(checks):
    """600 → 750 yuan: K/V before the first changed token are reused as they are; from it on they differ."""
    rows, tok = checks
    a, b = encode(tok, TEXT), encode(tok, EDITED)
    first = next(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
    assert rows["the prompt edited"].first_position_diff == first == 5


def test_a_window_changes_layers_after_the_first_from_the_window_on(checks):
    """A 4-position window: layer 0's K/V come before any attention (equal); later layers differ from
    position 4, the first that can no longer see position 0."""
    rows, _ = checks
    assert rows["attention rule"].first_layer_diff == 1 and rows["attention rule"].first_position_diff == 4


def test_shifted_positions_rotate_the_keys_only(checks):
    """RoPE: keys are stored rotated by their absolute position (different); values depend on relative
    positions only, so they agree to float rounding."""
    rows, _ = checks
    assert rows["positions"].max_key_diff > 0.1 and rows["positions"].max_value_diff < 1e-4
    assert rows["positions"].first_layer_diff == 0


def test_other_ids_weights_and_adapters_change_layer_0(checks):
    """Another tokenization, 4-bit weights and a low-rank adapter change K/V from the first layer."""
    rows, _ = checks
    for condition in ("tokenizer IDs", "weights or precision", "an adapter"):
        assert rows[condition].first_layer_diff == 0 and not rows[condition].reusable


def test_a_conversation_does_not_change_the_weights():
    """Continuing a transcript prefills its text again and leaves every weight byte as it was."""
    model, tok = load_model(), load_shipped_tokenizer()
    transcript = "User: Hello, my name is Mira.\nAssistant:"
    before = weights_digest(model)
    turn = continue_chat(model, tok, transcript, new_tokens=4)
    assert turn.transcript_tokens == len(encode(tok, transcript))
    assert turn.digest_before == turn.digest_after == before == weights_digest(model)
    rows = answer_cache_vs_kv_cache(turn, 2048)
    assert rows[2]["answer cache"] == f"{len(turn.reply.encode()):,} B of text" and rows[2]["KV cache"].startswith(
        "2.00 KiB"
    )
