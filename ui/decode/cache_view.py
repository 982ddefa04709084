"""Inside the cache, below the decode stage: the chosen layer and KV head's stored keys and values, read from the
request's own ``KVCache`` after each pass, and the proof that no earlier row changed. Built only while its
expander is open: closed, a Step pays for one fingerprint per layer of its new row (``core.decode.session``)."""

from __future__ import annotations

import streamlit as st

from core.decode import cache_rows
from core.model.tokenizer import token_labels
from core.viz.cache_rows import fig_cache_rows, fig_newest_rows
from ui.decode import actions
from ui.decode import keys as decode_keys
from ui.page import chart
from ui.present import HIDDEN_UNTIL_REVEAL, answers_hidden, presenter_mode

# On a projector the figure at most this tall: with the sentence above it and the text under it, the open
# expander fits one 1080-px screen under the page's top bar (tests/browser/test_cache_view.py).
PRESENT_PX = 420
# Position labels at most: ~1.5 lines of the tick font apart in the plot (14 px on a laptop, 20 on a projector).
LABELS = {False: 14, True: 12}
# Ch. 19 "What the cache stores", in the chapter's words.
WHAT_IT_STORES = (
    "Each transformer layer stores its own keys and values; earlier tokens cannot attend to the appended token, so "
    "their states remain valid; old queries need not be saved (Ch. 19 “What the cache stores”): no Q here."
)


def inside_the_cache(sess, tok) -> None:
    """The expander "Inside the cache" for request ``sess`` (``tok`` names its tokens)."""
    box = st.expander(
        "Inside the cache: the stored keys and values", key=decode_keys.DECODE_CACHE_OPEN, on_change="rerun"
    )
    if not box.open:
        return
    with box:
        if answers_hidden():  # a class's display before the reveal: the rows count the cached positions
            return st.caption(HIDDEN_UNTIL_REVEAL)
        cfg = sess.cache.cfg
        layer, head = (
            st.session_state[decode_keys.DECODE_LAYER],
            actions.head_of(st.session_state[decode_keys.DECODE_HEAD]),
        )
        kv = cache_rows.kv_head_of(cfg, head)
        new = sess.passes[-1][0].shape[1]  # rows the latest pass wrote
        check = cache_rows.compare(sess.cache, sess.row_prints, sess.n_positions - new)
        said = cache_rows.proof(check, len(sess.prompt_ids), sess.reused, sess.n_steps)
        (st.success if check.unchanged else st.error)(said, icon=":material/lock:" if check.unchanged else None)
        rows = cache_rows.head_rows(sess.cache, layer, kv)
        labels, where = token_labels(tok, sess.consumed), f"Layer {layer}, KV head {kv}"
        fig = fig_cache_rows(rows, labels, new, where, max_labels=LABELS[presenter_mode()])
        chart(fig, key=decode_keys.DECODE_CACHE_ROWS, present_max_px=PRESENT_PX)
        b = sess.cache.dtype.itemsize
        st.caption(
            f"Outlined: the newest row. {cache_rows.head_note(cfg, head)} {WHAT_IT_STORES} "
            f"{cache_rows.bytes_note(cfg, b)}"
        )
        # The newest rows in numbers, large enough to read from the back of the room (the heatmap's rows are ~5 px
        # on a projector); a switch, so that the open expander still fits one screen.
        if st.toggle("Read the newest rows' numbers", key=decode_keys.DECODE_CACHE_NUMBERS):
            chart(fig_newest_rows(rows, labels), key=decode_keys.DECODE_CACHE_NEWEST, table=False)
            st.caption("The same stored rows as above, read from the same cache, each value to two decimals; the "
                       "check above compares their stored bytes.")  # fmt: skip
