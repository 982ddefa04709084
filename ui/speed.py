"""The speed page's measurement, kept out of a class's way: one at a time per server process
(others wait in line, told so), within a time budget, and read back from the machine's cache file;
and its section "Fewer bits on two machines" (this machine's formats beside the reference GPU's).

Streamlit has no public count of connected sessions (the runtime's session manager is private), so
the page does not refuse by head count; the lock and the budget bound what one measurement costs
the others: while it runs, one of the two cores is busy for at most the budget."""

from __future__ import annotations

import threading
from dataclasses import asdict

import streamlit as st

from core.evaluate.format_speed.measure import FormatRow, measure_formats
from core.evaluate.format_speed.reference import (
    gpu_headline,
    gpu_lessons,
    here_headline,
    here_lesson,
    here_ratios,
    load_reference,
)
from core.evaluate.machine_speed.roofline import measure_roofline, passes
from core.evaluate.machine_speed.runs import load_runs, machine_key, save_run
from core.viz.fewer_bits import fig_two_machines
from ui import figures, models
from ui.page import chart

# Results are kept per machine in a JSON file (core.evaluate.machine_speed.cache_dir), not here.
SPEED_BUDGET = "speed.budget_s"  # seconds a measurement may take (the page's slider)

SPEED_INTENSITIES_FIG = "speed.intensities_fig"

SPEED_ROOFLINE_FIG = "speed.roofline_fig"

SPEED_TWO_MACHINES_FIG = "speed.two_machines_fig"

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    SPEED_BUDGET: 20,
}


_LOCK = threading.Lock()  # one measurement at a time in this server process
WAIT_S = 180  # how long a second request waits in line before giving up


def key() -> dict:
    """The cache key of this session's model on this machine."""
    return machine_key(models.active().name, models.chosen_model().cfg)


def model_in_sentence() -> str:
    """This session's model as a sentence names it mid-line: "the shipped model", or the checkpoint's name."""
    return "the shipped model" if models.active().path is None else models.active().name


def kept_runs() -> list[dict]:
    """The runs kept for this machine and model (at most two), read from the cache file."""
    return load_runs(key())


def measure(budget_s: float) -> list[dict] | None:
    """Measure this session's model on this machine with a progress bar, in about ``budget_s``
    seconds (roofline 60%, formats 40%); saved to the machine's cache. Waits in line while another
    session measures; None if the line did not move within ``WAIT_S``."""
    if not _LOCK.acquire(blocking=False):
        note = st.info("Another session is measuring on this server; yours waits in line and starts when it ends.")
        if not _LOCK.acquire(timeout=WAIT_S):
            note.empty()
            st.warning("The other measurement is still running; its results will show here when it ends.")
            return None
        note.empty()
    try:
        model = models.chosen_model()
        bar = st.progress(0.0, text="Measuring…")
        roof = measure_roofline(model, budget_s * 0.6, lambda f, what: bar.progress(0.6 * f, text=f"Measuring {what}…"))
        context = passes(model.cfg.block_size)[0][3]
        rows = measure_formats(
            model,
            context,
            budget_s * 0.4,
            progress=lambda f, what: bar.progress(0.6 + 0.4 * f, text=f"Formats: {what}…"),
        )
        bar.empty()
        run = {"roofline": roof.to_dict(), "formats": [asdict(r) for r in rows], "context": context}
        return save_run(key(), run)
    finally:
        _LOCK.release()


def busy() -> bool:
    """True while a measurement runs in this server process."""
    return _LOCK.locked()


SAID = (
    "Ch. 30 §30.6: “Dequantization, packing and specialized integer kernels also affect actual speed; fewer stored "
    "bits do not automatically mean every operation runs faster.”"
)


def two_machines(rows: list[FormatRow] | None) -> None:
    """Fewer bits on two machines: this machine's measured formats (``rows``; None before a measurement) and the
    reference GPU's (measured elsewhere, with its provenance), as speed against bfloat16 side by side, the lesson
    of each beneath its panel, and the reference's whole table."""
    st.subheader("Fewer bits on two machines")
    st.caption(SAID)
    ref = load_reference()
    here = here_ratios(rows) if rows else None
    headline = here_headline(rows) if rows else "not measured yet"
    chart(figures.figure(fig_two_machines, here, headline, ref, gpu_headline(ref)), key=SPEED_TWO_MACHINES_FIG)
    left, right = st.columns(2)
    left.markdown(
        f"**This server** ({here[1]}, batch 1, {model_in_sentence()}): {here_lesson(rows)}"
        if here
        else "**This server**: press **Measure** to time the formats here."
    )
    if here and "block projections" in here[1]:
        left.caption(
            "This panel times the weight products alone, as the reference does; the sentence under the formats "
            "table above times the whole decode step (attention, norms and the output head too), so the two can "
            "rank a format differently."
        )
    right.markdown("**The reference GPU**, measured elsewhere:\n" + "\n".join(f"- {t}" for t in gpu_lessons(ref)))
    st.caption(f"{ref.provenance} Method: {ref.method}")
    with st.expander(f"The reference table ({ref.device}, measured elsewhere)"):
        st.dataframe(
            [
                {
                    "model shape": f"{r.model} ({ref.models[r.model]})",
                    "B": r.batch,
                    "format": r.fmt,
                    "weights MiB": r.weights_mib,
                    "step ms": r.step_ms,
                    "byte floor ms": r.floor_ms,
                    "÷ floor": r.over_floor,
                    "speed vs bf16": r.vs_bf16,
                }
                for r in ref.rows
            ],
            hide_index=True,
        )
