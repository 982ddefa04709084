"""The quantization ruler: bits, scale, zero point, rounding and clipping, moved by hand."""

import streamlit as st

from core.quant import quantize as quant
from core.quant import ruler, sentences
from core.viz.quant import fig_bits_per_weight
from core.viz.ruler import fig_ruler
from ui import figures, gguf, modes, references, tables
from ui import quant as ui_quant
from ui.classroom import identity, strip
from ui.page import chart, refuse, text_box, title
from ui.present import beside, presenter_mode

title("quantize")
st.caption(
    "Ch. 19 “Shrinking the numbers”, Ch. 30 §30.5: divide by the scale, round to the nearest stored "
    "integer, clip to the range; multiply back to reconstruct. Inside the range the error is at most s/2."
)
kw = {"persist_state": "session"}


def controls():
    """The values and the format; returns (text, bits, symmetric, rounding, clip); text is ``None`` when refused."""
    left, right = [st.container()] * 2 if presenter_mode() else st.columns([2, 3])  # presenter: a narrow column
    text = text_box(
        left,
        "Values (commas, spaces or new lines)",
        limit=50_000,
        area=True,
        key=ui_quant.QUANT_VALUES,
        height=100,
        **kw,
    )
    a, b = right.columns(2)
    bits = a.select_slider(
        "Bit width",
        [1, 2, 3, 4, 5, 6, 7, 8, 16],
        key=ui_quant.QUANT_BITS,
        help="16 is a reference: 65,535 shelves.",
        **kw,
    )
    kind = b.radio("Format", ["symmetric", "affine (zero point)"], key=ui_quant.QUANT_KIND, horizontal=True, **kw)
    rounding = a.selectbox(
        "Ties round", list(quant.ROUNDING), format_func=quant.ROUNDING.get, key=ui_quant.QUANT_ROUNDING, **kw
    )
    clip = b.toggle(
        "Clip to the range", key=ui_quant.QUANT_CLIP, help="Off: integers past the range are kept, marked.", **kw
    )
    return text, bits, kind == "symmetric", rounding, clip


def scale_controls(text: str, bits: int, symmetric: bool):
    """Scale (automatic or by hand: a log slider and an exact box) and zero point; returns
    (set by hand?, scale typed, zero point typed or None)."""
    if (
        st.session_state[ui_quant.QUANT_SCALE_MODE] == "automatic"
    ):  # show the automatic scale and zero point on the controls
        try:
            auto = quant.auto_scale(quant.parse_values(text), bits, symmetric)
            st.session_state[ui_quant.QUANT_SCALE], st.session_state[ui_quant.QUANT_ZERO_POINT] = auto
        except ValueError:
            pass  # the ruler below says what is wrong
    st.session_state[ui_quant.QUANT_SCALE_STEP] = ruler.nearest_step(st.session_state[ui_quant.QUANT_SCALE])
    m, s1, s2, z = [*st.columns(2), *st.columns(2)] if presenter_mode() else st.columns([2, 3, 2, 2])
    mode = m.radio(
        "Scale",
        ["automatic", "set by hand"],
        key=ui_quant.QUANT_SCALE_MODE,
        help="Automatic: largest magnitude / largest stored integer (affine: range / levels, and its zero point). "
        "Moving the slider or typing a scale sets it by hand.",
        **kw,
    )
    s1.select_slider(
        "Scale s (log scale: drag to move the shelves)",
        ruler.SCALE_STEPS,
        key=ui_quant.QUANT_SCALE_STEP,
        format_func=lambda v: f"{v:g}",
        on_change=ui_quant.by_hand,
        args=(True,),
        **kw,
    )
    scale_in = s2.number_input(
        "s, exactly", step=None, format="%.8g", key=ui_quant.QUANT_SCALE, on_change=ui_quant.by_hand, **kw
    )
    zero_in = None
    if not symmetric:
        zero = {"key": ui_quant.QUANT_ZERO_POINT, "on_change": ui_quant.by_hand, "help": "The stored code of 0."}
        zero_in = z.number_input("Zero point z", step=1, **zero, **kw)
    return mode == "set by hand", scale_in, zero_in


# Moving a control reruns only this part (a fragment): the chart, table and real-format block below do not depend
# on the ruler's settings, and skipping them roughly halves the server's work per move (README, "A class at once").
@st.fragment
def ruler_section() -> None:
    if identity.follower():
        strip.live()  # a class's follower listens here: a move of the teacher's ruler reruns this part alone
    draw_ruler()
    modes.after_fragment()  # a move of the ruler runs this part only: a class's console publishes it here


def draw_ruler() -> None:
    left, right = beside((2, 3))  # presenter mode: the controls left, the ruler right, on the first screen
    with left:
        text, bits, symmetric, rounding, clip = controls()
        if text is None:  # refused as too long: nothing drawn from it
            return
        if text != st.session_state.get(ui_quant.QUANT_VALUES_DRAWN):
            st.rerun()  # new values: the whole page, since the real-format block reads them too
        hand, scale_in, zero_in = scale_controls(text, bits, symmetric)
    try:
        args = (scale_in if hand else None, symmetric, zero_in if hand else None, rounding, clip)
        r = ruler.ruler(quant.parse_values(text), bits, *args)
    except ValueError as err:
        return refuse(err)  # not st.stop(): on a whole-page run it would stop the parts below the fragment too
    with right:
        for note in r.notes:
            st.warning(note)
        chart(  # its table is below; presenter mode: the three bands and their description on the first screen
            figures.figure(fig_ruler, r), key=ui_quant.QUANT_RULER_FIG, table=False, present_max_px=560
        )
        st.caption(
            f"{sentences.PATTERNS} {sentences.patterns(r)} Rounding bound s/2 = {ruler.shown(r.scale / 2)} (the "
            f"whiskers). Formula: {r.formula}."
        )
        references.cite("jacob")  # scale and zero point, as the affine format's radio names it
    if len(r.x) <= 200:
        st.caption(f"{ruler.table_title(r)}. {ruler.halfway_sentence(r)}")
        st.dataframe(tables.arrow(ruler.ruler_table(r)), hide_index=True)
    ui_quant.reaches_the_output(r, rounding)
    ui_quant.storage(r)


st.selectbox(
    "The chapters' cases", list(ruler.PRESETS), key=ui_quant.QUANT_PRESET, on_change=ui_quant.load_preset, **kw
)
st.session_state[ui_quant.QUANT_VALUES_DRAWN] = st.session_state[ui_quant.QUANT_VALUES]
ruler_section()
sizes = [1, 2, 4, 8, 16, 32, 64, 128, 256]
chart(figures.figure(fig_bits_per_weight, sizes, ruler.bits_per_weight_curves(sizes)), key=ui_quant.QUANT_BPW_FIG)
st.table(tables.arrow(ruler.formats_table()), hide_index=True)
ui_quant.caveats("on *Quantizing the model*")
try:
    drawn = quant.parse_values(st.session_state[ui_quant.QUANT_VALUES_DRAWN])
except ValueError:
    drawn = None  # values that do not parse: the ruler above says why, and there is no block to store
if drawn is not None:
    gguf.ruler_block(drawn)
