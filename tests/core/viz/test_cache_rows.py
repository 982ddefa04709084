"""Inside the cache's figure: the numbers it draws are the cache tensors' own, in their dtype; the rows the latest
pass wrote are outlined; the text alternative gives the real shape and ranges."""

import base64
import json

import numpy as np
import pytest
from plotly.utils import PlotlyJSONEncoder

from core.decode import cache_rows, session
from core.decode import settings as decode_settings
from core.decode.generate import SamplingConfig
from core.model.shipped import load_model, load_shipped_tokenizer
from core.model.tokenizer import encode, token_labels, token_text
from core.viz.cache_rows import fig_cache_rows
from core.viz.table import figure_table
from core.viz.theme import NEW_WORK, description_of

TOK = load_shipped_tokenizer()
PROMPT = encode(TOK, decode_settings.DEFAULT_PROMPT)


def _after_steps(dtype: str, steps: int):
    model = load_model(dtype)
    sess = session.start(model, PROMPT, SamplingConfig())
    for _ in range(steps):
        session.step(model, sess, check=False)
    return sess


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_figure_draws_the_cache_tensors_in_their_dtype(dtype):
    """Layer 3, KV head 1 after Prefill and 3 Steps: the K and V heatmaps' z are the cache tensors' slices,
    bit for bit, also as plotly sends them to the browser (a typed array of the cache's dtype), one row per
    cached position labelled by its token."""
    sess = _after_steps(dtype, 3)
    T = len(PROMPT) + 3
    fig = fig_cache_rows(cache_rows.head_rows(sess.cache, 3, 1), token_labels(TOK, sess.consumed), 1, "Layer 3")
    k, v = (t[0, 1, :T].numpy() for t in (sess.cache.k_cache[3], sess.cache.v_cache[3]))
    assert [t.name for t in fig.data] == ["keys K", "values V"]
    sent = json.loads(json.dumps(fig.to_plotly_json(), cls=PlotlyJSONEncoder))["data"]  # what the browser gets
    for trace, wire, want in zip(fig.data, sent, (k, v), strict=True):
        assert np.array_equal(np.asarray(trace.z), want)
        wire = wire["z"]  # a typed array: base64 bytes and their dtype
        got = np.frombuffer(base64.b64decode(wire["bdata"]), dtype=wire["dtype"]).reshape(want.shape)
        assert got.dtype == np.dtype(dtype) and np.array_equal(got, want)
        assert list(trace.y) == [f"{i}: {token_text(TOK, t).strip() or '␣'}" for i, t in enumerate(sess.consumed)]
        assert len(trace.y) == T and list(trace.x) == list(range(32))


def test_the_newest_row_is_outlined_and_labelled():
    """After a Step, one row is outlined in each panel (the new-work colour), and its label is always shown."""
    sess = _after_steps("float32", 1)
    T = len(PROMPT) + 1
    labels = token_labels(TOK, sess.consumed)
    fig = fig_cache_rows(cache_rows.head_rows(sess.cache, 0, 0), labels, 1, "Layer 0, KV head 0")
    boxes = [(s.y0, s.y1, s.line.color) for s in fig.layout.shapes]
    assert boxes == [(T - 1.5, T - 0.5, NEW_WORK)] * 2
    assert fig.layout.yaxis.ticktext[-1] == f"<b>{labels[-1]}</b>"


def test_after_prefill_every_row_is_the_passes_own():
    """After Prefill alone, the outline spans every row and the text alternative says so."""
    sess = _after_steps("float32", 0)
    T = len(PROMPT)
    fig = fig_cache_rows(cache_rows.head_rows(sess.cache, 0, 0), token_labels(TOK, sess.consumed), T, "Layer 0")
    assert [(s.y0, s.y1) for s in fig.layout.shapes] == [(-0.5, T - 0.5)] * 2
    assert description_of(fig).endswith("every row was written by this Prefill.")


def test_the_text_alternative_gives_the_real_shape_and_ranges():
    """The sentence under the figure: T × head_dim, the dtype, and K's and V's smallest and largest stored value."""
    sess = _after_steps("float64", 3)
    rows = cache_rows.head_rows(sess.cache, 2, 0)
    T = len(PROMPT) + 3
    said = description_of(fig_cache_rows(rows, token_labels(TOK, sess.consumed), 1, "Layer 2, KV head 0"))
    k, v = sess.cache.k_cache[2][0, 0, :T].numpy(), sess.cache.v_cache[2][0, 0, :T].numpy()
    assert said.startswith(f"Layer 2, KV head 0: {T} cached positions × 32 head_dim coordinates, float64; ")
    low_high = [f"{x:.3f}".replace("-", "−") for x in (k.min(), k.max(), v.min(), v.max())]
    assert "keys K from {} to {}, values V from {} to {}".format(*low_high) in said
    assert f"the {T - 1} earlier rows were stored before it." in said


def test_show_as_table_lists_every_row_of_both_panels():
    """The figure's table (its long text alternative): T rows of keys then T of values, 32 coordinates each."""
    sess = _after_steps("float32", 2)
    T = len(PROMPT) + 2
    rows = cache_rows.head_rows(sess.cache, 1, 1)
    table = figure_table(fig_cache_rows(rows, token_labels(TOK, sess.consumed), 1, "Layer 1"))
    assert [r["series"] for r in table] == ["keys K"] * T + ["values V"] * T
    assert table[T]["31"] == round(float(rows.values[0, 31]), 4)


def test_a_mismatch_of_labels_and_rows_is_refused():
    """Labels for another number of positions: a ValueError, not a figure with shifted rows."""
    sess = _after_steps("float32", 0)
    with pytest.raises(ValueError, match="cached positions"):
        fig_cache_rows(cache_rows.head_rows(sess.cache, 0, 0), ["0: a"], 1, "Layer 0")
