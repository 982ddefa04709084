"""App tests of the decode page (streamlit's AppTest, no browser)."""

from core import state as K
from core.assets import load_shipped_tokenizer
from core.tokenizer import encode
from tests.app_util import click, heatmap_z, new_app

PROMPT_LEN = len(encode(load_shipped_tokenizer(), K.DEFAULT_PROMPT))


def test_prefill_then_five_steps_gives_prompt_plus_five_rows():
    """Prefill gives one row per prompt position; each step adds exactly one."""
    at = new_app()
    assert heatmap_z(at) is None  # empty state before prefill
    click(at, "Prefill")
    assert len(heatmap_z(at)) == PROMPT_LEN
    for _ in range(5):
        click(at, "Step ▸")
    z = heatmap_z(at)
    assert len(z) == PROMPT_LEN + 5
    assert z[0][1] is None and z[-1][-1] is not None  # masked cells blank, diagonal computed


def test_two_sessions_step_independently():
    """One session's steps never change another session's view."""
    a, b = new_app(), new_app()
    click(a, "Prefill")
    click(b, "Prefill")
    for _ in range(3):
        click(a, "Step ▸")
    b.run()
    assert len(heatmap_z(a)) == PROMPT_LEN + 3
    assert len(heatmap_z(b)) == PROMPT_LEN


def test_empty_prompt_gets_a_message_not_a_traceback():
    """An empty or whitespace prompt is refused politely."""
    at = new_app()
    at.text_area[0].set_value("   \n ").run()
    click(at, "Prefill")
    assert any("empty" in w.value for w in at.warning)
    assert heatmap_z(at) is None


def test_prompt_past_context_window_is_refused_with_count():
    """A prompt longer than the window says how many tokens to remove."""
    at = new_app()
    at.text_area[0].set_value("cat " * 400).run()
    click(at, "Prefill")
    assert any("remove at least" in e.value for e in at.error)


def test_html_and_emoji_prompt_works_and_stays_literal():
    """HTML and emoji tokenize; the labels carry the escaped literal text."""
    at = new_app()
    at.text_area[0].set_value("<b>hi</b> 😀 <script>alert(1)</script>").run()
    click(at, "Prefill")
    click(at, "Step ▸")
    from tests.app_util import charts

    heat = next(t for c in charts(at) for t in c["data"] if t.get("type") == "heatmap")
    assert any("&lt;" in y for y in heat["y"]) and not any("<b>" in y for y in heat["y"])


def test_float64_mode_is_exact():
    """In float64 the equivalence badge shows a difference below 1e-12."""
    at = new_app()
    at.radio[0].set_value("float64").run()
    click(at, "Prefill")
    click(at, "Step ▸")
    sess = at.session_state[K.DECODE_SESSION]
    assert sess.cache.dtype.itemsize == 8 and sess.max_diff[-1] < 1e-12


def test_switching_precision_after_prefill_keeps_the_request_consistent():
    """A request keeps the precision it was prefilled in; the switch applies at the next Prefill."""
    at = new_app()
    click(at, "Prefill")
    at.radio[0].set_value("float64").run()
    click(at, "Step ▸")
    sess = at.session_state[K.DECODE_SESSION]
    assert sess.cache.dtype.itemsize == 4 and sess.max_diff[-1] < 1e-5
    click(at, "Prefill")
    assert at.session_state[K.DECODE_SESSION].cache.dtype.itemsize == 8


def test_editing_the_prompt_reuses_the_cached_prefix():
    """After prefill, appending text re-prefills only the new positions and says so."""
    at = new_app()
    click(at, "Prefill")
    click(at, "Step ▸")
    at.text_area[0].set_value(K.DEFAULT_PROMPT + " 620 yuan is within the limit.").run()
    click(at, "Prefill")
    msg = " ".join(i.value for i in at.info)
    assert "Cache reuse:" in msg and "Max |logit − a fresh prefill|" in msg
    sess = at.session_state[K.DECODE_SESSION]
    assert sess.passes[-1][0].shape[1] < len(sess.prompt_ids)  # only the tail was recomputed
    assert sess.max_diff[-1] < 1e-5


def test_changing_weights_invalidates_the_cache_with_a_reason():
    """A new weight precision recomputes everything and says why."""
    at = new_app()
    click(at, "Prefill")
    at.radio(key=K.DECODE_WEIGHT_BITS).set_value(8).run()
    click(at, "Prefill")
    assert any("Whole cache recomputed" in i.value and "weights changed" in i.value for i in at.info)
