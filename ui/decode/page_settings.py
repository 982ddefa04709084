"""The decode page's settings as a page you can follow (``ui.session``): its typed settings now (``snapshot``), a
lesson stop's or a share link's request shown (``show``, ``show_link``), the stage's layer and head, what a switch
of model drops, and the request's uid kept when a class's console takes its request back."""

from __future__ import annotations

import streamlit as st

from core.decode import settings as decode_settings
from core.lesson.pages import PAGES
from ui.decode import keys as decode_keys
from ui.decode.actions import reset, session
from ui.page import put_back


def snapshot():
    """The decode page's typed settings as this session has them (``step``: the steps its request has taken)."""
    ss, sess = st.session_state, session()
    values = {name: ss[key] for name, key in decode_keys.SETTINGS.items() if name != "step"}
    return PAGES["decode"].make({**values, "step": None if sess is None else sess.n_steps})


def show(settings) -> None:
    """A lesson stop's request settings, before the page runs: a setting the stop leaves out goes back to its
    default; with ``step``, the request starts afresh and the page prefills it and replays that many steps."""
    given = {name: getattr(settings, name) for name in decode_keys.SETTINGS}
    defaults = {name: decode_keys.DEFAULTS.get(key) for name, key in decode_keys.SETTINGS.items()}
    show_link({name: defaults[name] if value is None else value for name, value in given.items()})


def show_link(values: dict) -> None:
    """A share link's settings ({setting: value}, ``core.decode.share.parse_url_state``): only those it gives;
    with ``step`` (None: no replay) the request starts afresh and the page prefills and replays it."""
    if values.get("step") is not None:
        reset()
    ss = st.session_state
    for name, value in values.items():
        if name == "step" and value is None:
            ss.pop(decode_keys.URL_STEP, None)
        else:
            ss[decode_keys.SETTINGS[name]] = value


def show_view(layer: int, head) -> None:
    """The stage's layer and head (a query head, or ``MEAN_HEADS``): a class's display shows the teacher's."""
    st.session_state.update({decode_keys.DECODE_LAYER: layer, decode_keys.DECODE_HEAD: head})


def forget_model(cfg, checkpoint: bool) -> None:
    """A switch of model: the request and its question go, the heatmap is drawn whole again, and the layer and
    head go back to their defaults within the new model's ``cfg``."""
    ss = st.session_state
    put_back(decode_keys.DEFAULTS, (*decode_keys.MODEL_BOUND, *decode_keys.MODEL_SHAPED))
    ss.pop(decode_keys.DECODE_VIEW, None)
    layer, head = ss[decode_keys.DECODE_LAYER], ss[decode_keys.DECODE_HEAD]
    show_view(min(layer, cfg.n_layer - 1), head if head == decode_settings.MEAN_HEADS else min(head, cfg.n_head - 1))


def keep_uid(uid: str) -> None:
    """This session's request takes ``uid`` (a class's console taking its request back after a reload: the
    class's question ids and its followers' stages name the request by it)."""
    if session() is not None:
        session().uid = uid
