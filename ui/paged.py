"""The paged KV cache page's session keys and their defaults."""

from __future__ import annotations

from ui.page import followable, put_back

PAGED_BUILT = "paged.built"

PAGED_ENGINE = "paged.engine"

PAGED_MESSAGE = "paged.message"

PAGED_SETTINGS = "paged.settings"

PAGED_PRESET = "paged.preset"

PAGED_POLICY = "paged.policy"

PAGED_BLOCK_SIZE = "paged.block_size"

PAGED_N_BLOCKS = "paged.n_blocks"

PAGED_COMPARE_FIG = "paged.compare_fig"

PAGED_POOL = "paged.pool"

PAGED_TABLES = "paged.tables"

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    PAGED_PRESET: "eight students, one system prompt",  # one of core.serving.paged_presets.PRESETS
    PAGED_POLICY: "continuous",
    PAGED_BLOCK_SIZE: 16,
    PAGED_N_BLOCKS: 48,
    PAGED_ENGINE: None,  # core.serving.scheduler.Engine | None: the requests being stepped
    PAGED_BUILT: None,  # (preset, block size, pool) of the engine shown
    PAGED_SETTINGS: None,  # (preset, policy, block size, pool) the engine was built with
    PAGED_MESSAGE: None,  # the last refusal, shown until the settings change
}
# The page's settings (core.lesson.pages.PAGES["paged"]) -> their session keys.
SETTINGS = {
    "preset": PAGED_PRESET,
    "policy": PAGED_POLICY,
    "block_size": PAGED_BLOCK_SIZE,
    "n_blocks": PAGED_N_BLOCKS,
}
# Objects computed with one model: back to their defaults when a session switches models.
MODEL_BOUND = (
    PAGED_ENGINE,
    PAGED_BUILT,
    PAGED_SETTINGS,
    PAGED_MESSAGE,
)


snapshot, show = followable("paged", SETTINGS, DEFAULTS)  # the page you can follow (ui.session)


def forget_model(cfg, checkpoint: bool) -> None:
    """A switch of model: what this page computed with the previous one goes (``ui.session.forget_model_state``)."""
    put_back(DEFAULTS, MODEL_BOUND)
