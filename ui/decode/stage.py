"""Streamlit glue for the decode stage: the two browser-drawn figures (custom components that keep
their element between reruns, so a Step sends one attention row) and which payload each rerun
sends, the panels around them and what lies below the first screen. Their code is served by
``ui.static``; the predict-then-reveal question is ``ui.decode.question``.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from core.decode import session, session_view
from core.decode.equivalence import equivalence
from core.model.tokenizer import decode, token_labels, token_text
from core.serving.latency import summarize_request
from core.text import bidi_visible, plural
from core.viz import stage
from serve import step_queue
from ui import present as present_keys
from ui.decode import actions
from ui.decode import keys as decode_keys
from ui.models import active
from ui.present import HIDDEN_UNTIL_REVEAL, answers_hidden, style_sheet
from ui.static import loader

VIEW = decode_keys.DECODE_VIEW


# isolate_styles=False: in a shadow root plotly's own CSS does not reach the chart (modebar, hover).
_attention = st.components.v2.component("explainer_attention", js=loader("attention_heatmap.js"), isolate_styles=False)
_panel = st.components.v2.component("explainer_panel", js=loader("stage_panel.js"), isolate_styles=False)


# The stage must fit one screen: less empty space above the title, a smaller title, the text line
# on one row, its end (the chosen token) kept in view when the line is wider than its box (the
# sidebar open on a laptop cut «Yes» off the right): its text box is at least as wide as the line
# (short text stays left) and sits at the right end, so a longer one overflows on the left. This CSS
# is the app's own constant (never user text).
STAGE_CSS = """
[data-testid="stMainBlockContainer"] { padding-top: 4rem; padding-bottom: 3rem; }
[data-testid="stMainBlockContainer"] h1 { font-size: 2rem; padding: 0 0 0.3rem 0; }
/* A narrow main area (the sidebar open on a laptop): the title on one line, not two. */
[data-testid="stMain"] { container-type: inline-size; }
@container (max-width: 1000px) { [data-testid="stMainBlockContainer"] h1 { font-size: 1.45rem; } }
/* With the prompt box open in a main area narrower than a 1280-px screen, the title takes a row of its own:
   beside it the layer picker and Settings were cut ("Layer", "S…": a laptop with the sidebar open, 980 px;
   "Head 0 (KV head (", "Setti…" at 1,140 px). */
@container (max-width: 1200px) {
  [data-testid="stHorizontalBlock"]:has(> [data-testid="stColumn"] h1):has(.st-key-decode-prompt textarea) {
    flex-wrap: wrap; }
  [data-testid="stHorizontalBlock"]:has(.st-key-decode-prompt textarea) > [data-testid="stColumn"]:has(h1) {
    flex: 1 1 100% !important; width: 100% !important; }
  /* the row under it: the prompt box, the layer and head boxes (a whole "Head 0 (KV head 0)"), Settings */
  [data-testid="stHorizontalBlock"]:has(.st-key-decode-prompt textarea) > [data-testid="stColumn"]:nth-child(2) {
    flex: 2.2 1 0% !important; width: auto !important; }
  [data-testid="stHorizontalBlock"]:has(.st-key-decode-prompt textarea) > [data-testid="stColumn"]:nth-child(3) {
    flex: 2.3 1 0% !important; width: auto !important; }
  [data-testid="stHorizontalBlock"]:has(.st-key-decode-prompt textarea) > [data-testid="stColumn"]:nth-child(4) {
    flex: 0.9 1 0% !important; width: auto !important; } }
[data-testid="stHorizontalBlock"]:has(.st-key-stage-step) [data-testid="stCode"] pre {
  white-space: pre; overflow: hidden; display: flex; justify-content: flex-end; }
[data-testid="stHorizontalBlock"]:has(.st-key-stage-step) [data-testid="stCode"] pre > div {
  flex-shrink: 0; min-width: 100%; }
/* streamlit's "Press Ctrl+Enter to apply · n/200000" sat over the box's last line: under the box instead. */
.st-key-decode-prompt [data-testid="InputInstructions"] { position: static; text-align: right; }
.st-key-stage-question strong { font-size: 1.15em; }
.attn-desc { margin: 0.2rem 0 0 0; font-size: 0.95em; color: #31333f; }
.panel-root { font-size: var(--panel-font, 14px); color: #1f1f1f; }
.panel-counters { display: flex; gap: 1.5em; margin: 0.6em 0 0.4em 0; }
.panel-counters > div { flex: 1; }
.panel-root .metric-label { font-size: 0.95em; color: #31333f; display: inline; }
/* The counters' "per layer and head" help: a visible "?" (hover or focus shows it), not a title on the label only. */
.panel-root .metric-help { display: inline-block; margin-left: 0.35em; width: 1.25em; height: 1.25em;
  line-height: 1.25em; border-radius: 50%; border: 1px solid #5e5d5b; color: #31333f; font-size: 0.8em;
  text-align: center; cursor: help; vertical-align: 0.1em; }
.panel-root .metric-value { font-size: 2.1em; line-height: 1.15; }
.panel-root .metric-delta { display: inline-block; margin-top: 0.15em; padding: 0.05em 0.5em; border-radius: 0.8em;
  background: #ececec; color: #31333f; font-size: 0.9em; }
/* Two lines kept for the badge: when the server is busy (or the model large) it adds when it was last
   checked, a second line, which pushed the KV line 4 px off a 1080-px projector under a question. */
.panel-badge { margin: 0.5em 0; padding: 0.25em 0.6em; border-radius: 0.4em; font-size: 0.92em; min-height: 2lh; }
.panel-badge[data-state="ok"] { background: #e6f4ea; color: #0b5d1e; }
.panel-badge[data-state="bad"] { background: #fde7e9; color: #8a1c1c; }
.panel-badge[data-state="info"] { background: #f0f2f6; color: #31333f; }
.panel-kv .kv-formula { margin-bottom: 0.3em; }
.panel-kv progress { width: 100%; height: 0.6em; accent-color: #0072b2; }
.panel-kv .kv-shelf { font-size: 0.92em; color: #31333f; }
/* Beside a predict-first question (issue 37, item 5) the bars need ~195 px for five readable labels on a projector:
   the room comes from the question box (less padding) and the counters (each ratio beside its count, not under
   it), so the KV line stays on a 1080-px screen under a revealed question, under a lesson's bar too. */
[data-testid="stMain"]:has(.st-key-stage-question) .panel-counters { margin: 0.3em 0 0.2em 0; }
[data-testid="stMain"]:has(.st-key-stage-question) .panel-counters > div {
  display: flex; flex-wrap: wrap; align-items: baseline; column-gap: 0.4em; }
[data-testid="stMain"]:has(.st-key-stage-question) .panel-counters > div::after {
  content: ""; flex-basis: 100%; order: 3; }
[data-testid="stMain"]:has(.st-key-stage-question) .panel-counters .metric-value { order: 4; }
[data-testid="stMain"]:has(.st-key-stage-question) .panel-counters .metric-delta { order: 5; }
.st-key-stage-question { padding: 0.55rem 1rem !important; gap: 0.5rem !important; }
.st-key-stage-question [data-testid="stMarkdownContainer"] p { margin-bottom: 0; }
/* streamlit pulls a markdown block up by 1rem (its paragraph's margin, removed above): the question's two lines on a
   projector then ran 21 px into the class's answers drawn under them, cutting "layer"'s descender. */
.st-key-stage-question [data-testid="stColumn"] [data-testid="stMarkdownContainer"] { margin-bottom: 0; }
"""


def stage_style() -> None:
    style_sheet(STAGE_CSS)


def _ask_full() -> None:
    st.session_state[decode_keys.DECODE_FORCE_FULL] = True


def attention_payload(fig_id: str, n_rows: int, make_full, make_row) -> dict:
    """What to send this rerun: the same payload as last time if nothing changed (the component
    is then not re-run), one row if the browser holds all but the newest, else the whole figure."""
    fig, rows, payload = st.session_state.get(VIEW) or (None, -1, None)
    force = st.session_state.pop(decode_keys.DECODE_FORCE_FULL, False)
    if not force and fig == fig_id and rows == n_rows:
        return payload
    payload = make_row() if (not force and fig == fig_id and rows == n_rows - 1) else make_full()
    st.session_state[VIEW] = (fig_id, n_rows, payload)
    return payload


def attention(payload: dict) -> None:
    _attention(data=payload, key=decode_keys.DECODE_ATTENTION, on_need_full_change=_ask_full)


def panel(payload: dict) -> None:
    _panel(data=payload, key=decode_keys.DECODE_PANEL)


def forget_view() -> None:
    """The page was left: its figure element is gone, so the next drawing must be whole."""
    st.session_state.pop(VIEW, None)


STAGE_STYLE = stage.StageStyle(font=14, panel_font=14, bars_height=280)  # 14-px text (issue 37); bars 20 px shorter
# The next-token bars beside a question: 5 bars, readable at presenter size; on a laptop 140 px (and a wider
# panel, app_pages/decode.py) kept the KV line on a 1280 × 800 screen under a lesson's bar.
# On a projector the five bars' labels ran together at 150 px (issue 37, item 5): at 195 px their rows are 26 px
# apart for 21-px labels. The room is the question box's padding and the counters' ratio beside its count
# (STAGE_CSS): under a revealed question the KV line ends at 1,017 px of 1,080 (1,065 at 150 px before), and under
# a lesson's bar the stage spans 859 px of the 885 below it (908 before).
COMPACT_BARS_PX = {True: 195, False: 140}
# The question row across the stage takes this from the heatmap: presenter mode, or a laptop under a lesson's bar
# (its row is shorter; 220 px left a 1280 × 800 heatmap four rows and a broken colour bar).
QUESTION_ROW_PX = {True: 220, False: 130}


# ---- the stage's panels --------------------------------------------------------------------------


def heatmap_panel(sess, tok, layer: int, head, head_label: str, present: bool, compact: bool = False) -> None:
    """The attention heatmap of ``layer``/``head`` (None: mean over heads) for request ``sess``;
    ``compact``: shorter, under a question row across the stage (predict first, in presenter mode or
    under a lesson's bar)."""
    style = stage.StageStyle.presenter() if present else STAGE_STYLE
    if compact:
        style = dataclasses.replace(style, height=style.height - QUESTION_ROW_PX[present])
    T, new = sess.n_positions, sess.passes[-1][0].shape[1]
    labels = token_labels(tok, sess.consumed)
    where = f"Layer {layer}, {head_label}, " + ("prefill" if sess.n_steps == 0 else f"step {sess.n_steps}")
    title = f"{where}: " + (
        "every row in one parallel pass" if sess.n_steps == 0 else "one new row, the rest from the cache"
    )
    if not sess.model_key.plain:  # say when the class is not looking at the float32 model
        title += f" ({sess.model_key.change})"
    if sess.model_key.source is not None:  # a checkpoint from the sidebar: name it (presenting hides the card)
        title = f"{active().name} · {title}"
    hidden = answers_hidden()  # the display before a lesson stop's reveal: no "62 positions cached"
    # another size, or the answer lines shown or hidden: drawn anew
    fig_id = f"{sess.uid}:{layer}:{head}:{int(present)}:{int(compact)}:{int(hidden)}"

    def said(r) -> str:
        return f"{where}: {HIDDEN_UNTIL_REVEAL}" if hidden else stage.describe(where, r, labels)

    def full():
        att = session_view.attention_matrix(sess, layer, head)
        return stage.heatmap_full(att, labels, new, title, fig_id, style, said(att[-1]))

    def row():
        r = session_view.pass_rows(sess.passes[-1], layer, head)[-1][:T]
        return stage.heatmap_row(r, labels, title, fig_id, style, said(r))

    step = {"step": sess.n_steps}  # the decode step drawn, as data
    attention(attention_payload(fig_id, T, lambda: full() | step, lambda: row() | step))


def right_panel(sess, tok, model, present: bool, compact: bool = False) -> None:
    """Next-token bars, work counter, equivalence badge and KV line: one browser-drawn element."""
    style = stage.StageStyle.presenter() if present else STAGE_STYLE
    if compact:  # a question is on screen too: five bars (as many as the question offers) in less height
        # … and a panel font between the heatmap's and the presenter panel's (20 px ran the KV line
        # 21 px past a 1080 px screen under a long question).
        # Beside a question the panel keeps 13-px text on a laptop (14 px elsewhere): at 14 px a revealed question
        # under a lesson's bar pushed the KV line 28 px below a 1280 × 800 screen.
        font = min(style.panel_font, 18 if present else 13)
        style = dataclasses.replace(style, bars_height=COMPACT_BARS_PX[present], panel_font=font)
    rows = [(i, token_text(tok, i), p) for i, p in session_view.next_token_table(sess, 5 if compact else 10)]
    if sess.pending not in [r[0] for r in rows]:
        rows.append((sess.pending, token_text(tok, sess.pending), 0.0))
    how = "greedy: the most likely" if sess.sampling.strategy == "greedy" else "sampled"
    bars = stage.next_token_bars(rows, sess.pending, f"Next token ({how})", style)
    cfg = model.cfg
    last = session.last_check(sess)
    eq = None if last is None else equivalence(last[1], last[2], model.dtype, cfg.n_layer)
    why = session.check_spacing(model, sess, queued=step_queue.waiting())
    badge = stage.badge_text(eq, None if last is None else last[0], sess.n_steps, session.CHECK_EVERY, why)
    if sess.n_steps == 0 and sess.reused:  # a Prefill that kept cached positions was checked against a fresh one
        fresh = equivalence(sess.max_diff[0], sess.max_logit[0], model.dtype, cfg.n_layer)
        badge = stage.reuse_badge(fresh, sess.reused, len(sess.prompt_ids) - sess.reused)
    b = model.dtype.itemsize
    kv = stage.kv_line(
        cfg.n_layer, cfg.n_kv_head, cfg.head_dim, sess.n_positions, b, sess.cache.nbytes, sess.cache.capacity
    )
    if answers_hidden():  # the display before a lesson stop's reveal: the cache's size states the answer
        kv = {**kv, "formula": f"KV cache: {HIDDEN_UNTIL_REVEAL}", "shelf": "", "positions": 0}
    scores = (sess.scores_cached, sess.scores_naive)
    panel(stage.panel(bars, scores, cfg.n_layer * cfg.n_head, badge, kv, style))


def message(sess) -> None:
    """The last action's message, once. Above a running stage it floats (a toast) so the figures do
    not jump, until closed if it is about a shared link (level "link"); without a stage it stands
    in the page."""
    message, st.session_state[decode_keys.DECODE_MESSAGE] = st.session_state[decode_keys.DECODE_MESSAGE], None
    if not message:
        return
    level, text = message
    if sess is not None and level in ("info", "link"):
        # A shared link's note stays until closed: the teacher may look away while the link replays.
        st.toast(text, icon=":material/info:", duration="infinite" if level == "link" else "long")
    else:
        getattr(st, "info" if level == "link" else level)(text)


def text_so_far(sess, tok, width: int) -> None:
    """One line: the end of the text so far (new lines as ⏎), the pending token (chosen, not yet
    consumed) in guillemets «…» (angle brackets ⟨…⟩ read as parentheses in the code font:
    "Mira.(<|endoftext|>)"). The whole text is below the stage."""
    text = bidi_visible(decode(tok, sess.consumed).replace("\n", "⏎"))
    pending = f"«{token_text(tok, sess.pending)}»"
    width = max(width - len(pending), 10)  # the chosen token is shown whole (e.g. «<|endoftext|>»)
    tail = text if len(text) <= width else "…" + text[-(width - 1) :]
    # No container of its own (every element is resent per Step): the CSS finds it beside Step.
    st.code(tail + pending, language=None)


def stage_tables(sess, tok) -> None:
    """The stage's two figures as tables, the same numbers they draw (their text alternative's long form)."""
    layer, head = st.session_state[decode_keys.DECODE_LAYER], st.session_state[decode_keys.DECODE_HEAD]
    row = session_view.pass_rows(sess.passes[-1], layer, actions.head_of(head))[-1][: sess.n_positions]
    rows = [(i, token_text(tok, i), p) for i, p in session_view.next_token_table(sess, 10)]
    a, b = st.columns([3, 2])
    a.caption(f"Layer {layer}, {actions.head_label(head)}: the newest row's attention")
    height = (
        520 if st.session_state[present_keys.PRESENT] else 300
    )  # ~12 rows at either size (presenter fonts are larger)
    a.dataframe(stage.row_table(row, token_labels(tok, sess.consumed)), hide_index=True, height=height)
    b.caption("Next token")
    b.dataframe(stage.bars_table(rows, sess.pending), hide_index=True)


def below_stage(sess, tok) -> None:
    """Below the first screen: the whole text and the request's status; the share link and this
    request's clock inside an expander that runs only when open (a Step sends less)."""
    with st.container(key=decode_keys.STAGE_FULLTEXT):
        st.code(bidi_visible(decode(tok, sess.consumed + [sess.pending])), language=None, wrap_lines=True)
    st.caption(
        f"The whole text · prompt {len(sess.prompt_ids)} tokens · decode steps {sess.n_steps} · "
        f"{sess.model_key.label} · the last token is chosen but not yet consumed. Buffers allocated for the "
        f"whole window: {sess.cache.allocated_bytes:,} B."
    )
    if st.session_state[decode_keys.DECODE_TABLES]:  # its switch is in the controls row, outside the stage
        stage_tables(sess, tok)
    more = st.expander("Share this request · its clock (TTFT, TPOT)", key=decode_keys.DECODE_MORE, on_change="rerun")
    if more.open:
        with more:
            _share_and_clock(sess, tok)


def _share_and_clock(sess, tok) -> None:
    a, b = st.columns([3, 2], vertical_alignment="center")
    a.button(
        "Put a link to this request in the address bar",
        type="tertiary",
        icon=":material/link:",
        on_click=actions.write_link,
    )
    b.checkbox("The link opens in presenter mode", key=decode_keys.LINK_PRESENT, persist_state="session")
    written = st.session_state.get(decode_keys.DECODE_LINK_WRITTEN)
    if written is not None and written[:2] == (sess.uid, sess.n_steps):  # the link still shows this request
        st.caption(
            f"The address bar now holds the link to this request at step {sess.n_steps}: copy it from there "
            "and send it (students open the same prompt, settings and steps)."
            + (
                f" This request's Prefill kept {plural(sess.reused, 'cached position')} from the request before "
                "it, so its work counter counts only the new work; the link prefills from scratch, so the "
                "students' counter counts those positions too (more scores and a smaller ratio; the same text)."
                if sess.reused
                else ""
            )
            + " Its part after the page's address:"
        )
        st.code(written[2], language=None, wrap_lines=True)
    st.markdown("**This request's clock (measured here)**")
    lat = summarize_request(0.0, sess.emission_times_ms())
    tpot = "missing (one token: no gap yet)" if lat.tpot_ms is None else f"{lat.tpot_ms:.2f} ms"
    st.markdown(
        f"TTFT = **{lat.ttft_ms:.2f} ms** (prefill of {len(sess.prompt_ids)} positions + choosing token 1) · "
        f"TPOT = **{tpot}**" + ("" if lat.tokens_per_s is None else f" ({lat.tokens_per_s:,.0f} tokens/s)")
    )
    st.caption(
        "Engine clock: arrival = start of prefill; each gap is one decode step's compute (forward pass + "
        "selection), not the time you took to click. Ch. 30 §30.3 definitions."
    )
    if st.toggle("Show every token's time", key=decode_keys.DECODE_SHOW_CLOCK):
        times = sess.emission_times_ms()
        st.dataframe(
            {
                "output token": list(range(1, len(sess.outputs) + 1)),
                "text": [token_text(tok, t) for t in sess.outputs],
                "emitted at (ms)": [f"{t:.3f}" for t in times],
                "gap since previous token (ms)": ["— (first token)", *[f"{g:.3f}" for g in lat.gaps_ms]],
                "cached positions after the pass": [len(sess.prompt_ids) + i for i in range(len(sess.outputs))],
            },
            hide_index=True,
            height=min(400, 38 + 35 * len(times)),
        )
