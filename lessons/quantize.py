"""The quantization ruler: bits, scale, zero point, rounding and clipping, moved by hand."""

import numpy as np
import streamlit as st

import ui
from core import quant, viz
from core import state as K

st.title("The quantization ruler")
st.caption(
    "Ch. 19 “Shrinking the numbers”, Ch. 30 §30.5: divide by the scale, round to the nearest stored "
    "integer, clip to the range; multiply back to reconstruct. Inside the range the error is at most s/2."
)


def load_preset() -> None:
    st.session_state.update(K.quant_preset_state(*quant.PRESETS[st.session_state["quant.preset"]]))


st.selectbox(
    "The chapters' cases", list(quant.PRESETS), key="quant.preset", on_change=load_preset, persist_state="session"
)
left, right = st.columns([2, 3])
text = left.text_area(
    "Values (commas, spaces or new lines)", key="quant.values", height=100, max_chars=50_000, persist_state="session"
)
with right:
    a, b = st.columns(2)
    bits = a.select_slider(
        "Bit width",
        [1, 2, 3, 4, 5, 6, 7, 8, 16],
        key="quant.bits",
        persist_state="session",
        help="16 is a reference: 65,535 shelves, too many to draw.",
    )
    kind = b.radio(
        "Format", ["symmetric", "affine (zero point)"], key="quant.kind", horizontal=True, persist_state="session"
    )
    mode = a.radio(
        "Scale",
        ["automatic", "set by hand"],
        key="quant.scale_mode",
        persist_state="session",
        horizontal=True,
        help="Automatic: largest magnitude / largest stored integer (affine: range / levels).",
    )
    scale_in = b.number_input(
        "Scale s", step=0.05, format="%.6g", key="quant.scale", disabled=mode == "automatic", persist_state="session"
    )
    rounding = a.selectbox(
        "Ties round",
        list(quant.ROUNDING),
        format_func=quant.ROUNDING.get,
        key="quant.rounding",
        persist_state="session",
    )
    clip = b.toggle(
        "Clip to the range",
        key="quant.clip",
        persist_state="session",
        help="Off: integers past the range are shown, marked: n bits could not store them.",
    )
symmetric = kind == "symmetric"
try:
    values = quant.parse_values(text)
    r = quant.ruler(values, bits, None if mode == "automatic" else scale_in, symmetric, None, rounding, clip)
except ValueError as err:
    st.error(f"{str(err)[0].upper()}{str(err)[1:]}.")
    st.stop()
for note in r.notes:
    st.warning(note)
title = (
    f"{bits}-bit {'symmetric' if symmetric else 'affine'}: stored integers {r.qmin} … {r.qmax}, "
    f"scale s = {r.scale:.6g}" + ("" if symmetric else f", zero point {r.zero_point}")
)
# With clipping off, a flagged value kept its exact rounding (error ≤ s/2) but its integer does not
# fit in the bits: say that, not "clipped".
outside = "clipped values (error not bounded by s/2)" if clip else f"q outside {r.qmin} … {r.qmax}: not storable"
ui.chart(viz.fig_ruler(r.x, r.q, r.x_hat, r.clipped, r.levels, r.scale, title, outside), key="ruler")
if r.levels is None:
    st.caption(f"{r.qmax - r.qmin + 1:,} levels: too many shelves to draw; the dots still land on theirs.")
st.caption(
    f"Rounding bound s/2 = {r.scale / 2:.6g} (the whiskers). Formula: q = clip(round(x/s) + z, "
    f"{r.qmin}, {r.qmax}), x̂ = s·(q − z)."
)
if len(r.x) <= 200:
    tidy = lambda a: np.round(a, 10)  # noqa: E731 — hide float noise such as 1e-16 in the table
    st.dataframe(
        {
            "x": tidy(r.x),
            "x / s": tidy(r.x / r.scale),
            "stored q": r.q,
            "x̂": tidy(r.x_hat),
            "error x̂ − x": tidy(r.x_hat - r.x),
            "within ±s/2": np.where(r.clipped, "no: clipped" if clip else "yes, but q does not fit", "yes"),
        },
        hide_index=True,
    )

st.subheader("Rounding reaches the output")
c1, c2 = st.columns(2)
with c1:
    st.markdown("**A dot product** with input [1, 1, …, 1] (Ch. 19)")
    before, after = float(r.x.sum()), float(r.x_hat.sum())
    rel = abs(after - before) / abs(before) if before else float("nan")
    fmt = lambda v: np.format_float_positional(v, precision=4, min_digits=2)  # noqa: E731
    st.markdown(
        f"before: **{fmt(before)}** · after: **{fmt(after)}** · difference {fmt(after - before)}"
        + ("" if np.isnan(rel) else f" = **{rel:.2%}** of the original")
    )
with c2:
    st.markdown("**A near tie** (Ch. 30 §30.6): logits for Paris, Lyon")
    p, ly, s = st.columns(3)
    paris = p.number_input("Paris", step=0.05, key="quant.paris", persist_state="session")
    lyon = ly.number_input("Lyon", step=0.05, key="quant.lyon", persist_state="session")
    tie_scale = s.number_input("scale", min_value=0.0, step=0.05, key="quant.tie_scale", persist_state="session")
    try:
        choice, rounded = quant.greedy_after_quantizing([paris, lyon], tie_scale, rounding)
        names = ["Paris", "Lyon"]
        st.markdown(
            f"before: greedy picks **{names[int(np.argmax([paris, lyon]))]}** · rounded to "
            f"[{rounded[0]:g}, {rounded[1]:g}] → **{names[choice]}**"
            + (" (a tie: the first in candidate order)" if rounded[0] == rounded[1] else "")
        )
    except ValueError as err:
        st.error(f"{str(err)[0].upper()}{str(err)[1:]}.")

st.subheader("Storage, honestly counted")
g1, g2, g3 = st.columns(3)
group = g1.select_slider(
    "Group size (values per scale)",
    [4, 8, 16, 32, 64, 128, 256, "whole list"],
    key="quant.group",
    persist_state="session",
)
scale_bytes = g2.radio(
    "Scale stored as",
    [4, 2],
    format_func=lambda b: f"{8 * b}-bit float ({b} B)",
    horizontal=True,
    key="quant.scale_bytes",
    persist_state="session",
)
zp_bytes = 1 if not symmetric else 0
n_bit_store = bits if bits != 16 else 16
store = quant.storage_bytes(len(r.x), n_bit_store, None if group == "whole list" else group, scale_bytes, zp_bytes)
g3.metric("Your values stored", f"{store['total']:,} bytes", help="Packed integers + scales (+ zero points).")
st.markdown(
    f"{len(r.x)} values × {n_bit_store} bits = **{store['quant/packed_bytes']:,} bytes packed** + "
    f"**{store['quant/scale_bytes']:,} bytes of scales**"
    + (f" + **{store['quant/zero_point_bytes']:,} bytes of zero points**" if zp_bytes else "")
    + f" = **{store['total']:,} bytes**, {store['bits_per_weight']:.3g} bits per value "
    f"(as float32: {4 * len(r.x):,} bytes)."
)
sizes = [1, 2, 4, 8, 16, 32, 64, 128, 256]
curves = {
    f"{b}-bit + {8 * sb}-bit scale": [quant.storage_bytes(4096, b, g, sb)["bits_per_weight"] for g in sizes]
    for b, sb in ((4, 2), (4, 4), (8, 2))
}
ui.chart(viz.fig_bits_per_weight(sizes, curves), key="bpw")
st.dataframe(
    [
        {
            "format": f.name,
            "stored integers": f"{f.qmin} … {f.qmax}",
            "group": str(f.group_size or "whole tensor"),
            "ties": f.rounding.replace("_", " "),
            "bits per weight": round(quant.format_bits_per_weight(f), 3),
            "note": f.note,
        }
        for f in quant.FORMATS
    ],
    hide_index=True,
)
