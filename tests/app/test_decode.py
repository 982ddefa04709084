"""App tests of the decode page (streamlit's AppTest, no browser)."""

import numpy as np

from bench.fresh_app import new_app
from core.decode import session_view
from core.decode import settings as decode_settings
from core.model.shipped import load_shipped_tokenizer
from core.model.tokenizer import encode
from tests.helpers.app_util import attention_rows, charts, click, plotly_array, stage, stage_matrix
from ui.decode import keys as decode_keys

PROMPT_LEN = len(encode(load_shipped_tokenizer(), decode_settings.DEFAULT_PROMPT))


def test_prefill_then_five_steps_gives_prompt_plus_five_rows():
    """Prefill draws one row per prompt position; each step sends exactly one more row."""
    at = new_app()
    assert attention_rows(at) is None  # empty state before prefill
    click(at, "Prefill")
    full = stage(at)["explainer_attention"]
    assert full["kind"] == "full" and attention_rows(at) == PROMPT_LEN
    z = stage_matrix(full)
    assert z[0][1] is None and z[-1][-1] is not None  # masked cells blank, diagonal computed
    for k in range(1, 6):
        click(at, "Step ▸")
        row = stage(at)["explainer_attention"]
        assert row["kind"] == "row" and row["base"] == PROMPT_LEN + k - 1 and len(row["row"]) == PROMPT_LEN + k
    assert attention_rows(at) == PROMPT_LEN + 5


def test_the_rows_sent_are_the_models_attention():
    """The drawn shares are the session's own attention (the default layer and head), to the 1e-4 of
    the wire format."""
    layer, head = decode_keys.DEFAULTS[decode_keys.DECODE_LAYER], decode_keys.DEFAULTS[decode_keys.DECODE_HEAD]
    at = new_app()
    click(at, "Prefill")
    sess = at.session_state[decode_keys.DECODE_SESSION]
    want = session_view.attention_matrix(sess, layer, head)
    got = np.array(
        [[np.nan if x is None else x for x in row] for row in stage_matrix(stage(at)["explainer_attention"])]
    )
    assert np.allclose(got, want, atol=0.5e-4, equal_nan=True)
    click(at, "Step ▸")
    row = np.array(stage(at)["explainer_attention"]["row"]) / 10_000
    assert np.allclose(row, session_view.attention_matrix(sess, layer, head)[-1], atol=0.5e-4)


def test_two_sessions_step_independently():
    """One session's steps never change another session's view."""
    a, b = new_app(), new_app()
    click(a, "Prefill")
    click(b, "Prefill")
    for _ in range(3):
        click(a, "Step ▸")
    b.run()
    assert attention_rows(a) == PROMPT_LEN + 3
    assert attention_rows(b) == PROMPT_LEN


def test_empty_prompt_gets_a_message_not_a_traceback():
    """An empty or whitespace prompt is refused politely."""
    at = new_app()
    at.text_area[0].set_value("   \n ").run()
    click(at, "Prefill")
    assert any("empty" in w.value for w in at.warning)
    assert attention_rows(at) is None


def test_prompt_past_context_window_is_refused_with_count():
    """A prompt longer than the window says how many tokens to remove."""
    at = new_app()
    at.text_area[0].set_value("cat " * 400).run()
    click(at, "Prefill")
    assert any("remove at least" in e.value for e in at.error)


def test_html_and_emoji_prompt_works_and_stays_literal():
    """HTML and emoji tokenize; the labels carry the literal text (the browser escapes it for
    plotly and never renders it: tests/browser/test_injection.py)."""
    at = new_app()
    at.text_area[0].set_value("<b>hi</b> 😀 <script>alert(1)</script>").run()
    click(at, "Prefill")
    labels = stage(at)["explainer_attention"]["labels"]
    assert labels[:3] == ["0: <", "1: b", "2: >"]  # raw characters, one position each
    click(at, "Step ▸")
    assert not at.exception


def test_float64_mode_is_exact():
    """In float64 the equivalence badge shows a difference below 1e-12."""
    at = new_app()
    at.radio(key=decode_keys.DECODE_DTYPE).set_value("float64").run()
    click(at, "Prefill")
    click(at, "Step ▸")
    sess = at.session_state[decode_keys.DECODE_SESSION]
    assert sess.cache.dtype.itemsize == 8 and sess.max_diff[-1] < 1e-12


def test_switching_precision_after_prefill_keeps_the_request_consistent():
    """A request keeps the precision it was prefilled in; the switch applies at the next Prefill."""
    at = new_app()
    click(at, "Prefill")
    at.radio(key=decode_keys.DECODE_DTYPE).set_value("float64").run()
    click(at, "Step ▸")
    sess = at.session_state[decode_keys.DECODE_SESSION]
    assert sess.cache.dtype.itemsize == 4 and sess.max_diff[-1] < 1e-5
    click(at, "Prefill")
    assert at.session_state[decode_keys.DECODE_SESSION].cache.dtype.itemsize == 8


def test_editing_the_prompt_reuses_the_cached_prefix():
    """After prefill, appending text re-prefills only the new positions and says so."""
    at = new_app()
    click(at, "Prefill")
    click(at, "Step ▸")
    consumed = list(at.session_state[decode_keys.DECODE_SESSION].consumed)  # the prompt and the stepped token
    text = decode_settings.DEFAULT_PROMPT + " 620 yuan is within the limit."
    at.text_area[0].set_value(text).run()
    click(at, "Prefill")
    ids = encode(load_shipped_tokenizer(), text)
    shared = next(i for i, (a, b) in enumerate(zip([*consumed, -1], ids, strict=False)) if a != b)
    msg = " ".join(i.value for i in [*at.info, *at.toast])
    assert f"Cache reuse: {shared} positions kept their keys and values, {len(ids) - shared} recomputed" in msg
    # The check against a fresh prefill stands in the badge (a toast showed it behind "view more").
    sess = at.session_state[decode_keys.DECODE_SESSION]
    badge = stage(at)["explainer_panel"]["badge"]
    want = f"✓ {shared} cached positions reused, {len(ids) - shared} recomputed; vs a fresh prefill: equal within"
    assert badge["state"] == "ok" and badge["text"].startswith(want) and f"Δ = {sess.max_diff[0]:.1e}" in badge["text"]
    assert sess.passes[-1][0].shape[1] < len(sess.prompt_ids)  # only the tail was recomputed
    assert sess.max_diff[-1] < 1e-5
    assert stage(at)["explainer_attention"]["kind"] == "full"  # a new request is drawn whole


def test_changing_weights_invalidates_the_cache_with_a_reason():
    """A new weight precision recomputes everything and says why. On a fresh page the Weights
    radio shows "float" chosen (a None value showed no option selected) and Prefill runs the float
    model; after 8-bit and back, float again."""
    at = new_app()
    radio = at.radio(key=decode_keys.DECODE_WEIGHT_BITS)
    assert radio.index == 0 and radio.options[0] == "float"
    # Settings says when its choices apply inside the panel, not in a tooltip that covered the open panel.
    [settings] = [p.proto.popover for p in at.get("popover") if p.proto.popover.label == "Settings"]
    assert settings.help == "" and any("they apply at the next Prefill" in c.value for c in at.caption)
    click(at, "Prefill")
    assert at.session_state[decode_keys.DECODE_SESSION].model_key.weight_bits is None
    at.radio(key=decode_keys.DECODE_WEIGHT_BITS).set_value(8).run()
    click(at, "Prefill")
    assert any("Whole cache recomputed" in i.value and "weights changed" in i.value for i in [*at.info, *at.toast])
    # The heatmap's title names only what differs from float32 with float weights ("float32, " ran it under the
    # chart's icons at 1280).
    assert (
        stage(at)["explainer_attention"]["title"]
        == "Layer 3, head 0, prefill: every row in one parallel pass (8-bit weights)"
    )


def _cache_figure(at):
    """The "Inside the cache" figure drawn this run (its K and V heatmaps), or None."""
    return next((c for c in charts(at) if [t.get("name") for t in c["data"]] == ["keys K", "values V"]), None)


def test_inside_the_cache_shows_the_live_rows_and_that_no_earlier_one_changed():
    """Closed, nothing of it is built. Opened after Prefill and 3 Steps: the default layer 3, head 0's KV head 0,
    its K and V as P + 3 rows equal to the request's cache tensors, and the sentence that the P + 2 earlier rows
    are bit for bit what was written before Step 3; head 3 shows KV head 1 (GQA: 4 query heads, 2 KV heads)."""
    at = new_app()
    click(at, "Prefill")
    for _ in range(3):
        click(at, "Step ▸")
    assert _cache_figure(at) is None
    at.session_state[decode_keys.DECODE_CACHE_OPEN] = True
    at.run()
    sess, T = at.session_state[decode_keys.DECODE_SESSION], PROMPT_LEN + 3
    k, v = (np.array(plotly_array(t["z"]), dtype=np.float32) for t in _cache_figure(at)["data"])
    assert k.shape == v.shape == (T, 32)
    assert np.array_equal(k, sess.cache.k_cache[3][0, 0, :T].numpy())
    assert np.array_equal(v, sess.cache.v_cache[3][0, 0, :T].numpy())
    assert [s.value for s in at.success] == [
        f"No earlier vector was recomputed: the {PROMPT_LEN + 2} earlier rows, in all 4 layers and 2 KV heads, are "
        f"bit for bit what was written before Step 3 (Prefill wrote {PROMPT_LEN}, Steps 1–2 one each)."
    ]
    at.selectbox(key=decode_keys.DECODE_HEAD).set_value(3).run()
    k = np.array(plotly_array(_cache_figure(at)["data"][0]["z"]), dtype=np.float32)
    assert np.array_equal(k, sess.cache.k_cache[3][0, 1, :T].numpy())
    assert any("Head 3 reads KV head 1, shared by query heads 2–3" in c.value for c in at.caption)
    click(at, "Step ▸")
    assert len(plotly_array(_cache_figure(at)["data"][0]["z"])) == T + 1 and "before Step 4" in at.success[0].value


def test_inside_the_cache_flags_a_changed_earlier_row():
    """A stored key changed behind the request's back (position 5, layer 1): the view says so in an error, and
    never that no earlier vector was recomputed."""
    at = new_app()
    click(at, "Prefill")
    click(at, "Step ▸")
    at.session_state[decode_keys.DECODE_CACHE_OPEN] = True
    at.session_state[decode_keys.DECODE_SESSION].cache.k_cache[1][0, 0, 5, 0] += 1.0
    at.run()
    assert not at.success and at.error[0].value.startswith("An earlier row changed: position 5 in layer 1 ")


def test_the_newest_cached_rows_can_be_read_in_numbers():
    """From the back of the room (issue 58): "Read the newest rows' numbers" enlarges the last three cached rows of
    the chosen layer and KV head with each stored value written in its cell (two decimals), K above V; the numbers
    are the request's own cache tensors, and the proof that no earlier row changed still stands above them."""
    at = new_app()
    click(at, "Prefill")
    for _ in range(3):
        click(at, "Step ▸")
    at.session_state[decode_keys.DECODE_CACHE_OPEN] = True
    at.run()
    assert at.toggle(key=decode_keys.DECODE_CACHE_NUMBERS).value is False
    at.toggle(key=decode_keys.DECODE_CACHE_NUMBERS).set_value(True).run()
    sess, T = at.session_state[decode_keys.DECODE_SESSION], PROMPT_LEN + 3
    [fig] = [
        c for c in charts(at) if c["layout"].get("annotations", [{}])[0].get("text", "").startswith("keys K: the 3")
    ]
    k, v = (np.array(plotly_array(t["z"]), dtype=np.float32) for t in fig["data"])
    assert np.array_equal(k, sess.cache.k_cache[3][0, 0, T - 3 : T].numpy())
    assert np.array_equal(v, sess.cache.v_cache[3][0, 0, T - 3 : T].numpy())
    assert all(t["texttemplate"] == "%{z:.2f}" for t in fig["data"])
    assert at.success[0].value.startswith("No earlier vector was recomputed")
