"""Two speeds on a clock: TTFT, inter-token gaps and TPOT from named timestamps."""

import streamlit as st

from core.cost.kv_shape import PRESETS
from core.decode import settings as decode_settings
from core.evaluate.step_times import measure_request_traces
from core.model.tokenizer import encode
from core.serving import latency as LAT
from core.serving import latency_tables
from core.serving.figure_30_1 import model_shape
from core.text import markdown_literal, plural
from core.viz.latency import fig_timeline
from ui import figures, latency_figure
from ui.decode import keys as decode_keys
from ui.lesson import keys as lesson_keys
from ui.models import model, shipped_only_note, tokenizer
from ui.page import chart, refuse, title

tok = tokenizer()
title("latency")
st.caption(
    "Ch. 30 §30.3: TTFT = t₁ − a (queueing included); TPOT = (tₙ − t₁)/(n − 1), the mean gap after the "
    "first token; one token has a TTFT but no TPOT; a request that emits nothing is an error, not a latency."
)
st.caption(
    "Ch. 30 §30.1: inference means running a trained model on inputs; reasoning means solving a problem through "
    "steps of an argument. These clocks time the stages of model inference, without mistaking elapsed time for "
    "evidence of thought: a longer wait before the first token is not the model thinking harder."
)

SOURCES = [
    *LAT.EDITABLE,
    "Measured: the decode page's request",
    "Measured: a batch here, with and without the KV cache",
]
source = st.radio("Trace", SOURCES, horizontal=True, key=latency_figure.LAT_SOURCE, persist_state="session")
if source in LAT.EDITABLE:
    key, kept = f"lat.editor.{source}", latency_figure.LATENCY_EDITS + source
    if key not in st.session_state or kept + ".base" not in st.session_state:  # a new editor, or a lesson stop
        st.session_state[kept + ".base"] = st.session_state.get(kept) or latency_tables.editor_rows(
            LAT.EDITABLE[source]
        )
    rows = st.session_state[kept + ".base"]  # fixed while the editor lives: its edits are relative to it
    # Text, not a number column: that shows a blank cell as a grey "None" (Exercise 1 gives no length).
    positions = st.column_config.TextColumn(
        help="Positions in the prompt, for the cache length after each pass; blank or 0: not given (no labels)"
    )
    edited = st.data_editor(
        rows,
        # One chapter trace: its row only (a blank row to add pushed the numbers below a projector's
        # fold in the lesson); requests are added under "Edit several requests".
        num_rows="dynamic" if len(LAT.EDITABLE[source]) > 1 else "fixed",
        key=key,
        hide_index=True,
        width="stretch",
        column_config={"prompt positions": positions},
    )
    st.session_state[kept] = edited
    try:
        traces = latency_tables.traces_from_rows(edited)
    except ValueError as err:
        refuse(err, "Check the trace: ")
        st.stop()
    shape = PRESETS["Ch. 30 two-layer example"]  # the chapter's trace takes Example 30.3's cache (§30.4)
elif source == SOURCES[3]:
    sess = st.session_state.get(decode_keys.DECODE_SESSION)
    if sess is None:
        st.info("Run Prefill (and a few Steps) on the decode page first; its engine-clock trace appears here.")
        st.stop()
    traces = [LAT.RequestTrace("decode page request", 0.0, 0.0, tuple(sess.emission_times_ms()), len(sess.prompt_ids))]
    shape = model_shape(sess.cache.cfg, sess.cache.dtype, "the decode page's model")
else:
    n_new = st.slider("Tokens per request", 2, 40, key=latency_figure.LAT_N_NEW, persist_state="session")
    shipped_only_note("latency")
    if st.button("Run 4 requests, each way", type="primary"):
        prompts = [
            encode(tok, p)
            for p in (
                decode_settings.DEFAULT_PROMPT,
                "The cat sat on the",
                "Ana asked: Which country is Lyon in?\nAssistant:",
                "User: Hello, my name is Ravi.",
            )
        ]
        with st.spinner("Serving the requests on this machine…"):
            st.session_state[latency_figure.LAT_MEASURED] = measure_request_traces(
                model(), prompts, n_new, True
            ) + measure_request_traces(model(), prompts, n_new, False)
    traces = st.session_state.get(latency_figure.LAT_MEASURED)
    if not traces:
        st.info(
            "Press the button: four requests arrive together at 0 ms and are served one after another, first "
            "with the KV cache, then (as a second run) by recomputing the whole prefix each step. Each way is "
            "warmed up first, so the first request does not pay for the server's first pass."
        )
        st.stop()
    shape = model_shape(model().cfg, model().dtype, "the shipped model")

labels = (
    "label: cached positions after the pass" if any(t.prompt_positions for t in traces) else "no prompt length given"
)
# In a lesson, the stop scrolls this into view as one: the question is about the table's numbers.
with st.container(key=lesson_keys.LESSON_FOCUS):
    chart(
        figures.figure(fig_timeline, traces, f"Queue, prefill, and every emitted token ({labels})"),
        key=latency_figure.LAT_TIMELINE_FIG,
    )
    st.dataframe(latency_tables.request_rows(traces), hide_index=True)
    for note in latency_tables.shared_times(traces)[:3]:  # markers on one another hide their labels: say it in words
        st.caption(markdown_literal(note))
    st.caption(
        "“Full duration / tokens” includes the first-token wait: a different quantity from TPOT, labelled apart."
    )
    st.caption(
        "Ch. 30 §30.3: no transport delay is assigned after these emission events; in a real user-visible trace, "
        "transport and buffering need their own timestamps (these are emission times, not arrival on a screen)."
    )
latency_figure.section(traces, shape, supplied=source in LAT.EDITABLE)

# The measured batch served the same requests twice: one summary each way, not both pooled.
ways = (
    {", with the KV cache": "(cache)", ", recomputing the prefix": "(recompute)"} if source == SOURCES[4] else {"": ""}
)
for way, tag in ways.items():
    summary = LAT.summarize_traces([t for t in traces if t.name.endswith(tag)])
    st.subheader(f"Summary over {plural(summary['requests/total'], 'request')}{way}")
    a, b, c = st.columns(3)
    a.metric("Requests", summary["requests/total"])
    b.metric("Errors (no tokens; excluded below)", summary["requests/errors"])
    c.metric("Output tokens", summary["tokens/output"])
    st.dataframe(latency_tables.summary_rows(summary), hide_index=True)
st.caption(latency_tables.itl_note(LAT.pooled_gaps(traces)))
st.markdown("**One trace, several conventions** — a number called “latency” is only comparable with its boundaries:")
by_way = {way: [t for t in traces if t.name.endswith(tag)] for way, tag in ways.items()}
st.dataframe(latency_tables.convention_rows(by_way), hide_index=True)
st.download_button("Download this trace as CSV", LAT.traces_to_csv(traces), "trace.csv", "text/csv")
