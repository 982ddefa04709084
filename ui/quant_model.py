"""The quantizing-the-model page's session keys and their defaults."""

from __future__ import annotations

from ui.page import followable

QM_EVALUATED = "qm.evaluated"

QM_GROUP = "qm.group"

QM_ROUNDING = "qm.rounding"

QM_DIVERGE_BITS = "qm.diverge_bits"

QM_N_NEW = "qm.n_new"

QM_SWEEP_FIG = "qm.sweep_fig"

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    QM_GROUP: 32,
    QM_ROUNDING: "half_even",
    QM_DIVERGE_BITS: 2,
    QM_N_NEW: 40,
    QM_EVALUATED: None,  # the checkpoint folder whose (slow) evaluation this session asked for
}
# The page's settings (core.lesson.pages.PAGES["quant_model"]) -> their session keys.
SETTINGS = {
    "diverge_bits": QM_DIVERGE_BITS,
    "n_new": QM_N_NEW,
    "group": QM_GROUP,
}


snapshot, show = followable("quant_model", SETTINGS, DEFAULTS)  # the page you can follow (ui.session)
