"""What the room sees of the engine (``serve.engine_state``'s state, from the pulse): the latest step's batch and
budget, KV blocks, the class's throughput and ITL, and every recent request's timeline drawn as the latency page
draws it (``core.viz.latency.fig_timeline``). No request's text: labels only."""

from __future__ import annotations

import streamlit as st

from core.serving.latency import RequestTrace
from core.text import plural
from core.viz.latency import fig_timeline
from ui import tables
from ui.page import chart

TIMELINE_ROWS = 12  # the latest requests with a token drawn on the timeline (a projector's height)


def _ms(v) -> str:
    return "–" if v is None else f"{v:,.1f} ms"


def headline(state: dict) -> None:
    """Four numbers in one row: requests running and waiting, KV blocks, throughput, ITL p50 / p95."""
    b, itl = state["blocks"], state["itl"]
    cols = st.columns(4)
    cols[0].metric("Requests running · waiting", f"{state['running']} · {state['waiting']}")
    cols[1].metric(
        "KV blocks in use",
        f"{b['used']:,} of {b['total']:,}",
        help=f"Blocks of {b['block_size']} positions; {b['free']:,} free. {b['cached']:,} whole blocks can be found by "
        "the prefix cache: a free one among them is read again on a hit, and reused for other tokens only when no "
        "empty block is left.",
    )
    cols[2].metric("Throughput (last 30 s)", f"{state['throughput']:,.0f} tokens/s")
    cols[3].metric(
        "Gaps between tokens (ITL) p50 · p95", f"{_ms(itl['p50'])} · {_ms(itl['p95'])}",
        help=f"Over the {plural(itl['n'], 'gap')} of the requests that ended in the last 30 s.",
    )  # fmt: skip


def last_step(state: dict) -> None:
    """The latest engine step: who was in its one pass, a prefill chunk or a decode token each, of the budget."""
    if not state["steps"]:
        return st.info("No step yet: the engine starts when the first request is sent.", icon=":material/info:")
    h = state["steps"][-1]
    s = state["settings"]
    used = f"{h['tokens']} of {h['budget']} tokens" if s["chunked_prefill"] else f"{h['tokens']} tokens"
    st.markdown(f"**Step {h['step']:,}**: {plural(len(h['rows']), 'request')} in one pass, {used}, {h['ms']:.1f} ms.")
    if s["chunked_prefill"]:
        st.progress(min(1.0, h["tokens"] / h["budget"]), text=f"Token budget used: {h['tokens']} of {h['budget']}")
    st.table(tables.arrow({"request": [who for who, _, _ in h["rows"]],
                           "work": [f"{kind} ({plural(n, 'token')})" for _, kind, n in h["rows"]]}),
             hide_index=True)  # fmt: skip


def hits(state: dict) -> None:
    """Prefix-cache hits per request (positions read instead of computed)."""
    shown = state["requests"][-TIMELINE_ROWS:]
    if shown:
        st.table(tables.arrow({
            "request": [r["label"] for r in shown],
            "prompt (tokens)": [r["prompt_tokens"] for r in shown],
            "read from the prefix cache (positions)": [r["hit_tokens"] for r in shown],
            "preempted (times)": [r["preemptions"] for r in shown],
        }), hide_index=True)  # fmt: skip


def timeline(state: dict, key: str) -> None:
    """The latest requests with a token, on one clock (ms since the first of them was sent)."""
    done = [r for r in state["requests"] if r["token_ms"] and r["sent_ms"] is not None][-TIMELINE_ROWS:]
    if not done:
        return st.caption("Each request's queue, prefill and tokens appear here once it has its first token.")
    traces = [
        RequestTrace(
            r["label"],
            r["sent_ms"],
            r["sent_ms"] + (r["admitted_ms"] or 0.0),
            tuple(r["sent_ms"] + ms for ms in r["token_ms"]),
            r["prompt_tokens"] or 0,
        )
        for r in done
    ]
    chart(fig_timeline(traces, "Requests on the engine's clock"), key=key, present_max_px=700)


def batch_view(state: dict | None, key: str) -> None:
    """Everything above, or a sentence while the engine has served nothing."""
    if not state or state.get("empty"):
        return st.info(
            "The engine has served nothing in this room yet: press Send, or add simulated classmates.",
            icon=":material/info:",
        )
    headline(state)
    left, right = st.columns((2, 3))
    with left:
        last_step(state)
    with right:
        timeline(state, key)
    hits(state)
