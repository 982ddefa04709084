"""Speculative decoding: a draft proposes k tokens, the target checks them in one pass."""

import streamlit as st

from core.decode import settings as decode_settings
from core.evaluate.speedups import measure_speculative
from core.model.tokenizer import decode, encode, end_token_id, token_text
from core.serving.speculative import Speculative, check_prompt
from core.text import markdown_literal
from core.viz.speculative import PROPOSED, speculative_rounds
from ui import models, speculative, tables
from ui.decode import keys as decode_keys
from ui.page import refuse, reset, set_message, show_message, title
from ui.present import beside, button_rows, presenter_mode

tok, card = models.chosen_tokenizer(), models.chosen_card()
target, draft, draft_name = models.chosen_draft()
title("speculative")
st.caption(
    "Ch. 19: a cheaper model proposes several tokens; the target checks them; with the proper acceptance "
    "rule the target's sampling distribution is preserved. Target: "
    + f"{'the shipped model' if card is None else card.name} ({target.n_params():,} parameters)."
    + ("" if draft is None else f" Draft: {draft_name} ({draft.n_params():,} parameters), same vocabulary.")
)
if draft is None:
    st.info(
        f"No draft for {card.name}: speculative decoding needs a smaller model with the same tokenizer (every token "
        "the same id) and output size, e.g. SmolLM2-135M drafting SmolLM2-360M, and none was found on this machine "
        "(the Hugging Face cache and --models-dir). Put one there, or pick the shipped model in the sidebar."
    )
    st.stop()

present = presenter_mode()
# Presenter mode: the rounds' controls left, the distribution check right, on the first screen (its chart came at
# ~1,000 px, after a click: it is sampled on opening the page), the rounds under both; a laptop keeps its order.
controls, figure = beside((2, 3))
rounds = st.container() if present else controls
a, b, c = (controls, controls, controls) if present else controls.columns(3)
k = a.slider("k: tokens the draft proposes per round", 1, 8, key=speculative.SPEC_K, persist_state="session")
temperature = b.slider("Temperature (0 = greedy)", 0.0, 1.5, step=0.1, key=speculative.SPEC_T, persist_state="session")
seed = c.number_input("Seed", 0, 2**31 - 1, key=speculative.SPEC_SEED, persist_state="session")
prompt = st.session_state.get(decode_keys.DECODE_PROMPT, decode_settings.DEFAULT_PROMPT)
prompt_ids = encode(tok, prompt) if prompt.strip() else []
controls.caption("Prompt: the one on the decode page (edit it there).")


def start() -> None:
    try:
        check_prompt(prompt_ids, k, target.cfg.block_size)
        spec = Speculative(target, draft, k, temperature, int(seed))
        spec.start(prompt_ids)
    except ValueError as err:
        set_message(speculative.SPEC_MSG, err)
        return
    st.session_state[speculative.SPEC_OBJ], st.session_state[speculative.SPEC_MSG] = spec, None


def one_round() -> None:
    spec = st.session_state.get(speculative.SPEC_OBJ)
    try:
        if spec is None:
            raise ValueError("press Start first: it prefills the target with the prompt")
        spec.round()
    except ValueError as err:
        set_message(speculative.SPEC_MSG, err)


with controls:
    buttons = [
        ("Start (prefill the target)", start),
        ("Round ▸", one_round),
        ("Reset", reset(speculative.DEFAULTS, speculative.SPEC_OBJ, speculative.SPEC_MSG)),
    ]
    button_rows(buttons, 2 if present else 3)
    show_message(speculative.SPEC_MSG)
spec = st.session_state.get(speculative.SPEC_OBJ)
if spec is None:
    controls.info(
        "Press **Start**, then **Round ▸**: each round the draft proposes k tokens and the target checks them "
        "all in one forward pass. k and temperature apply at the next Start."
    )
else:
    with rounds:
        m = st.columns(3)
        m[0].metric("Tokens produced", spec.produced)
        m[1].metric("Target forward passes", spec.target_passes, help="Prefill + one pass per round.")
        m[2].metric("Draft forward passes", spec.draft_passes)
        st.code(decode(tok, spec.ids[spec.n_prompt :]), language=None, wrap_lines=True)
        if (end := end_token_id(tok)) is not None and end in spec.ids[spec.n_prompt :]:  # as the decode page says
            end_text = markdown_literal(token_text(tok, end))  # an end token may hold markdown: shown as spelled
            st.caption(f"{end_text} was produced: a server would have stopped there. Rounds go on past it.")
        rows = speculative_rounds(spec.rounds, lambda t: token_text(tok, t), greedy=spec.temperature == 0)
        st.dataframe(rows[::-1], hide_index=True, column_config=tables.widths([PROPOSED]))
        st.caption(
            "The target checks the pending token and all k proposals in one pass, so its cache briefly holds k+1 "
            "new positions; rejected ones are rolled back, exactly as if never consumed."
        )

speculative.distribution_section(target, draft, prompt_ids, temperature, int(seed), controls, figure)

st.subheader("Measured on this machine")
if st.button("Measure k = 1, 2, 3, 4, 6, 8 (60 tokens each)"):
    try:
        check_prompt(prompt_ids[-180:], 8, target.cfg.block_size)  # the last 180 tokens leave room for 60 + k
        with st.spinner("Decoding, 3 repeats each way…"):
            st.session_state[speculative.SPEC_SPEED] = measure_speculative(
                target, draft, prompt_ids[-180:], temperature=temperature, seed=int(seed)
            )
    except ValueError as err:
        refuse(err, level="warning")
speed = st.session_state.get(speculative.SPEC_SPEED)
if speed:
    st.dataframe(
        [
            {
                "k": r.k,
                "acceptance rate": f"{r.acceptance:.1%}",
                "target passes per token": f"{r.target_passes_per_token:.3f}",
                "speculative (ms)": f"{r.spec_ms:.1f}",
                "plain target (ms)": f"{r.plain_ms:.1f}",
                "speed-up (plain ÷ speculative)": f"{r.speedup:.2f}×",
                "speed-up range": f"{r.speedup_low:.2f}–{r.speedup_high:.2f}×",
            }
            for r in speed
        ],
        hide_index=True,
    )
    st.caption(
        f"{speed[0].repeats} interleaved repeats, each row the one with the median speed-up (plain ÷ speculative ms,"
        " as shown), the range over all; plain decoding makes as many tokens with the target alone, timed again beside"
        " each k, so its column moves with the machine's load (another program, other students) while each speed-up"
        " compares runs made side by side. Speed-up > 1 is faster, < 1 a slow-down; it depends on the acceptance rate"
        " and on how much cheaper the draft is."
    )
