"""The memory page's term boxes (L, query heads, H_kv, d, W, b, T). Choosing a preset copies its terms in;
typing L, query heads, H_kv, d or W switches the preset box to "Custom (typed terms)", and every derived
quantity (hidden size = query heads · d, the MHA comparison) then follows what was typed. A custom model
keeps the structure of the preset it was typed over (which layers slide, MLA), said in its caption.
"""

from __future__ import annotations

from fractions import Fraction

import streamlit as st

from core.cost import counts
from core.cost.kv_layers import describe_rule
from core.cost.kv_shape import KVShape
from core.lesson.pages import PAGES
from ui.page import settings_now, show_settings
from ui.present import presenter_mode

MEMORY_PRESET = "memory.preset"

CHOSEN_PRESET = "The model in use (sidebar)"  # the memory page's preset for a loaded checkpoint

# Fixed keys, so that typing any term can switch the preset box to MEMORY_CUSTOM and keep the values.
MEMORY_CUSTOM = "Custom (typed terms)"

MEMORY_L = "memory.n_layer"

MEMORY_N_HEAD = "memory.n_head"

MEMORY_H = "memory.n_kv_head"

MEMORY_D = "memory.head_dim"

MEMORY_W = "memory.window"  # 0 = no sliding window

MEMORY_B = "memory.bytes_per_value"  # a label of the b choices

MEMORY_T = "memory.lengths"  # the typed request lengths

MEMORY_BASE = "memory.base"  # the KVShape whose structure the typed terms keep (windows rule, MLA)

MEMORY_LOADED = "memory.loaded"  # (preset name, KVShape) last copied into the term boxes

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    MEMORY_PRESET: "Ch. 30 two-layer example",
    MEMORY_T: "8",  # the default preset's own lengths: Ch. 30's eight positions (``default_lengths``)
    MEMORY_BASE: None,
    MEMORY_LOADED: None,
}
# The page's settings (core.lesson.pages.PAGES["memory"]) -> their session keys.
SETTINGS = {
    "preset": MEMORY_PRESET,
    "lengths": MEMORY_T,
}
# The memory page's calculator (a fragment of ``app_pages/memory.py``) draws both: a class's follower takes a plan
# that moved them in a run of that fragment, not of the whole page.
FRAGMENT_SETTINGS = frozenset(SETTINGS)
MEMORY_KEEP_T = "memory.keep_lengths"  # bool: the lengths were shown with the preset (a lesson's, the teacher's)


KW = {"persist_state": "session"}


def own_label(shape: KVShape) -> str:
    return f"model's own ({shape.bytes_per_value:g} B)"


def b_choices(shape: KVShape) -> dict[str, tuple[Fraction, str | None]]:
    """Label → (b, llama.cpp cache type or None): the model's own width first."""
    return {own_label(shape): (Fraction(shape.bytes_per_value), None), **counts.kv_value_choices()}


def default_lengths(name: str, shape: KVShape) -> str:
    """The first T: the chapter's 8 positions, a hybrid's 8,192 (where its growing cache and its fixed state
    are both in view: at a 262,144-position window the state would be a line on the axis), else the model's
    context window."""
    if name.startswith("Ch. 30 two"):
        return "8"
    return "8192" if shape.state is not None else str(shape.context_window or 2048)


def load(name: str, shape: KVShape) -> None:
    """Copy ``shape``'s terms into the boxes when the preset (or pasted config) changed; call before the
    boxes are drawn."""
    ss = st.session_state
    if name == MEMORY_CUSTOM or ss.get(MEMORY_LOADED) == (name, shape):
        return
    h, d = shape.latent if shape.latent is not None else (shape.n_kv_head, shape.head_dim)
    ss.update({MEMORY_L: shape.n_layer, MEMORY_N_HEAD: shape.n_head, MEMORY_H: h, MEMORY_D: d})
    ss.update({MEMORY_W: shape.window or 0, MEMORY_B: own_label(shape)})
    if not ss.pop(MEMORY_KEEP_T, False):
        ss[MEMORY_T] = default_lengths(name, shape)
    ss[MEMORY_BASE], ss[MEMORY_LOADED] = shape, (name, shape)


def _typed() -> None:
    st.session_state[MEMORY_PRESET] = MEMORY_CUSTOM
    st.session_state[MEMORY_LOADED] = None  # choosing the same preset again reloads it


def custom_shape(base: KVShape, n_head: int, n_kv: int, d: int) -> KVShape:
    """The typed model: ``base``'s structure (windows rule, MLA, a hybrid's layers), the typed heads and width,
    hidden size = query heads · d."""
    hybrid = {"hybrid": base.hybrid, "state": base.state}  # a hybrid's state layers stay as its config has them
    if base.latent is not None:
        return KVShape("typed terms (MLA)", 1, n_head, n_head, base.head_dim, base.hidden_size, base.bytes_per_value,
                       None, "", window=None, rule=base.rule, latent=(n_kv, d), **hybrid)  # fmt: skip
    return KVShape("typed terms", 1, n_head, n_kv, d, n_head * d, base.bytes_per_value, None, "", rule=base.rule,
                   **hybrid)  # fmt: skip


def term_boxes(shape: KVShape) -> tuple[int, int, int, int, int | None]:
    """Draw the model's terms; returns (L, query heads, H_kv or r_kv, d or d_R, W or None).

    Every label is one line, so the five boxes line up: a symbol and a short name, the rest in its help. Presenter
    mode's larger text puts them in two rows of three columns (five columns of ~146 px wrapped "H_kv: KV heads per
    layer" to three lines beside one-line "L: layers": boxes at three heights on the lesson's memory stop)."""
    mla = shape.latent is not None
    c = [*st.columns(3), *st.columns(3)[:2]] if presenter_mode() else st.columns(5)
    L = c[0].number_input("L: layers", 1, 10**6, key=MEMORY_L, on_change=_typed, **KW)
    q = c[1].number_input(
        "Query heads", 1, 10**6, key=MEMORY_N_HEAD, on_change=_typed, help="Not in M: for the comparisons", **KW
    )
    H = c[2].number_input(
        "r_kv: latent width" if mla else "H_kv: KV heads", 1, 10**6, key=MEMORY_H, on_change=_typed,
        help="kv_lora_rank: one latent per layer for all heads" if mla else "KV heads per layer", **KW,
    )  # fmt: skip
    d = c[3].number_input(
        "d_R: RoPE key" if mla else "d: head width", 1, 10**6, key=MEMORY_D, on_change=_typed,
        help="qk_rope_head_dim: the shared RoPE key's width" if mla else None, **KW,
    )  # fmt: skip
    W = c[4].number_input(
        "W: sliding window", 0, 10**12, key=MEMORY_W, on_change=_typed,
        help="0 = none. Positions a local layer keeps: min(T, W) of a T-position request.", **KW,
    )  # fmt: skip
    return int(L), int(q), int(H), int(d), int(W) or None


def sliding_words(shape: KVShape, window: int | None) -> str:
    """The typed window in words, with ``shape``'s rule for which layers slide."""
    if not window:
        return "Every attention layer keeps every position." if shape.state else "Every layer keeps every position."
    return f"Window W = {window:,} positions: {describe_rule(shape.rule or 'all')}."


def kv_heads_words(model: KVShape, n_layer: int, n_kv: int) -> str:
    """ "8 KV heads", or for a config listing them per layer "1 to 4 KV heads per layer (H_kv: the largest)"."""
    if model.layer_heads is not None and n_layer == model.n_layer:
        low, high = min(model.layer_heads), max(model.layer_heads)
        return f"{low:,} to {high:,} KV heads per layer (H_kv: the largest)"
    return f"{n_kv:,} KV heads"


def snapshot():
    """The page's settings as this session has them (a class's plan carries them to followers)."""
    return settings_now("memory", SETTINGS)


def show(settings) -> None:
    """Show ``settings`` (a lesson stop's, a class's plan's) on the page, before it runs. Lengths given with the
    preset stay when the page copies the preset's terms into the boxes (``load``); left out, they are the
    preset's own."""
    ss = st.session_state
    show_settings({"preset": MEMORY_PRESET}, DEFAULTS, settings)
    if settings.lengths is not None:
        ss[MEMORY_T], ss[MEMORY_KEEP_T] = settings.lengths, True
    else:
        ss[MEMORY_LOADED] = None  # the preset's own lengths, copied again


def show_part(values: dict) -> None:
    """Show a plan's ``values`` ({setting: value}) inside the calculator's fragment: as ``show``, whose settings are
    all drawn there."""
    show(PAGES["memory"].make(values))


def forget_model(cfg, checkpoint: bool) -> None:
    """A switch of model: the preset becomes the model in use (a checkpoint's, or the shipped model's)."""
    ss = st.session_state
    if checkpoint or ss.get(MEMORY_PRESET) == CHOSEN_PRESET:
        ss[MEMORY_PRESET] = CHOSEN_PRESET if checkpoint else "The shipped model"
