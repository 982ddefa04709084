"""App tests of the speculative-decoding page."""

from bench.fresh_app import new_app
from core.decode import settings as decode_settings
from core.decode.generate import SamplingConfig, generate_cached
from core.model.shipped import load_model, load_shipped_tokenizer
from core.model.tokenizer import encode
from tests.helpers.app_util import click
from ui.decode import keys as decode_keys


def test_rounds_match_plain_greedy_and_count_passes():
    """Greedy rounds produce plain greedy's tokens with fewer target passes than tokens."""
    at = new_app("app_pages/speculative.py")
    click(at, "Start (prefill the target)")
    for _ in range(4):
        click(at, "Round ▸")
    spec = at.session_state["spec.obj"]
    prompt = encode(load_shipped_tokenizer(), decode_settings.DEFAULT_PROMPT)
    plain = generate_cached(load_model(), prompt, spec.produced, SamplingConfig()).tokens
    assert spec.ids[len(prompt) :] == plain
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Target forward passes"]) == 5 < int(metrics["Tokens produced"])
    assert len(at.dataframe[0].value) == 4


def test_distribution_check_and_measurement():
    """Sampling reports a total variation below the draft's; measuring lists k = 1 … 8."""
    at = new_app("app_pages/speculative.py")
    [b] = [b for b in at.button if b.label == "Sample"]
    b.click().run()
    check = at.session_state["spec.dist"]
    n, tv, tv_q = check.n, check.tv_samples, check.tv_draft
    assert n == 5000 and tv < 0.05 and tv < tv_q
    [m] = [b for b in at.button if b.label.startswith("Measure k")]
    m.click().run()
    assert [r.k for r in at.session_state["spec.speed"]] == [1, 2, 3, 4, 6, 8]


def test_empty_prompt_gets_a_message_not_a_traceback():
    """With the decode page's prompt empty, Start, Sample and Measure each say so; no exception."""
    at = new_app("app_pages/speculative.py")
    at.session_state[decode_keys.DECODE_PROMPT] = ""
    at.run()
    for label in ["Start (prefill the target)", "Sample", "Measure k = 1, 2, 3, 4, 6, 8 (60 tokens each)"]:
        click(at, label)
        assert not at.exception, label
        assert any("empty" in w.value for w in at.warning), label
    assert at.session_state["spec.dist"] is None and at.session_state["spec.speed"] is None  # nothing computed


def test_long_prompt_is_named_by_its_length():
    """A decode-page prompt longer than the window: Start says how many tokens it is, never "empty"; Sample and
    Measure still work (they use the prompt's last tokens)."""
    long_prompt = decode_settings.DEFAULT_PROMPT * 6
    n_tokens = len(encode(load_shipped_tokenizer(), long_prompt))
    at = new_app("app_pages/speculative.py")
    at.session_state[decode_keys.DECODE_PROMPT] = long_prompt
    at.run()
    click(at, "Start (prefill the target)")
    assert n_tokens > 256 and any(f"{n_tokens:,} tokens" in w.value for w in at.warning)
    assert not any("empty" in w.value for w in at.warning)
    click(at, "Sample")
    assert at.session_state["spec.dist"] is not None


def test_the_greedy_note_follows_what_was_sampled_not_the_slider():
    """Sampled at the slider's 0 (greedy makes both distributions one token), the check runs at temperature 1 and
    says why; moving the slider afterwards does not change what the result says about itself."""
    at = new_app("app_pages/speculative.py")
    at.slider(key="spec.t").set_value(0.0).run()
    next(b for b in at.button if b.label == "Sample").click().run()
    assert at.session_state["spec.dist"].temperature == 1.0
    said = lambda: " ".join(m.value for m in at.markdown if "samples: total variation" in m.value)  # noqa: E731
    assert "Temperature 1 (asked at 0, greedy" in said()
    at.slider(key="spec.t").set_value(0.8).run()
    assert "Temperature 1 (asked at 0, greedy" in said()


def test_a_round_past_the_end_token_says_so():
    """ "Thank you! Goodbye." ends at once (greedy's first token is the end token, as on the decode page): the
    round's tokens hold it and a line says a server would have stopped there; the default prompt's first four
    rounds do not, and say nothing."""
    from core.model.tokenizer import end_token_id

    at = new_app("app_pages/speculative.py")
    click(at, "Start (prefill the target)")
    for _ in range(4):
        click(at, "Round ▸")
    end = end_token_id(load_shipped_tokenizer())
    assert end not in at.session_state["spec.obj"].ids
    assert not [c for c in at.caption if "a server would have stopped there" in c.value]
    at.session_state[decode_keys.DECODE_PROMPT] = "Thank you! Goodbye."
    at.run()  # as opening the page after editing the prompt on the decode page
    click(at, "Start (prefill the target)")
    click(at, "Round ▸")
    spec = at.session_state["spec.obj"]
    assert spec.ids[spec.n_prompt] == end
    assert [c.value for c in at.caption if "a server would have stopped there" in c.value] == [
        r"\<\|endoftext\|\> was produced: a server would have stopped there. Rounds go on past it."
    ]  # escaped for markdown, so the page shows <|endoftext|> as spelled
