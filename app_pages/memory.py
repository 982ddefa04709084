"""Memory: the KV-cache calculator, weights by bits per weight, and reading a model card."""

import streamlit as st

from core.cost.kv_formula import M_LEAVES_OUT, formula_line
from core.cost.kv_layers import layers_kv_bytes
from core.cost.kv_shape import HYBRID_PRESETS, MODERN_PRESETS, PRESETS, KVShape
from core.cost.request_sizes import list_notes, parse_lengths
from core.text import byte_count, format_bytes
from ui import gguf, memory_reference, memory_sections, memory_terms, models, modes
from ui.classroom import identity, strip
from ui.page import refuse, text_box, title
from ui.present import answers_hidden, beside, presenter_mode

title("memory")
no_query_heads = "" if answers_hidden() else " Query heads do not appear."  # the lesson's question, on a display
st.caption(
    "How many bytes the cache holds. M = 2·B·L·T·H_kv·d·b (Ch. 30 §30.4): keys and values, requests, "
    f"layers, positions, KV heads, head width, bytes per value.{no_query_heads} Today's models "
    "change a term: sliding windows keep min(T, W) positions, MLA caches one latent per layer, and a hybrid's "
    "Mamba or linear-attention layers keep a fixed-size state instead of a cache."
)


# The calculator is one fragment: a move of its terms reruns it alone (the .gguf plan below does not depend on
# them), and a class's follower listens here, so that the teacher's Model shape reruns this part alone.
@st.fragment
def calculator_section() -> None:
    if identity.follower():
        strip.live()
    try:
        calculator()
    finally:  # also after a refusal's st.stop(): a class's console publishes what its move changed
        modes.after_fragment()


def calculator() -> None:
    cfg = models.model().cfg
    shipped = KVShape("shipped model (float32)", cfg.n_layer, cfg.n_head, cfg.n_kv_head, cfg.head_dim, cfg.n_embd, 4,
                      cfg.block_size, "checked against the real KVCache")  # fmt: skip
    choices = {**PRESETS, **MODERN_PRESETS, **HYBRID_PRESETS, "The shipped model": shipped}
    card = models.chosen_card()
    if card is not None:  # a checkpoint chosen in the sidebar: its config.json as loaded
        choices[memory_terms.CHOSEN_PRESET] = KVShape(
            f"{card.name} ({card.architecture}, float32)", card.n_layer, card.n_head, card.n_kv_head, card.head_dim,
            card.d_model, 4, card.context_window, "its config.json as loaded; checked against its real KVCache",
        )  # fmt: skip
    choices["From a config.json (paste or upload)"] = None
    choices[memory_terms.MEMORY_CUSTOM] = (
        st.session_state.get(memory_terms.MEMORY_BASE) or choices["Ch. 30 two-layer example"]
    )
    present = presenter_mode()
    controls, figure = beside((1, 1))  # presenter mode: the terms left, the KV-head chart right, on the first screen
    with controls:
        name = st.selectbox("Model shape", list(choices), key=memory_terms.MEMORY_PRESET, persist_state="session")
        shape, raw = choices[name], None
        if shape is None:
            shape, raw = memory_sections.pasted_config()
        memory_terms.load(name, shape)
        custom = name == memory_terms.MEMORY_CUSTOM
        L, n_head, H, d, W = memory_terms.term_boxes(shape)
        model = memory_terms.custom_shape(shape, n_head, H, d) if custom else shape
        said = f"typed over {shape.name}'s structure" if custom else shape.name
        st.caption(
            f"{said} — {model.attention_kind}, {n_head} query heads"
            + ("" if model.latent else f", {memory_terms.kv_heads_words(model, L, H)}")
            + f". {memory_terms.sliding_words(shape, W)} {'' if custom else shape.note}"
        )
        if shape.unmodelled:
            st.warning(
                "This config carries what the calculator does not model, so its number is not given: "
                + "; ".join(shape.unmodelled)
                + "."
            )
            st.stop()
        c = st.columns(3)
        b_choices = memory_terms.b_choices(shape)
        b_label = c[0].selectbox(  # the term boxes' labels are one line each, so the boxes line up (ui/memory_terms.py)
            "b: bytes per value", list(b_choices), key=memory_terms.MEMORY_B, persist_state="session",
            help="llama.cpp's quantized cache types store blocks of 32 values with an fp16 scale: q8_0 is 34 B per 32.",
        )  # fmt: skip
        b, cache_type = b_choices[b_label]
        lengths_text = text_box(
            c[1], "T: positions", limit=100_000, key=memory_terms.MEMORY_T, persist_state="session",
            help="Positions per request, one length per request, separated with “, ” or “;”: “4096, 4096” is B = 2; "
            "unequal lengths are summed. “8,192” is one length.",
        )  # fmt: skip
        if lengths_text is None:
            st.stop()
        try:
            lengths = parse_lengths(lengths_text)
            layers = model.layers(L, H, d, W) if not model.latent else model.layers(L, 1, 1, W)
            kv = layers_kv_bytes(layers, lengths, b, cache_type)
        except ValueError as err:
            refuse(err, "Check the terms: ")
            st.stop()
        B = len(lengths)
        for note in list_notes(lengths_text):
            st.info(note)
        c[2].metric("B: requests", f"{B:,}", help="Counted from T: one length per request (“4096, 4096” is B = 2).")
        if not custom and shape.context_window and max(lengths) > shape.context_window:
            st.warning(
                f"T = {max(lengths):,} is past this model's context window of {shape.context_window:,} positions: the "
                "bytes below are what such a cache would take, but the model cannot attend that far."
            )
        sure = (
            memory_reference.checked(shape, raw)
            if raw and not custom
            else not gguf.not_counted_warning(shape.uncounted)
        )
        st.markdown(formula_line(layers, lengths, d, b, kv["total"], hybrid=model.state is not None))
        st.caption(M_LEAVES_OUT)
        per_position = byte_count(kv["kv_cache/bytes_per_position"])
        sizes = (format_bytes(kv["total"]), format_bytes(kv["total"], binary=False), per_position)
        if sure:  # a number resting on a field not counted gets no headline
            u1, u2, u3 = st.columns(3)
            u1.metric("Binary units (KiB = 1,024 B)", sizes[0])
            u2.metric("Decimal units (kB = 1,000 B)", sizes[1])
            u3.metric("Per position", sizes[2], help="all layers, before a window fills")
        else:
            st.markdown(f"Counted without those fields: {sizes[0]} = {sizes[1]}; {sizes[2]} per position (not sure).")
        if cache_type is not None:
            st.markdown(
                f"As llama.cpp logs it ({cache_type}, block overhead included): "
                f"K = **{format_bytes(kv['kv_cache/keys_bytes'], unit='MiB')}**, "
                f"V = **{format_bytes(kv['kv_cache/values_bytes'], unit='MiB')}**, "
                f"K + V = **{format_bytes(kv['total'], unit='MiB')}**."
            )
        if model.state is not None:
            memory_sections.hybrid_state(model, L, lengths, kv["total"])
        real_model = {"The shipped model": models.model, memory_terms.CHOSEN_PRESET: models.chosen_model}.get(name)
        if real_model and B <= 8 and b == 4:
            models.check_real_cache(real_model(), shape.name, lengths, kv["total"])

    if model.state is not None:
        with figure:
            memory_sections.state_chart(model, layers, L, lengths, b, cache_type)
    left, right = (figure, figure) if present else st.columns(2)
    with left:
        if model.latent:
            st.caption("MLA caches one latent per layer for all heads: the KV-head comparison does not apply.")
        else:
            memory_sections.sharing_chart(model, L, n_head, H, d, W, lengths, b, kv["total"])
    with right:
        hidden = n_head * d if custom and not model.latent else shape.hidden_size
        memory_sections.mistakes(len(layers), H, d, hidden, kv["kv_cache/positions"], b, kv["total"])


calculator_section()
gguf.gguf_plan_section()
