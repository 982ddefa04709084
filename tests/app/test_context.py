"""App tests of the context-window page."""

import json

from bench.fresh_app import new_app
from core.decode import settings as decode_settings
from tests.helpers.app_util import charts
from ui.decode import keys as decode_keys


def _bytes_curve(at):
    return next(c for c in charts(at) if c["layout"]["title"]["text"].startswith("Cache bytes"))["data"][0]["y"]


def test_sliding_window_keeps_bytes_flat():
    """Default (sliding, window 64): the cache bytes end flat at 64 × 2,048 bytes."""
    at = new_app("app_pages/context.py")
    y = _bytes_curve(at)
    assert y[-10:] == [64 * 2048] * 10 and max(y) == 64 * 2048


def test_stop_and_truncate_policies():
    """Stop ends at the window; truncating names how many prompt tokens were dropped; a small window refuses stop."""
    at = new_app("app_pages/context.py")
    at.radio(key="ctx.policy").set_value("stop").run()
    assert any("stopped at the wall" in i.value.lower() for i in at.info)
    at.slider(key="ctx.window").set_value(32).run()
    assert any("window holds 32" in e.value for e in at.error) and not at.exception
    at.radio(key="ctx.policy").set_value("truncate the prompt").run()
    assert any("dropped the first" in i.value.lower() for i in at.info)


def _greedy_until_end():
    from core.decode.generate import SamplingConfig, generate_cached
    from core.model.shipped import load_model, load_shipped_tokenizer
    from core.model.tokenizer import encode, end_token_id

    tok = load_shipped_tokenizer()
    tokens = generate_cached(load_model(), encode(tok, decode_settings.DEFAULT_PROMPT), 80, SamplingConfig()).tokens
    return tokens, end_token_id(tok)


def test_end_of_text_is_explained_or_stops_there():
    """Default: generation goes on past the end token, and the page says at which output token it came and why it
    continues; with “Stop at the end-of-text token” the continuation ends exactly there, as plain greedy does."""
    tokens, end = _greedy_until_end()
    assert end in tokens  # the default prompt's answer ends with the end token
    at = new_app("app_pages/context.py")
    assert any(f"output token {tokens.index(end) + 1}:" in i.value for i in at.info)
    at.toggle(key="ctx.stop_at_end").set_value(True).run()
    text = at.code[0].value  # the prompt, ▶, the continuation, ◀: one marker each
    assert text.endswith("<|endoftext|>◀") and text.count("▶") == 1 and text.startswith(decode_settings.DEFAULT_PROMPT)
    assert text.index("▶") == len(decode_settings.DEFAULT_PROMPT) and "⟨" not in text
    assert not any("keeps generating" in i.value for i in at.info)


def test_empty_or_blank_prompt_points_to_the_decode_page():
    """An empty or spaces-only prompt: the page says to type one on the decode page, not to lengthen the window."""

    for prompt in ("", "   \n "):
        at = new_app("app_pages/context.py")
        at.session_state[decode_keys.DECODE_PROMPT] = prompt
        at.run()
        assert not at.exception and not at.error
        assert any("Prefill & decode" in i.value and "empty" in i.value for i in at.info)


def test_a_sliding_windows_earlier_rows_are_not_said_to_come_from_the_cache():
    """Default (sliding, window 64, 80 new tokens): the heatmap has one new row and 129 earlier ones, but the cache
    holds 64 positions, so its text alternative and legend say the earlier rows were computed in earlier passes,
    not read from the KV cache (a helper found "129 earlier rows read from the KV cache" here)."""
    at = new_app("app_pages/context.py")
    heat = next(c for c in charts(at) if c["layout"]["title"]["text"].startswith("Layer"))
    text = heat["layout"]["meta"]["description"]
    assert "1 new row, 129 earlier rows computed in earlier passes" in text, text
    assert "KV cache" not in text and "KV cache" not in json.dumps(heat)
    assert _bytes_curve(at)[-1] == 64 * 2048  # what the cache does hold: 64 positions of 2,048 bytes


def test_the_page_says_a_larger_cache_does_not_teach_distance():
    """Ch. 19 "The context window": a larger cache alone does not teach a model to use arbitrary distances reliably."""
    captions = " ".join(c.value for c in new_app("app_pages/context.py").caption)
    assert "a larger cache alone does not teach a model to use arbitrary distances reliably" in captions
    assert "Model training, positional encoding, and runtime memory all matter" in captions
