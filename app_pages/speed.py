"""Speed on this machine: the measured roofline, the model's passes on it, and weight formats timed."""

import pandas as pd
import streamlit as st

from core.evaluate.format_speed.measure import FormatRow
from core.evaluate.format_speed.report import explain, format_rows
from core.evaluate.machine_speed.roofline import Roofline, counted, point_rows
from core.evaluate.machine_speed.runs import run_agreement
from core.viz.speed import fig_intensities, fig_roofline
from ui import figures, models, speed
from ui.page import chart, title

title("speed")
st.caption(
    "Ch. 19 “Actual speed also depends on memory traffic, hardware, and implementation”; Ch. 30 §30.6. "
    f"Measured on this server's CPU ({speed.model_in_sentence()}): a decode step reads every weight once, "
    "so it sits on the memory slope; a prefill reuses each weight for many positions and climbs toward the ceiling."
)

left, right = st.columns([4, 1], vertical_alignment="bottom")
budget = left.slider(
    "Time budget for a measurement (seconds)",
    2,
    60,
    key=speed.SPEED_BUDGET,
    persist_state="session",
    help="Shorter runs repeat each timing fewer times (at least three): noisier medians.",
)
if right.button("Measure", type="primary", width="stretch"):
    runs = speed.measure(float(budget))
else:
    runs = speed.kept_runs()

if not runs:
    st.info(
        "Nothing measured on this machine for this model yet. Press **Measure**: one of the server's cores "
        f"is busy for about {budget} s; results are kept for the whole class."
    )
    st.markdown(
        "Before timing anything: where each pass sits on the roofline's x-axis, counted from the model's shape."
    )
    chart(figures.figure(fig_intensities, counted(models.chosen_model().cfg)), key=speed.SPEED_INTENSITIES_FIG)
    speed.two_machines(None)  # the reference GPU's numbers need no measurement here
    st.stop()

run = runs[-1]
roof = Roofline.from_dict(run["roofline"])
rows = [FormatRow(**r) for r in run.get("formats", [])]
plot, table = st.columns([3, 2])
with plot:
    chart(figures.figure(fig_roofline, roof), key=speed.SPEED_ROOFLINE_FIG)
with table:
    st.dataframe(
        pd.DataFrame(point_rows(roof))[["pass", "ms", "MB moved", "MFLOP", "× floor"]], hide_index=True, width="stretch"
    )
    agree, ratios = run_agreement(runs), run_agreement(runs, ratios=True)
    st.caption(
        f"Measured {roof.when} in {roof.seconds:.0f} s, {roof.threads} torch thread"
        f"{'s' if roof.threads != 1 else ''} for every step and for the bandwidth that gives its floor, "
        f"medians of {roof.clock}. "
        f"Floor = max(bytes ÷ {roof.bandwidth_gbs:.1f} GB/s, "
        f"FLOPs ÷ {roof.peak_gflops:.1f} GFLOP/s); copy: {roof.copy_gbs:.1f} GB/s. "
        + (
            "Press Measure again to check that two runs agree."
            if agree is None
            else f"The last two runs' medians agree within {agree[0]:.0%} (largest difference: {agree[1]})"
            + (", inside the 15% target" if agree[0] <= 0.15 else ": past the 15% target, the machine was busy")
            + f"; their times over their own floors within {ratios[0]:.0%} ({ratios[1]})."
        )
    )

with st.expander("Every number of the roofline"):
    st.dataframe(pd.DataFrame(point_rows(roof)), hide_index=True)

st.subheader("Fewer bits, faster? Weight formats timed")
if rows:
    st.dataframe(pd.DataFrame(format_rows(rows, roof.bandwidth_gbs)), hide_index=True)
    st.markdown(explain(rows, roof.bandwidth_gbs, roof.threads))
    st.caption(
        f"One cached decode step at {run['context']} positions, batch 1, the formats timed in turn. "
        "Bytes: the block projections in the format (scales included), the rest (embedding row, norms, "
        "output head, KV cache, logits) in the format's float type. Max |Δlogit|: that step's logits "
        "against float32's from the same cached context."
    )

speed.two_machines(rows)

with st.expander("How this page stays out of the class's way"):
    st.markdown(
        "One measurement at a time per server process: a second **Measure** waits in line, and says so. "
        "The budget bounds how long one core is busy. Results are kept per machine (CPU, torch version, "
        "threads, model) in a file under `~/.cache/inference-explainer/`, so every later visit reads them "
        "at once. Streamlit offers no public count of connected sessions, so the page cannot refuse by "
        "head count: measure before class, or keep the budget short."
    )
