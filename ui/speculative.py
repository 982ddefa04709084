"""The speculative-decoding page's distribution check (``app_pages/speculative.py`` stays layout): the samples box,
the Sample button and the chart of the three distributions, and in presenter mode the check sampled on opening the
page, so its chart is on the projector's first screen without a click (issue 37, item 10)."""

from __future__ import annotations

import streamlit as st

from core.model.tokenizer import token_text
from core.serving.speculative import acceptance_check
from core.viz.speculative import fig_three_distributions
from ui import models
from ui.page import chart, followable, put_back, refuse
from ui.present import presenter_mode, swapped

SPEC_DIST = "spec.dist"

SPEC_MSG = "spec.msg"

SPEC_OBJ = "spec.obj"

SPEC_SPEED = "spec.speed"

SPEC_K = "spec.k"

SPEC_T = "spec.t"

SPEC_SEED = "spec.seed"

SPEC_N = "spec.n"

SPEC_DIST_FIG = "spec.dist_fig"

SPEC_DIST_GREEDY = "spec.dist_greedy"

# presenter mode sampled the check on opening the page (once a session)
SPEC_DIST_SAMPLED_ONCE = "spec.dist_sampled_once"

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    SPEC_K: 4,
    SPEC_T: 0.0,
    SPEC_SEED: 0,
    SPEC_N: 5_000,
    SPEC_OBJ: None,
    SPEC_MSG: None,
    SPEC_DIST: None,
    SPEC_SPEED: None,
}
# The page's settings (core.lesson.pages.PAGES["speculative"]) -> their session keys.
SETTINGS = {
    "k": SPEC_K,
    "temperature": SPEC_T,
    "seed": SPEC_SEED,
}
# Objects computed with one model: back to their defaults when a session switches models.
MODEL_BOUND = (
    SPEC_OBJ,
    SPEC_MSG,
    SPEC_DIST,
    SPEC_SPEED,
)


DIST_MAX_PX = 470  # presenter mode: the chart and its caption beside the controls on a 1080-px screen


def distribution_section(target, draft, prompt_ids: list[int], temperature: float, seed: int, controls, figure):
    """ "Does it preserve the target's distribution?": its heading, text and chart in ``figure``; the samples box and
    the Sample button there too on a laptop, in ``controls`` (the column beside it) in presenter mode."""
    present, ss = presenter_mode(), st.session_state
    figure.subheader("Does it preserve the target's distribution?")
    figure.caption(
        "At the prompt's next position: draw many first tokens of a round (propose from the draft, apply the "
        "acceptance rule) and compare with the target's own distribution and with the draft's."
    )
    asks = controls if present else figure
    n = asks.select_slider("Samples", [1_000, 5_000, 20_000], key=SPEC_N, persist_state="session")
    asked = asks.button("Sample")
    if asked or (present and not ss.get(SPEC_DIST_SAMPLED_ONCE) and not ss.get(SPEC_DIST)):
        ss[SPEC_DIST_SAMPLED_ONCE] = True
        try:
            ss[SPEC_DIST] = acceptance_check(target, draft, prompt_ids, temperature, n, seed)
            ss[SPEC_DIST_GREEDY] = temperature == 0  # asked at 0: said below, whatever the slider is now
        except ValueError as err:
            with asks:
                refuse(err, level="warning")
    check = ss.get(SPEC_DIST)
    if not check:
        return
    text, drawing = swapped(figure)  # presenter mode: the chart first, its numbers under it
    text.markdown(
        f"Temperature {check.temperature:g}"
        + (" (asked at 0, greedy, where both are one token: sampled at 1)" if ss[SPEC_DIST_GREEDY] else "")
        + f", {check.n:,} samples: total variation (speculative samples vs target) "
        f"= **{check.tv_samples:.4f}**; (draft vs target) = **{check.tv_draft:.4f}**. Sampling alone gives "
        f"{check.tv_noise:.4f} on average at this sample size."
    )
    tok = models.chosen_tokenizer()
    labels = [token_text(tok, s.token) for s in check.top]
    with drawing:
        chart(fig_three_distributions(labels, check.top), key=SPEC_DIST_FIG, present_max_px=DIST_MAX_PX)


snapshot, show = followable("speculative", SETTINGS, DEFAULTS)  # the page you can follow (ui.session)


def forget_model(cfg, checkpoint: bool) -> None:
    """A switch of model: what this page computed with the previous one goes (``ui.session.forget_model_state``)."""
    put_back(DEFAULTS, MODEL_BOUND)
