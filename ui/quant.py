"""The quantization pages' sections, as layout: the ruler's "rounding reaches the output" (a dot
product before and after rounding, and a near tie rounding can flip) and its storage; the model page's flip finder,
sweep tables and the chapter's caveats (Ch. 30 §30.6). Like ``ui.gguf``: streamlit only, every
number from one call into ``core/``; the pages stay short."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.model.tokenizer import token_text
from core.quant import quantize as quant
from core.quant import ruler, sentences
from core.quant.flip import find_flip, greedy_by_bits, top_two
from core.text import markdown_literal, ordinal, plural, show_spaces
from ui.page import refuse, settings_now, show_settings

QUANT_DEFAULT_PRESET = "Ch. 19: four weights, scale 0.1"

QUANT_SCALE = "quant.scale"

QUANT_SCALE_MODE = "quant.scale_mode"

QUANT_SCALE_STEP = "quant.scale_step"

QUANT_VALUES = "quant.values"

QUANT_ZERO_POINT = "quant.zero_point"

QUANT_BITS = "quant.bits"

QUANT_KIND = "quant.kind"

QUANT_ROUNDING = "quant.rounding"

QUANT_CLIP = "quant.clip"


def quant_preset_state(values: str, scale: float) -> dict:
    """The ruler's settings for one of the chapters' cases: its values and scale, 4-bit symmetric,
    half to even, clipping on (Ch. 30's rules)."""
    return {
        QUANT_VALUES: values,
        QUANT_SCALE: scale,
        QUANT_SCALE_STEP: scale,  # the log slider's stop; the page snaps it to the nearest one
        QUANT_ZERO_POINT: 0,
        QUANT_SCALE_MODE: "set by hand",
        QUANT_BITS: 4,
        QUANT_KIND: "symmetric",
        QUANT_ROUNDING: "half_even",
        QUANT_CLIP: True,
    }


QUANT_PRESET = "quant.preset"

QUANT_PARIS = "quant.paris"

QUANT_LYON = "quant.lyon"

QUANT_TIE_SCALE = "quant.tie_scale"

QUANT_GROUP = "quant.group"

QUANT_SCALE_BYTES = "quant.scale_bytes"

QUANT_BPW_FIG = "quant.bpw_fig"

QUANT_RULER_FIG = "quant.ruler_fig"

QUANT_VALUES_DRAWN = "quant.values_drawn"  # the values the whole page last drew (the real-format block reads them too)

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    QUANT_PRESET: QUANT_DEFAULT_PRESET,
    **quant_preset_state("0.34, -0.12, 0.7, 0.23", 0.1),
    QUANT_PARIS: 0.6,
    QUANT_LYON: 0.7,
    QUANT_TIE_SCALE: 0.5,
    QUANT_GROUP: 4,
    QUANT_SCALE_BYTES: 4,
}
# The page's settings (core.lesson.pages.PAGES["quantize"]) -> their session keys.
SETTINGS = {
    "preset": QUANT_PRESET,
    "values": QUANT_VALUES,
    "bits": QUANT_BITS,
    "kind": QUANT_KIND,
    "rounding": QUANT_ROUNDING,
    "clip": QUANT_CLIP,
    "scale_mode": QUANT_SCALE_MODE,
    "scale": QUANT_SCALE,
    "zero_point": QUANT_ZERO_POINT,
}
# The settings the ruler's fragment (``app_pages/quantize.py``'s ``ruler_section``) draws by itself: a class's
# follower takes a plan that moved only these in a run of that fragment. The preset and the values feed the
# real-format block below it too: they take a whole-page run.
FRAGMENT_SETTINGS = frozenset(SETTINGS) - {"preset", "values"}


kw = {"persist_state": "session"}


def _sum(values, fmt, shown: int = 8) -> str:
    """ "0.34 − 0.12 + 0.70 + 0.23": the values as a written sum (the first ``shown``, then how many in all)."""
    terms = [fmt(float(f"{v:.12g}")) for v in values[:shown]]  # 0.30000000000000004 (0.1 · 3) reads 0.30
    out = terms[0]
    for t in terms[1:]:
        out += f" − {t[1:]}" if t.startswith("-") else f" + {t}"
    return out + (f" + … ({len(values):,} values)" if len(values) > shown else "")


def reaches_the_output(r, rounding: str) -> None:
    """A dot product before and after rounding, and a near tie that rounding can flip."""
    st.subheader("Rounding reaches the output")
    c1, c2 = st.columns(2)
    c1.markdown("**A dot product** with input [1, 1, …, 1] (Ch. 19)")
    dot = ruler.dot_product(r)

    def fmt(v: float) -> str:  # past 10¹⁶ a float has no fractional digits left to show: 5 significant ones
        return np.format_float_positional(v, precision=4, min_digits=2) if abs(v) < 1e16 else f"{v:.4e}"

    if dot.finite:
        c1.markdown(
            f"before: **{fmt(dot.before)}** · after: **{fmt(dot.after)}** · difference {fmt(dot.after - dot.before)}"
            + ("" if dot.relative is None else f" = **{dot.relative:.2%}** of the original")
        )
        c1.markdown(  # the sums written out, as Ch. 19 writes them
            f"{_sum(r.x, fmt)} = {fmt(dot.before)}  \n{_sum(r.x_hat, fmt)} = {fmt(dot.after)}  \n"
            + ("Smaller storage has changed the arithmetic." if dot.after != dot.before else "Here rounding left the "
               "sum as it was.")
        )  # fmt: skip
    else:
        c1.markdown("The sum is beyond float64's range (±1.8 × 10³⁰⁸): there is no finite result to compare.")
    c2.markdown("**A near tie** (Ch. 30 §30.6): logits for Paris, Lyon")
    p, ly, s = c2.columns(3)
    # "%g": as typed (the default "%.2f" showed a scale of 1e-300 as 0.00 while it was used)
    paris = p.number_input("Paris", step=0.05, format="%g", key=QUANT_PARIS, **kw)
    lyon = ly.number_input("Lyon", step=0.05, format="%g", key=QUANT_LYON, **kw)
    tie_scale = s.number_input("scale", min_value=0.0, step=0.05, format="%g", key=QUANT_TIE_SCALE, **kw)
    try:
        choice, rounded = quant.greedy_after_quantizing([paris, lyon], tie_scale, rounding)
    except ValueError as err:
        return refuse(err)
    names = ["Paris", "Lyon"]
    c2.markdown(
        f"before: greedy picks **{names[int(np.argmax([paris, lyon]))]}** · rounded to "
        f"[{rounded[0]:g}, {rounded[1]:g}] → **{names[choice]}**"
        + (" (a tie: the first in candidate order)" if rounded[0] == rounded[1] else "")
    )


def storage(r) -> None:
    """The ruler's "Storage, honestly counted": group size and scale width chosen, the bytes of the values as
    stored (``core.quant.ruler.storage``), what fewer bits save in the chapters' words (``sentences.shrink``)."""
    st.subheader("Storage, honestly counted")
    g1, g2, g3 = st.columns(3)
    group = g1.select_slider(
        "Group size (values per scale)", [4, 8, 16, 32, 64, 128, 256, "whole list"], key=QUANT_GROUP, **kw
    )
    scale_bytes = g2.radio(
        "Scale stored as", [4, 2], format_func=lambda b: f"{8 * b}-bit float ({b} B)", key=QUANT_SCALE_BYTES, **kw
    )
    store = ruler.storage(r, None if group == "whole list" else group, scale_bytes)
    g3.metric("Your values stored", plural(store.total_bytes, "byte"), help="Packed integers + scales (+ zero points).")
    st.markdown(store.sentence)
    st.caption(f"{sentences.shrink(r.n_bit, len(r.x), store.total_bytes)} {sentences.GROUPS}")


def token_shown(tok, i: int) -> str:
    """A token as the decode page shows it ("␣Yes"), literal in markdown and metric values."""
    return markdown_literal(show_spaces(token_text(tok, i)))


def flip_finder(tok, logits: np.ndarray) -> None:
    """The flip finder: the greedy token, its runner-up and margin, the smallest scale that changes
    the choice (``core.quant.flip``), and the choice by bit width."""
    two = top_two(logits)
    a, b, c = st.columns(3)
    a.metric("Greedy next token", token_shown(tok, two.greedy), help=f"token id {two.greedy}")
    b.metric("Runner-up", token_shown(tok, two.runner_up), help=f"token id {two.runner_up}")
    c.metric("Margin between them (logit units)", f"{two.margin:.4f}")
    flip = find_flip(logits, rows := greedy_by_bits(logits))
    if flip is None:
        st.markdown("No scale changes the greedy token: it has token id 0, so no tie can go against it.")
    else:
        st.markdown(
            f"Rounding the logits to multiples of a scale s first changes the greedy token for every s just above "
            f"**{flip.threshold:.6g}** (exactly {flip.threshold!r}). Rounding never reorders logits, it only makes "
            f"them equal: there **{len(flip.tied)} tokens** land on the top shelf together, and greedy takes the "
            f"first in token-id order, “{token_shown(tok, flip.chosen)}” (id {flip.chosen}), which ranked "
            f"**{ordinal(flip.rank)}** before rounding."
        )
    st.markdown("By bit width (automatic symmetric scale over all logits):")
    st.dataframe(
        [
            {
                "bits": r.bits,
                "scale s": round(r.scale, 6),
                "greedy token": show_spaces(token_text(tok, r.greedy)),
                "changed?": "yes" if r.changed else "no",
                "tokens on the top shelf": r.tied,
            }
            for r in rows
        ],
        hide_index=True,
    )
    if flip and flip.not_monotone:
        st.info(
            f"Not monotone: at {', '.join(map(str, flip.not_monotone))} bits the scale is above "
            f"{flip.threshold:.4g}, yet the greedy token is unchanged: at those scales no lower-id token shares the "
            "top token's shelf. Whether rounding changes a choice depends on where the shelves fall, not only on "
            "how far apart they are."
        )


def sweep_table(reports) -> None:
    """One quantization sweep (``core.evaluate.quant_quality.QuantReport`` rows) as a table."""
    st.dataframe(
        [
            {
                "model": r.label,
                "weight bytes": f"{r.weight_bytes:,}",
                "KV bytes per token": f"{r.kv_bytes_per_token:,.0f}",
                "max |Δlogit|": f"{r.max_logit_error:.3g}",
                "greedy changed": f"{r.greedy_changed:.1%}",
                "loss (nats/token)": f"{r.loss:.4f}",
                "perplexity": f"{r.perplexity:.4f}",
            }
            for r in reports
        ],
        hide_index=True,
    )


def model_notes(reports, name: str, n_params: int) -> None:
    """Under the weight sweep: the same parameters at every width (Ch. 19 "Why the LLM cares", with the sweep's
    bytes), errors that accumulate and sensitive weights (Ch. 19), and what group size trades (Ch. 30 §30.5)."""
    smallest = min((r for r in reports if r.n_bit), key=lambda r: r.n_bit)
    same = sentences.same_parameters(name, n_params, reports[0].weight_bytes, smallest.weight_bytes, smallest.n_bit)
    st.caption(f"{same} {sentences.ACCUMULATE} {sentences.GROUPS}")


# Ch. 30 §30.6, in the chapter's words; what this app does about each follows it ({where}: "below" on the
# model's page, "on *Quantizing the model*" elsewhere).
CAVEATS = (
    (
        "Weight-only quantization, activation quantization and KV quantization affect different arrays.",
        "Weight-only and KV quantization are measured {where}; activation quantization (rounding the inputs each "
        "layer multiplies, at run time) is not: the activations stay float.",
    ),
    (
        "Dequantization, packing and specialized integer kernels also affect actual speed; fewer stored bits do "
        "not automatically mean every operation runs faster.",
        "The page linked below times weight formats through real kernels on this machine.",
    ),
    (
        "Calibration data used to choose scales must be separated from final evaluation, and compare the same "
        "prompts, task criteria and output budgets.",
        "The model measured {where} uses no calibration set: each scale comes from its own group of weights (or "
        "its own stored vector), and the loss is measured on held-out text every width shares.",
    ),
)


def caveats(where: str = "below") -> None:
    """Why “four bits” is not a quality result (Ch. 30 §30.6): the three caveats, and a link to the
    page that times the formats. ``where``: where the model's quantization is measured."""
    st.markdown("**“Four bits” is not a quality result** (Ch. 30 §30.6)")
    st.markdown("\n".join(f"- “{said}” {ours.format(where=where)}" for said, ours in CAVEATS))
    st.page_link("app_pages/speed.py", label="Speed on this machine: fewer bits, timed", icon=":material/speed:")


def snapshot():
    """The page's settings as this session has them (a class's plan carries them to followers)."""
    return settings_now("quantize", SETTINGS)


def show(settings) -> None:
    """Show ``settings`` (a lesson stop's, a class's plan's) on the ruler, before the page runs: a preset first
    (its values, scale and format, as its select box loads them), then the settings beside it."""
    if settings.preset is not None:
        st.session_state.update(quant_preset_state(*ruler.PRESETS[settings.preset]))
    given = {name: key for name, key in SETTINGS.items() if getattr(settings, name) is not None or name == "preset"}
    show_settings(given, DEFAULTS, settings)
    st.session_state[QUANT_SCALE_STEP] = ruler.nearest_step(st.session_state[QUANT_SCALE])


def show_part(values: dict) -> None:
    """Show a plan's ``values`` ({setting: value} of ``FRAGMENT_SETTINGS``) inside the ruler's fragment, before its
    controls are drawn (a class's follower; the values and the preset stay as they are)."""
    ss = st.session_state
    for name, value in values.items():
        ss[SETTINGS[name]] = value
    ss[QUANT_SCALE_STEP] = ruler.nearest_step(ss[QUANT_SCALE])


def load_preset() -> None:
    """The preset box's callback: the chosen case's values, scale and format."""
    st.session_state.update(quant_preset_state(*ruler.PRESETS[st.session_state[QUANT_PRESET]]))


def by_hand(from_slider: bool = False) -> None:
    """Touching the scale or zero point sets them by hand (the slider's stop becomes the scale)."""
    if from_slider:
        st.session_state[QUANT_SCALE] = st.session_state[QUANT_SCALE_STEP]
    st.session_state[QUANT_SCALE_MODE] = "set by hand"
