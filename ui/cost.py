"""The bill-per-token page's session keys and their defaults."""

from __future__ import annotations

from ui.page import followable, put_back

COST_MEASURED = "cost.measured"

COST_LAYERS = "cost.layers"

COST_HEADS = "cost.heads"

COST_N_MAX = "cost.n_max"

COST_N_PROMPT = "cost.n_prompt"

COST_M_NEW = "cost.m_new"

COST_MEASURED_FIG = "cost.measured_fig"

COST_SHAPES_FIG = "cost.shapes_fig"

COST_STEP_WORK_FIG = "cost.step_work_fig"

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    COST_LAYERS: 1,
    COST_HEADS: 1,
    COST_N_MAX: 10_000,
    COST_N_PROMPT: 1_000,
    COST_M_NEW: 100,
    COST_MEASURED: None,
}
# The page's settings (core.lesson.pages.PAGES["cost"]) -> their session keys.
SETTINGS = {
    "layers": COST_LAYERS,
    "heads": COST_HEADS,
    "n_max": COST_N_MAX,
    "n_prompt": COST_N_PROMPT,
    "m_new": COST_M_NEW,
}
# Objects computed with one model: back to their defaults when a session switches models.
MODEL_BOUND = (COST_MEASURED,)


snapshot, show = followable("cost", SETTINGS, DEFAULTS)  # the page you can follow (ui.session)


def forget_model(cfg, checkpoint: bool) -> None:
    """A switch of model: what this page computed with the previous one goes (``ui.session.forget_model_state``)."""
    put_back(DEFAULTS, MODEL_BOUND)
