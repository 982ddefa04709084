"""Two speeds on a clock: TTFT, inter-token gaps and TPOT from named timestamps."""

import streamlit as st

import ui
from core import latency as LAT
from core import state as K
from core import viz
from core.measure import measure_request_traces
from core.tokenizer import encode

tok = ui.tokenizer()
st.title("Latency on a timeline")
st.caption(
    "Ch. 30 §30.3: TTFT = t₁ − a (queueing included); TPOT = (tₙ − t₁)/(n − 1), the mean gap after the "
    "first token; one token has a TTFT but no TPOT; a request that emits nothing is an error, not a latency."
)

SOURCES = [
    "Ch. 30 example",
    "Exercise 1",
    "Edit several requests",
    "Measured: the decode page's request",
    "Measured: a batch here, with and without the KV cache",
]
source = st.radio("Trace", SOURCES, horizontal=True, key="lat.source", persist_state="session")


def row(t: LAT.RequestTrace) -> dict:
    return {
        "request": t.name,
        "arrival (ms)": t.arrival_ms,
        "prefill starts (ms)": t.prefill_start_ms,
        "tokens emitted at (ms)": ", ".join(f"{e:g}" for e in t.emissions_ms),
        "prompt positions": t.prompt_positions,
    }


if source in SOURCES[:3]:
    start = {
        SOURCES[0]: [LAT.CH30_TRACE],
        SOURCES[1]: [LAT.EXERCISE_1],
        SOURCES[2]: [
            LAT.CH30_TRACE,
            LAT.EXERCISE_1,
            LAT.RequestTrace("one token", 0, 20, (90,), 5),
            LAT.RequestTrace("failed", 0, 40, (), 6),
        ],
    }[source]
    edited = st.data_editor(
        [row(t) for t in start], num_rows="dynamic", key=f"lat.editor.{source}", hide_index=True, width="stretch"
    )
    try:
        traces = [
            LAT.RequestTrace(
                str(r["request"] or f"request {i + 1}"),
                float(r["arrival (ms)"] or 0),
                float(r["prefill starts (ms)"] or 0),
                LAT.parse_times(r["tokens emitted at (ms)"]),
                int(r["prompt positions"] or 0),
            )
            for i, r in enumerate(edited)
        ]
        summary = LAT.summarize_traces(traces)
    except (ValueError, TypeError) as err:
        st.error(f"Check the trace: {err}.")
        st.stop()
elif source == SOURCES[3]:
    sess = st.session_state.get(K.DECODE_SESSION)
    if sess is None:
        st.info("Run Prefill (and a few Steps) on the decode page first; its engine-clock trace appears here.")
        st.stop()
    traces = [LAT.RequestTrace("decode page request", 0.0, 0.0, tuple(sess.emission_times_ms()), len(sess.prompt_ids))]
    summary = LAT.summarize_traces(traces)
else:
    n_new = st.slider("Tokens per request", 2, 40, key="lat.n_new", persist_state="session")
    if st.button("Run 4 requests, each way", type="primary"):
        prompts = [
            encode(tok, p)
            for p in (
                K.DEFAULT_PROMPT,
                "The cat sat on the",
                "Ana asked: Which country is Lyon in?\nAssistant:",
                "User: Hello, my name is Ravi.",
            )
        ]
        with st.spinner("Serving the requests on this machine…"):
            st.session_state["lat.measured"] = measure_request_traces(
                ui.model(), prompts, n_new, True
            ) + measure_request_traces(ui.model(), prompts, n_new, False)
    traces = st.session_state.get("lat.measured")
    if not traces:
        st.info(
            "Press the button: four requests arrive together at 0 ms and are served one after another, first "
            "with the KV cache, then (as a second run) by recomputing the whole prefix each step."
        )
        st.stop()
    summary = LAT.summarize_traces(traces)

ui.chart(
    viz.fig_timeline(traces, "Queue, prefill, and every emitted token (label: cached positions after the pass)"),
    key="timeline",
)

per_request = []
for t in traces:
    if not t.emissions_ms:
        per_request.append(
            {
                "request": t.name,
                "TTFT (ms)": "error: no tokens",
                "gaps (ms)": "—",
                "TPOT (ms)": "—",
                "tokens/s after the first": "—",
                "full duration / tokens (ms)": "—",
            }
        )
        continue
    r = LAT.summarize_request(t.arrival_ms, t.emissions_ms)
    per_request.append(
        {
            "request": t.name,
            "TTFT (ms)": f"{r.ttft_ms:,.2f}",
            "gaps (ms)": ", ".join(f"{g:,.2f}" for g in r.gaps_ms) or "—",
            "TPOT (ms)": "missing (one token)" if r.tpot_ms is None else f"{r.tpot_ms:,.2f}",
            "tokens/s after the first": "—" if r.tokens_per_s is None else f"{r.tokens_per_s:,.1f}",
            "full duration / tokens (ms)": f"{r.full_average_ms:,.2f}",
        }
    )
st.dataframe(per_request, hide_index=True)
st.caption("“Full duration / tokens” includes the first-token wait: a different quantity from TPOT, labelled apart.")

st.subheader(f"Summary over {summary['requests/total']} request(s)")
a, b, c = st.columns(3)
a.metric("Requests", summary["requests/total"])
b.metric("Errors (no tokens; excluded below)", summary["requests/errors"])
c.metric("Output tokens", summary["tokens/output"])
fmt = lambda v: "—" if v is None else f"{v:,.2f}"  # noqa: E731
st.dataframe(
    [
        {
            "measure": name,
            "requests counted": s["count"],
            "mean (ms)": fmt(s["mean"]),
            "p50 (ms)": fmt(s["p50"]),
            "p90 (ms)": fmt(s["p90"]),
            "p99 (ms)": fmt(s["p99"]),
        }
        for name, s in (
            ("TTFT", summary["ttft_ms"]),
            ("TPOT", summary["tpot_ms"]),
            ("end to end (arrival → last token)", summary["e2e_ms"]),
        )
    ],
    hide_index=True,
)
st.caption("Percentiles interpolate linearly between sorted values (numpy's default).")
conv = LAT.conventions(traces)
st.markdown("**One trace, several conventions** — a number called “latency” is only comparable with its boundaries:")
st.dataframe(
    [
        {
            "convention": "TPOT, request-weighted",
            "value (ms)": fmt(conv["tpot_request_weighted"]),
            "what it is": "mean over requests of (tₙ − t₁)/(n − 1); excludes the first token",
        },
        {
            "convention": "inter-token latency, token-weighted",
            "value (ms)": fmt(conv["itl_token_weighted"]),
            "what it is": "every between-token gap pooled: long requests weigh more",
        },
        {
            "convention": "per-token time including the first wait",
            "value (ms)": fmt(conv["per_token_incl_first_wait"]),
            "what it is": "(tₙ − a)/n per request: exercise 5's mislabelled “TPOT”",
        },
    ],
    hide_index=True,
)
st.download_button("Download this trace as CSV", LAT.traces_to_csv(traces), "trace.csv", "text/csv")
