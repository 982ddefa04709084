"""Streamlit glue shared by the pages: cached read-only resources, the model card, state.

Not in core/ because it imports streamlit.
"""

from __future__ import annotations

import logging

import streamlit as st
import torch

from core import assets, state
from core.context import run_policy
from core.cost import kv_cache_bytes_for
from core.decode import SamplingConfig, generate_cached


class _KnownWidgetWarning(logging.Filter):
    """Pages keep their settings by re-assigning widget values (see ``init_state``); streamlit logs
    that this overrides a widget's default. That override is the point, so the line is dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "was created with a default value but also had its value set via the Session State" not in str(
            record.msg
        )


logging.getLogger("streamlit.elements.lib.policies").addFilter(_KnownWidgetWarning())

# One thread per request: with a whole class on two cores, extra intra-op threads only
# fight each other (and the browser) for the same cores; the tiny model gains nothing.
torch.set_num_threads(1)


@st.cache_resource(show_spinner="Loading the shipped model…")
def model(dtype: str = "float32"):
    """The shipped model, loaded once per dtype and shared read-only by every session."""
    return assets.load_model(dtype)


@st.cache_resource(show_spinner="Quantizing the model's weights…")
def quantized_model(dtype: str, n_bit: int, group_size: int = 32):
    """The shipped model with weight-only ``n_bit`` quantization (``group_size`` inputs per scale),
    shared read-only."""
    from core.quant_model import quantize_weights

    return quantize_weights(model(dtype), n_bit, group_size)


def model_for(key: tuple):
    """The shared model for a (dtype, weight bits or None) key."""
    dtype, n_bit = key
    return model(dtype) if n_bit is None else quantized_model(dtype, n_bit)


@st.cache_resource(show_spinner="Loading the draft model…")
def draft_model(dtype: str = "float32"):
    """The speculative-decoding draft (assets/draft/), shared read-only."""
    return assets.load_model(dtype, assets.ASSETS / "draft")


@st.cache_resource
def tokenizer():
    return assets.load_shipped_tokenizer()


@st.cache_data
def model_card() -> dict:
    return assets.load_model_card()


PERSISTENT_PREFIXES = (
    "ctx.",
    "lat.",
    "quant.",
    "qm.",
    "cost.",
    "batch.",
    "spec.",
    "worked.",
    "L.",
    "H.",
    "d.",
    "b.",
    "T.",
    "memory.",
)
EPHEMERAL_PREFIXES = ("lat.editor", "worked.vectors", "batch.obj", "spec.obj")


def init_state() -> None:
    """Give this session its own copy of every default (never shared between sessions), then,
    once per session, apply lesson state carried in the URL (``?seed=3&step=5&present=1``)."""
    for key, value in state.DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = value
    # Streamlit forgets a widget's value when its page is not shown; re-assigning the value makes
    # it this session's own, so a page's settings survive a visit to another page.
    for key in list(st.session_state.keys()):
        if isinstance(key, str) and key.startswith(PERSISTENT_PREFIXES) and not key.startswith(EPHEMERAL_PREFIXES):
            try:
                st.session_state[key] = st.session_state[key]
            except st.errors.StreamlitAPIException:
                pass  # buttons, uploads and editors cannot be set: they simply start fresh
    if "url.applied" not in st.session_state:
        st.session_state["url.applied"] = True
        values, ignored = state.parse_url_state(st.query_params.to_dict())
        st.session_state.update(values)
        if ignored:
            st.session_state["url.ignored"] = ignored


def note_lost_session() -> None:
    """Say so on screen when this browser tab had a session the server no longer holds: its
    replica of the class server restarted or stopped (or the tab was away longer than streamlit
    keeps a disconnected session), so streamlit's frontend reconnected to a fresh, empty session.

    The signal: a reconnecting frontend asks to resume its previous session by sending that
    session's id as the third entry of the websocket's ``Sec-WebSocket-Protocol`` header. A server
    that still holds the session resumes it, state and all; so a *fresh* session that was asked
    to resume one means the old one is gone. A first visit or a page reload sends no id."""
    if "session.started" in st.session_state:
        return
    st.session_state["session.started"] = True
    entries = st.context.headers.get("Sec-WebSocket-Protocol", "").split(",")
    if len(entries) >= 3 and entries[2].strip():
        st.warning(
            "The class server restarted your session, so this page starts afresh: what you computed "
            "(a prefill, its steps, measurements) is gone. Press **Prefill** to start again.",
            icon=":material/restart_alt:",
        )


PRESENTER_CSS = """
<style>
html, body, [data-testid="stAppViewContainer"] { font-size: 21px; }
[data-testid="stMarkdownContainer"] p, [data-testid="stCaptionContainer"], label p { font-size: 1.15rem !important; }
[data-testid="stMetricValue"], [data-testid="stMetricValue"] p { font-size: 2.6rem !important; }
button p { font-size: 1.25rem !important; }
textarea, input, [data-baseweb="select"] div, [data-testid="stCode"] code { font-size: 1.1rem !important; }
[data-testid="stTable"] td, [data-testid="stTable"] th { font-size: 1.05rem !important; }
[data-testid="stTextArea"] textarea { min-height: 7.5em !important; }
</style>
"""


def presenter_mode() -> bool:
    return bool(st.session_state.get(state.PRESENT))


def apply_presenter_style() -> None:
    """Larger text for a projector. The CSS is this app's own constant, never user text."""
    if presenter_mode():
        st.html(PRESENTER_CSS)


def chart(fig, key: str) -> None:
    """Draw a figure with the app's own template; in presenter mode with larger fonts."""
    if presenter_mode():
        fig.update_layout(font_size=20, hoverlabel_font_size=20, title_font_size=24)
        fig.update_layout(height=int((fig.layout.height or 450) * 1.25))
    st.plotly_chart(fig, theme=None, key=key)


def keep(key: str) -> None:
    """Let a widget's value survive page changes: streamlit forgets widget keys of pages not
    shown, so each widget writes through to a plain key (``key``) that it is restored from."""
    widget_key = f"_w.{key}"
    if widget_key not in st.session_state:
        st.session_state[widget_key] = st.session_state[key]


def sync(key: str) -> None:
    st.session_state[key] = st.session_state[f"_w.{key}"]


def wkey(key: str) -> str:
    return f"_w.{key}"


def sidebar_controls() -> None:
    """Presenter mode toggle (also ``?present=1``) and any URL parameters that were ignored."""
    with st.sidebar:
        keep(state.PRESENT)
        st.toggle(
            "Presenter mode",
            key=wkey(state.PRESENT),
            on_change=sync,
            args=(state.PRESENT,),
            help="Larger text and figures for a projector; the sidebar folds away. Also: add ?present=1.",
        )
        for note in st.session_state.pop("url.ignored", []):
            st.warning(f"Link parameter ignored: {note}.")


def sidebar_model_card() -> None:
    if presenter_mode():
        return  # fewer things on screen while presenting
    m, card = model(), model_card()
    cfg = m.cfg
    weight_bytes = sum(p.numel() * p.element_size() for p in m.parameters())
    with st.sidebar:
        st.subheader("The shipped model")
        st.caption(f"{card['name']} — trained by this project (`python -m core.train`), runs offline.")
        rows = {
            "parameters": f"{card['n_params']:,}",
            "n_layer": cfg.n_layer,
            "n_head (query heads)": cfg.n_head,
            "n_kv_head (KV heads)": f"{cfg.n_kv_head} ({cfg.attention_kind})",
            "head_dim": cfg.head_dim,
            "d_model (n_embd)": cfg.n_embd,
            "context window": f"{cfg.block_size} positions",
            "vocabulary": f"{cfg.vocab_size:,} tokens",
            "weight bytes (float32)": f"{weight_bytes:,} B ({weight_bytes / 2**20:.2f} MiB)",
            "KV bytes per token (float32)": f"{kv_cache_bytes_for(cfg, 1, 4):,} B",
            "validation loss": f"{card['validation_loss_nats_per_token']:.3f} nats/token "
            f"(perplexity {card['validation_perplexity']:.2f})",
        }
        st.table({"": list(rows), "value": [str(v) for v in rows.values()]}, hide_index=True)


def chart_in(container, fig, key: str) -> None:
    """``chart`` inside a column or other container."""
    with container:
        chart(fig, key)


@st.cache_data(show_spinner=False, max_entries=256)
def greedy_tokens(prompt_ids: tuple[int, ...], n_new: int, weight_bits: int | None = None, group: int = 32):
    """Greedy continuation of the shipped model (float32, or with quantized weights). Deterministic,
    so it is computed once and shared; every caller gets its own copy."""
    m = model() if weight_bits is None else quantized_model("float32", weight_bits, group)
    return generate_cached(m, list(prompt_ids), n_new, SamplingConfig()).tokens


@st.cache_data(show_spinner=False, max_entries=256)
def window_run(prompt_ids: tuple[int, ...], n_new: int, window: int, policy: str):
    """``core.context.run_policy`` on the shipped model, cached (deterministic, greedy)."""
    return run_policy(model(), list(prompt_ids), n_new, window, policy)
