"""Speculative decoding: a draft proposes k tokens, the target checks them in one pass."""

import numpy as np
import streamlit as st
import torch

import ui
from core import state as K
from core import viz
from core.measure import measure_speculative
from core.speculative import Speculative, accept_or_resample, distribution
from core.tokenizer import decode, encode, token_text

tok = ui.tokenizer()
target, draft = ui.model(), ui.draft_model()
st.title("Speculative decoding")
st.caption(
    f"Ch. 19: a cheaper model proposes several tokens; the target checks them; with the proper acceptance "
    f"rule the target's sampling distribution is preserved. Target: the shipped model "
    f"({target.n_params():,} parameters). Draft: {draft.n_params():,} parameters, same tokenizer."
)

a, b, c = st.columns(3)
k = a.slider("k: tokens the draft proposes per round", 1, 8, key="spec.k", persist_state="session")
temperature = b.slider("Temperature (0 = greedy)", 0.0, 1.5, step=0.1, key="spec.t", persist_state="session")
seed = c.number_input("Seed", 0, 2**31 - 1, key="spec.seed", persist_state="session")
prompt = st.session_state.get(K.DECODE_PROMPT, K.DEFAULT_PROMPT)
prompt_ids = encode(tok, prompt)
EMPTY_PROMPT = "The prompt on the decode page is empty: type at least one character there first."
st.caption("Prompt: the one on the decode page (edit it there).")


def start() -> None:
    spec = Speculative(target, draft, k, temperature, int(seed))
    try:
        ids = prompt_ids
        if not ids or len(ids) + k >= target.cfg.block_size:
            raise ValueError("the prompt is empty or leaves no room in the context window")
        spec.start(ids)
    except ValueError as err:
        st.session_state["spec.msg"] = f"{str(err)[0].upper()}{str(err)[1:]}."
        return
    st.session_state["spec.obj"], st.session_state["spec.msg"] = spec, None


def one_round() -> None:
    spec = st.session_state.get("spec.obj")
    if spec is None:
        return
    try:
        spec.round()
    except ValueError as err:
        st.session_state["spec.msg"] = f"{str(err)[0].upper()}{str(err)[1:]}."


cols = st.columns(3)
cols[0].button("Start (prefill the target)", type="primary", on_click=start, width="stretch")
cols[1].button("Round ▸", on_click=one_round, width="stretch")
cols[2].button("Reset", on_click=lambda: st.session_state.update({"spec.obj": None, "spec.msg": None}), width="stretch")
if st.session_state.get("spec.msg"):
    st.warning(st.session_state["spec.msg"])
spec = st.session_state.get("spec.obj")
if spec is None:
    st.info(
        "Press **Start**, then **Round ▸**: each round the draft proposes k tokens and the target checks them "
        "all in one forward pass. k and temperature apply at the next Start."
    )
else:
    m = st.columns(3)
    m[0].metric("Tokens produced", spec.produced)
    m[1].metric("Target forward passes", spec.target_passes, help="Prefill + one pass per round.")
    m[2].metric("Draft forward passes", spec.draft_passes)
    st.code(decode(tok, spec.ids[spec.n_prompt :]), language=None, wrap_lines=True)
    rows = []
    for i, r in enumerate(spec.rounds, 1):
        marks = [f"{token_text(tok, t)} {'✓' if ok else '✗'}" for t, ok in zip(r.proposed, r.accepted, strict=False)]
        marks += [f"{token_text(tok, t)} (not checked)" for t in r.proposed[len(r.accepted) :]]
        rows.append(
            {
                "round": i,
                "proposed (✓ accepted, ✗ rejected)": " | ".join(marks),
                "then": f"{'bonus' if r.final_is_bonus else 'resampled'}: {token_text(tok, r.final_token)}",
                "tokens produced": r.produced,
                "target cache: before → after checking k → after rollback": (
                    f"{r.cache_before} → {r.cache_peak} → {r.cache_after}"
                ),
            }
        )
    st.dataframe(rows[::-1], hide_index=True)
    st.caption(
        "The target checks the pending token and all k proposals in one pass, so its cache briefly holds k+1 "
        "new positions; rejected ones are rolled back, exactly as if never consumed."
    )

st.subheader("Does it preserve the target's distribution?")
st.caption(
    "At the prompt's next position: draw many first tokens of a round (propose from the draft, apply the "
    "acceptance rule) and compare with the target's own distribution and with the draft's."
)
n = st.select_slider("Samples", [1_000, 5_000, 20_000], key="spec.n", persist_state="session")
sample = st.button("Sample")
if sample and not prompt_ids:
    st.warning(EMPTY_PROMPT)
elif sample:
    ids = torch.tensor([prompt_ids[-target.cfg.block_size + 1 :]])
    t_eff = temperature or 1.0
    with torch.no_grad():
        p = distribution(target(ids)[0][0, -1], t_eff)
        q = distribution(draft(ids)[0][0, -1], t_eff)
    rng = np.random.default_rng(int(seed))
    draws = []
    for _ in range(n):
        x = int(rng.choice(len(q), p=q))
        ok, repl = accept_or_resample(p, q, x, rng)
        draws.append(x if ok else repl)
    emp = np.bincount(draws, minlength=len(p)) / n
    top = np.argsort(-np.maximum(p, q))[:8]
    st.session_state["spec.dist"] = (
        t_eff,
        n,
        0.5 * np.abs(emp - p).sum(),
        0.5 * np.abs(q - p).sum(),
        [(token_text(tok, int(i)), p[i], q[i], emp[i]) for i in top],
    )
dist = st.session_state.get("spec.dist")
if dist:
    t_eff, n_s, tv, tv_q, rows = dist
    st.markdown(
        f"Temperature {t_eff:g}, {n_s:,} samples: total variation (speculative samples vs target) = "
        f"**{tv:.4f}**; (draft vs target) = **{tv_q:.4f}**. Sampling noise alone gives about "
        f"{np.sqrt(8 / n_s) / 2:.3f} at this sample size."
    )
    ui.chart(viz.fig_three_distributions(rows), key="spec.dist_fig")

st.subheader("Measured on this machine")
measure = st.button("Measure k = 1 … 8 (60 tokens each)")
if measure and not prompt_ids:
    st.warning(EMPTY_PROMPT)
elif measure:
    with st.spinner("Decoding…"):
        st.session_state["spec.speed"] = measure_speculative(
            target, draft, prompt_ids[:180], temperature=temperature, seed=int(seed)
        )
speed = st.session_state.get("spec.speed")
if speed:
    st.dataframe(
        [
            {
                "k": r["k"],
                "acceptance rate": f"{r['acceptance']:.1%}",
                "target passes per token": f"{r['target_passes_per_token']:.3f}",
                "speculative (ms)": f"{r['spec_ms']:.1f}",
                "plain target (ms)": f"{r['plain_ms']:.1f}",
                "speed-up": f"{r['speedup']:.2f}×",
            }
            for r in speed
        ],
        hide_index=True,
    )
    st.caption(
        "Speed-up > 1 means faster than plain cached decoding with the target alone; < 1 is a slow-down. "
        "It depends on the acceptance rate and on how much cheaper the draft is."
    )
