"""A session's state with owners: each feature's keys and defaults live in its own ui module (``DEFAULTS``, seeded
here once per session, never shared), what a switch of model puts back, and each followable page's typed settings
by page name (``core.lesson.pages.PAGES``): ``snapshot(page)`` and ``show(page, settings)``, which a lesson stop, a
share link and a class's plan all call. Class mode's own keys are seeded by class mode (``ui.classroom``).
"""

from __future__ import annotations

import copy

import streamlit as st

from core.decode import share
from core.lesson.pages import PAGES
from ui import (
    batching,
    cache_demo,
    context,
    cost,
    frame,
    gguf,
    latency_figure,
    memory_terms,
    models,
    page,
    paged,
    practice,
    practice_saved,
    present,
    quant,
    quant_model,
    see_it_move,
    speculative,
    speed,
    weights,
    worked,
)
from ui.decode import keys as decode_keys
from ui.decode import page_settings as decode_page
from ui.lesson import keys as lesson_keys
from ui.serve_class import keys as serve_keys

SEEDED = (
    present, page, models, decode_keys, worked, context, cache_demo, see_it_move, latency_figure, batching,
    speculative, paged, cost, memory_terms, gguf, weights, quant, quant_model, practice, practice_saved, speed,
    lesson_keys, serve_keys,
)  # fmt: skip
# Page name -> the module that owns its settings (its ``snapshot()`` and ``show(settings)``); a page with no
# settings has none.
OWNERS = {
    "decode": decode_page,
    "worked": worked,
    "context": context,
    "cache": cache_demo,
    "see_it_move": see_it_move,
    "latency": latency_figure,
    "batching": batching,
    "speculative": speculative,
    "paged": paged,
    "cost": cost,
    "memory": memory_terms,
    "quantize": quant,
    "quant_model": quant_model,
    "practice": practice,
}
# Page name -> the settings a fragment of that page draws by itself. A class's follower on the page listens to the
# class in that fragment (not in the strip above the page) and takes a plan that moved only these settings in a run
# of the fragment alone, not of the whole page (40 followers on 2 cores: p95 938 → 556 ms; docs/benchmarks.md,
# "A guided lesson and page settings followed").
IN_FRAGMENT = {"quantize": quant.FRAGMENT_SETTINGS, "memory": memory_terms.FRAGMENT_SETTINGS}
# What a switch of model drops, per owner: objects computed with the previous model and choices that depend on its
# shape (a request's tokens mean nothing to another tokenizer; layer 3 does not exist in a 2-layer model).
FORGETS = (
    decode_page.forget_model,
    context.forget_model,
    speculative.forget_model,
    batching.forget_model,
    paged.forget_model,
    cost.forget_model,
    latency_figure.forget_model,
    memory_terms.forget_model,
)


def page_of(script: str | None) -> str | None:
    """The page name (a key of ``PAGES``) of a page script, or None."""
    return next((name for name, spec in PAGES.items() if spec.script == script), None)


def snapshot(name: str):
    """Page ``name``'s typed settings as this session has them, or None for a page without settings."""
    owner = OWNERS.get(name)
    return None if owner is None else owner.snapshot()


def show(name: str, settings) -> None:
    """Show typed ``settings`` on page ``name`` in this session (before the page runs)."""
    if name in OWNERS and settings is not None:
        OWNERS[name].show(settings)


def in_fragment(name: str | None) -> frozenset[str]:
    """The settings page ``name`` draws in a fragment of its own (empty: none; the decode page's stage takes Steps,
    not settings)."""
    return IN_FRAGMENT.get(name, frozenset())


def show_part(name: str, values: dict) -> None:
    """Show ``values`` ({setting: value}, of ``in_fragment(name)``) inside page ``name``'s fragment."""
    OWNERS[name].show_part(values)


def forget_model_state(cfg, checkpoint: bool) -> None:
    """Drop every object computed with the previous model (a request, a batch, measurements) and put the per-page
    choices that depend on its shape (layer, head, window) back to their defaults, within the new model's ``cfg``:
    no page mixes two models' tokens or reads a layer the new model does not have. The memory page's preset
    becomes the model in use."""
    for forget in FORGETS:
        forget(cfg, checkpoint)


models.FORGET.append(forget_model_state)  # the one switch of model, wherever it happens (ui.models.resolve)


def init_state() -> None:
    """Give this session its own copy of every owner's defaults (never shared between sessions), make its
    chosen model the one the pages use (``ui.models.resolve``), then, once per session, apply a share link's
    request carried in the URL (``?model=…&seed=3&step=5&present=1``; limits from that model) through the
    decode page's ``show``. Widgets keep their values across pages themselves (``persist_state="session"``)."""
    ss = st.session_state
    for owner in SEEDED:
        for key, value in owner.DEFAULTS.items():
            if key not in ss:
                ss[key] = copy.deepcopy(value)
    first = frame.URL_APPLIED not in ss
    params = frame.first_address() if first else {}
    if first and "model" in params:  # a share link names its model: choose it before limits apply
        models.choose_from_link(params.pop("model"))
    models.resolve()  # the session's model, loaded before any page runs
    if first:
        frame.url_applied()
        values, ignored = share.parse_url_state(params, models.chosen_model().cfg)
        if values.pop("present", False):
            present.turn_on()
        if values:
            decode_page.show_link(values)
        frame.note_ignored(models.take_link_notes() + ignored)
