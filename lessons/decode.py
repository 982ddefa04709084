"""Prefill & decode: type a prompt, prefill, then step one token at a time."""

import streamlit as st

import ui
from core import session as S
from core import state as K
from core import viz
from core.cost import kv_cache_bytes_for
from core.decode import SamplingConfig
from core.latency import summarize_request
from core.tokenizer import decode, encode, end_token_id, token_labels, token_text

tok = ui.tokenizer()
st.title("Prefill, then decode one token at a time")
st.caption(
    "Prefill reads the whole prompt in one parallel pass and fills the KV cache; each decode step "
    "consumes one chosen token, computes one new attention row and reads every earlier key and value "
    "from the cache (Ch. 19 “Two speeds, one model”, Ch. 30 §30.2)."
)

left, right = st.columns([3, 2])
with left:
    st.text_area(
        "Prompt",
        key=K.DECODE_PROMPT,
        persist_state="session",
        height=130,
        max_chars=K.MAX_PROMPT_CHARS,
        help="Any text: it is tokenized byte by byte if needed.",
    )
with right, st.popover("Sampling · precision · weights", width="stretch", help="Changes apply at the next prefill."):
    kw = {"persist_state": "session"}
    st.radio(
        "Precision",
        ["float32", "float64"],
        key=K.DECODE_DTYPE,
        horizontal=True,
        help="float64 makes cached and recomputed logits agree to about 1e-15.",
        **kw,
    )
    st.radio(
        "Weights",
        [None, 8, 4, 3],
        key=K.DECODE_WEIGHT_BITS,
        horizontal=True,
        format_func=lambda b: "float" if b is None else f"{b}-bit",
        help="Weight-only quantization of every block projection, groups of 32 (see “Quantizing the model”).",
        **kw,
    )
    st.radio(
        "Choose the next token by",
        ["greedy", "sample"],
        key=K.DECODE_STRATEGY,
        horizontal=True,
        **kw,
    )
    st.slider(
        "Temperature",
        0.1,
        2.0,
        step=0.1,
        key=K.DECODE_TEMPERATURE,
        disabled=st.session_state[K.DECODE_STRATEGY] == "greedy",
        **kw,
    )
    st.slider(
        "Top-k (0 = all tokens)",
        0,
        100,
        key=K.DECODE_TOP_K,
        disabled=st.session_state[K.DECODE_STRATEGY] == "greedy",
        **kw,
    )
    st.number_input("Seed", 0, 2**31 - 1, step=1, key=K.DECODE_SEED, **kw)


def do_prefill() -> None:
    st.session_state[K.DECODE_PLAYING] = False
    text = st.session_state[K.DECODE_PROMPT]
    if not text.strip():
        st.session_state[K.DECODE_MESSAGE] = ("warning", "The prompt is empty: type a few words first.")
        return
    sampling = SamplingConfig(
        st.session_state[K.DECODE_STRATEGY],
        st.session_state[K.DECODE_TEMPERATURE],
        st.session_state[K.DECODE_TOP_K],
        st.session_state[K.DECODE_SEED],
    )
    key = (st.session_state[K.DECODE_DTYPE], st.session_state[K.DECODE_WEIGHT_BITS])
    old = st.session_state[K.DECODE_SESSION]
    try:
        sess, reuse = S.restart(ui.model_for(key), old, encode(tok, text), sampling, key)
    except ValueError as err:
        st.session_state[K.DECODE_MESSAGE] = ("error", f"Prefill refused: {err}.")
        return
    st.session_state[K.DECODE_SESSION], st.session_state[K.DECODE_MESSAGE] = sess, None
    if old is not None:  # say what the cache kept (Ch. 30 §30.4: cache validity)
        st.session_state[K.DECODE_MESSAGE] = (
            "info",
            (
                f"Cache reuse: {reuse.reused} position(s) kept their cached keys and values ({reuse.reason}); "
                f"{reuse.recomputed} recomputed in one pass (outlined). Max |logit − a fresh prefill| = "
                f"{reuse.max_diff_vs_fresh:.1e}."
            )
            if reuse.reused
            else f"Whole cache recomputed: {reuse.reason}.",
        )


def model_of(sess: S.DecodeSession):
    """The model this request was prefilled with, whatever the widgets say now."""
    return ui.model_for(sess.model_key)


def do_step() -> None:
    sess = st.session_state[K.DECODE_SESSION]
    reason = S.step_block_reason(sess, end_token_id(tok)) if sess else "Run prefill first."
    if reason:
        st.session_state[K.DECODE_PLAYING] = False
        st.session_state[K.DECODE_MESSAGE] = ("info", reason)
        return
    S.step(model_of(sess), sess)


def do_reset() -> None:
    st.session_state[K.DECODE_SESSION], st.session_state[K.DECODE_MESSAGE] = None, None
    st.session_state[K.DECODE_PLAYING] = False


def toggle_play() -> None:
    st.session_state[K.DECODE_PLAYING] = not st.session_state[K.DECODE_PLAYING]
    st.session_state[K.DECODE_MESSAGE] = None


timer = (st.session_state[K.DECODE_PLAYING], st.session_state[K.DECODE_PACE])


def replay_link() -> None:
    """A shared link with ?step=N: prefill and replay N steps once, so the view matches."""
    steps = st.session_state.pop(K.URL_STEP, None)
    if steps is None:
        return
    do_prefill()
    for _ in range(steps):
        if st.session_state[K.DECODE_SESSION] is None or st.session_state[K.DECODE_MESSAGE]:
            break
        do_step()


def write_link() -> None:
    """Put a shareable link to this exact view (prompt, seed, step, layer, head …) in the address bar.

    Only on request: writing query parameters reruns the whole page, which would race the stepping."""
    sess = st.session_state[K.DECODE_SESSION]
    st.query_params.from_dict(K.url_params_for(dict(st.session_state), None if sess is None else sess.n_steps))


@st.fragment(run_every=timer[1] if timer[0] else None)
def stepper() -> None:
    replay_link()
    if st.session_state[K.DECODE_PLAYING]:
        do_step()
    if (st.session_state[K.DECODE_PLAYING], st.session_state[K.DECODE_PACE]) != timer:
        st.rerun()  # Play started, stopped or changed pace: the fragment's timer is set by a full run
    playing = st.session_state[K.DECODE_PLAYING]
    c = st.columns([1, 1, 1, 1, 2])
    c[0].button("Prefill", type="primary", on_click=do_prefill, width="stretch", shortcut="P")
    sess = st.session_state[K.DECODE_SESSION]
    c[1].button(
        "Step ▸",
        on_click=do_step,
        disabled=sess is None,
        width="stretch",
        shortcut="Right",
        help="Keyboard: → (a presenter clicker's ‘next’ works too if it sends →).",
    )
    if c[2].button("Pause ❚❚" if playing else "Play ▶", disabled=sess is None, width="stretch", shortcut="K"):
        toggle_play()
        st.rerun()
    c[3].button("Reset", on_click=do_reset, width="stretch")
    c[4].slider(
        "Play pace (seconds per token)",
        0.2,
        2.0,
        step=0.1,
        key=K.DECODE_PACE,
        persist_state="session",
    )
    message, st.session_state[K.DECODE_MESSAGE] = st.session_state[K.DECODE_MESSAGE], None  # shown once
    if message:
        getattr(st, message[0])(message[1])
    if sess is None:
        st.info(
            "Press **Prefill** to run the prompt through the model. The whole lower triangle of attention "
            "appears at once; then each **Step** adds one row."
        )
        return
    show_request(sess)


def show_request(sess: S.DecodeSession) -> None:
    model = model_of(sess)
    cfg = model.cfg
    if encode(tok, st.session_state[K.DECODE_PROMPT]) != sess.prompt_ids:
        st.caption("✎ The prompt box has changed since this prefill; press Prefill to start over with it.")
    wanted = (st.session_state[K.DECODE_DTYPE], st.session_state[K.DECODE_WEIGHT_BITS])
    if wanted != sess.model_key:
        st.caption("⚙ The precision or weights you picked apply at the next Prefill; this request keeps its own.")
    n_prompt, pending = len(sess.prompt_ids), sess.pending
    st.markdown(
        f"**Prompt:** {n_prompt} tokens · **decode steps:** {sess.n_steps} · "
        f"**KV cache:** {sess.n_positions} of {cfg.block_size} positions · "
        f"**precision:** {S.dtype_name(sess)}"
        + ("" if sess.model_key[1] is None else f" · **weights:** {sess.model_key[1]}-bit (groups of 32)")
    )
    st.button(
        "Put a link to this view in the address bar",
        type="tertiary",
        icon=":material/link:",
        on_click=write_link,
        help="Prompt, sampling, seed, step, layer and head go into the URL: opening it replays this exact view.",
    )
    st.caption("Text so far (prompt, then the tokens chosen; the last one is chosen but not yet consumed):")
    st.code(decode(tok, sess.consumed + [pending]), language=None, wrap_lines=True)
    pick_layer, pick_head = st.columns(2)
    layer = pick_layer.selectbox("Layer", range(cfg.n_layer), key=K.DECODE_LAYER, persist_state="session")
    group = cfg.n_head // cfg.n_kv_head
    head = pick_head.selectbox(
        "Head",
        ["mean over heads", *range(cfg.n_head)],
        key=K.DECODE_HEAD,
        persist_state="session",
        format_func=lambda h: h if isinstance(h, str) else f"query head {h} (reads KV head {h // group})",
    )
    att = S.attention_matrix(sess, layer, None if isinstance(head, str) else head)
    title = f"Layer {layer} · {head if isinstance(head, str) else f'head {head}'} — " + (
        "prefill: every row computed in one parallel pass"
        if sess.n_steps == 0
        else f"decode step {sess.n_steps}: one new row, the rest read from the cache"
    )
    ui.chart(
        viz.fig_attention(att, token_labels(tok, sess.consumed), sess.passes[-1][0].shape[1], title), key="attention"
    )
    rows = [(i, token_text(tok, i), p) for i, p in S.next_token_table(sess, 10)]
    if pending not in [r[0] for r in rows]:
        rows.append((pending, token_text(tok, pending), 0.0))
    probs_col, work_col = st.columns([3, 2])
    ui.chart_in(probs_col, viz.fig_next_token(rows, pending, "Next token: the 10 most likely"), key="next_token")
    with work_col:
        show_counters(sess, cfg, model)
    show_cache(sess, cfg, model)
    show_latency(sess)


def show_counters(sess: S.DecodeSession, cfg, model) -> None:
    a, b, c = st.container(), st.container(), st.container()
    lh = cfg.n_layer * cfg.n_head
    a.metric(
        "Query-key scores with the KV cache",
        f"{sess.scores_cached:,}",
        help=f"Per layer and head; × {lh} (layers × heads) = {sess.scores_cached * lh:,} in the model.",
    )
    b.metric(
        "… by full-prefix recompute",
        f"{sess.scores_naive:,}",
        delta=f"{sess.scores_naive / sess.scores_cached:.2f}× the cached work",
        delta_color="off",
        delta_arrow="off",
        help="Every step reruns the whole prefix: T(T+1)/2 causal scores per layer and head.",
    )
    tol = 1e-12 if model.dtype.itemsize == 8 else 1e-5
    diff = sess.max_diff[-1]
    if sess.n_steps == 0:
        c.metric(
            "max |cached − recomputed| logit",
            "—",
            help="Prefill is itself the full pass: nothing to compare "
            "yet. From the first Step on, the whole prefix is recomputed without the cache and compared.",
        )
    else:
        c.metric(
            "max |cached − recomputed| logit, this step",
            f"{diff:.1e}",
            delta_arrow="off",
            delta="equal within tolerance" if diff <= tol else "differs!",
            delta_color="normal" if diff <= tol else "inverse",
            help=f"Tolerance for {model.dtype}: {tol:g}.",
        )


def show_cache(sess: S.DecodeSession, cfg, model) -> None:
    b_el = model.dtype.itemsize
    T = sess.n_positions
    formula = kv_cache_bytes_for(cfg, T, b_el)
    st.subheader("The KV cache shelf")
    shelf = viz.fig_kv_shelf(T, cfg.block_size, token_text(tok, sess.pending), kv_cache_bytes_for(cfg, 1, b_el))
    ui.chart(shelf, key="shelf")
    st.markdown(
        f"M = 2·B·L·T·H_kv·d·b = 2 · 1 · {cfg.n_layer} · {T} · {cfg.n_kv_head} · {cfg.head_dim} · {b_el} = "
        f"**{formula:,} bytes** ({formula / 2**10:,.1f} KiB) — measured from the cache tensors: "
        f"**{sess.cache.nbytes:,} bytes**; buffers allocated for the full window: {sess.cache.allocated_bytes:,} bytes."
    )


def show_latency(sess: S.DecodeSession) -> None:
    st.subheader("This request's clock (measured here)")
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


stepper()
