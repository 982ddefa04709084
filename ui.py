"""Streamlit glue shared by the pages: cached read-only resources, the model card, state.

Not in core/ because it imports streamlit.
"""

from __future__ import annotations

import copy
import html
from collections.abc import Callable

import streamlit as st
import torch

import ui_models
import ui_picker
import ui_tables
from core import assets, share, state
from core.cost import kv_cache_bytes_for
from core.quant_model import weight_storage_bytes
from core.text import markdown_literal, sentence
from ui_present import (  # noqa: F401 — the pages call these as ui.*
    A11Y_CSS,
    NARROW_NOTE,
    PRESENTER_CSS,
    apply_presenter_style,
    keep_presenter_in_url,
    presenter_mode,
    share_link_in_url,
    style_sheet,
)

# The navigation (sections in the top bar) and each page's heading: one list, so the two never differ.
SECTIONS = {
    "Decode": (
        ("lessons/decode.py", "Prefill & decode", ":material/play_arrow:"),
        ("lessons/worked.py", "The worked example", ":material/calculate:"),
        ("lessons/context.py", "The context window", ":material/width_full:"),
        ("lessons/latency.py", "Latency on a timeline", ":material/timer:"),
        ("lessons/batching.py", "Batching", ":material/stacks:"),
        ("lessons/speculative.py", "Speculative decoding", ":material/fast_forward:"),
        ("lessons/paged.py", "Paged KV cache", ":material/grid_view:"),
    ),
    "Cost & memory": (
        ("lessons/cost.py", "The bill per token", ":material/show_chart:"),
        ("lessons/memory.py", "KV-cache memory", ":material/memory:"),
        ("lessons/weights.py", "Weights & model cards", ":material/balance:"),
    ),
    "Quantization": (
        ("lessons/quantize.py", "The quantization ruler", ":material/straighten:"),
        ("lessons/quant_model.py", "Quantizing the model", ":material/compress:"),
    ),
    "Practice": (("lessons/practice.py", "Practice", ":material/quiz:"),),
}
PAGES = tuple(page for pages in SECTIONS.values() for page in pages)
TITLES = {path.removeprefix("lessons/").removesuffix(".py"): name for path, name, _ in PAGES}

shipped_only_note = ui_models.shipped_only_note  # pages that keep the shipped model say so

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


def model_for(key):
    """The shared model for a ``core.session.ModelKey`` (source, precision, weight bits or None)."""
    from core.session import ModelKey

    key = ModelKey.of(key)
    if key.source is not None:
        if key.weight_bits is None:
            return ui_models.checkpoint_model(key.source, key.dtype)
        return ui_models.quantized_checkpoint(key.source, key.dtype, key.weight_bits)
    return model(key.dtype) if key.weight_bits is None else quantized_model(key.dtype, key.weight_bits)


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


def init_state() -> None:
    """Give this session its own copy of every default (never shared between sessions), make its
    chosen model the one the pages use (``ui_models.resolve``), then, once per session, apply
    lesson state carried in the URL (``?model=…&seed=3&step=5&present=1``; limits from that model).

    Widgets keep their values across pages themselves (``persist_state="session"``, keys from
    ``core.state``); this only seeds what a session starts with."""
    for key, value in state.DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = copy.deepcopy(value)
    first = "url.applied" not in st.session_state
    params = st.query_params.to_dict() if first else {}
    if first and "model" in params:  # a share link names its model: choose it before limits apply
        ui_models.choose_from_link(params.pop("model"))
    ui_models.resolve()  # the session's model, loaded before any page runs
    if first:
        st.session_state["url.applied"] = True
        values, ignored = share.parse_url_state(params, ui_models.chosen_model().cfg)
        st.session_state.update(values)
        ignored = st.session_state.pop("url.model_ignored", []) + ignored
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


def chart(fig, key: str, table: bool = True) -> None:
    """Draw a figure with the app's own template; in presenter mode with larger fonts.

    Under it, its text alternative: the sentence with the figure's real numbers that its ``core.viz``
    ``fig_*`` function gave it (``describe_*``), shown as text (literally: it may quote typed tokens),
    and, with ``table``, a "Show as table" toggle listing the numbers the figure draws."""
    from core.viz.table import figure_table
    from core.viz.theme import description_of

    if presenter_mode():
        fig.update_layout(font_size=20, hoverlabel_font_size=20, title_font_size=24)
        fig.update_layout(height=int((fig.layout.height or 450) * 1.25))
    st.plotly_chart(fig, theme=None, key=key)
    keep_figure(fig)
    description = description_of(fig)
    if description is None:
        return
    row = st.container(horizontal=True, vertical_alignment="center", gap="small")
    row.html(f'<p class="chart-desc">{html.escape(description)}</p>')
    if table and row.toggle("Show as table", key=f"{key}.table"):
        st.dataframe(readable_table(figure_table(fig)), hide_index=True)


def readable_table(rows: list[dict]):
    """``rows`` as a DataFrame whose empty cells (a heatmap's masked, future positions) read "—", not
    "None": those columns become text, their numbers written with up to 6 significant digits."""
    import pandas as pd

    df = pd.DataFrame(rows)
    for col in df.columns[df.isna().any()]:
        df[col] = [("—" if pd.isna(v) else f"{v:.6g}" if isinstance(v, float) else str(v)) for v in df[col]]
    return df


def keep_figure(fig) -> None:
    """Keep this run's first figure (the page's main one) where app.py asked (``state.HANDOUT_SLOTS``),
    for the handout: the figure as the learner left it."""
    for slot in st.session_state.pop(state.HANDOUT_SLOTS, ()):
        st.session_state[state.HANDOUT_FIGURES][slot] = fig


def title(page: str) -> None:
    """The page's heading: its name in the navigation (``SECTIONS``)."""
    st.title(TITLES[page])


def refuse(err, prefix: str = "", level: str = "error") -> None:
    """Show why input was refused, as a sentence: ``refuse(err, "Check the lengths: ")`` shows
    "Check the lengths: every request needs at least 1 position." (``level``: error, warning, info).
    Shown literally (``core.text.markdown_literal``): a message may quote what was typed or what a
    file holds (``'**1**' is not a number``, a header's ``:red[x]``), which must not act as markdown."""
    getattr(st, level)(markdown_literal(sentence(f"{prefix}{err}")))


def set_message(key: str, text, level: str = "warning") -> None:
    """Keep a message for ``show_message`` (callbacks run before the page draws)."""
    st.session_state[key] = (level, markdown_literal(sentence(text)))  # may quote typed text


def show_message(key: str) -> None:
    """Show the message kept under ``key`` (``set_message``), if any."""
    kept = st.session_state.get(key)
    if kept:
        level, text = kept
        getattr(st, level)(text)


def reset(*keys: str) -> Callable[[], None]:
    """A callback that puts ``keys`` back to their defaults in ``core.state`` (a Reset button)."""
    return lambda: st.session_state.update({k: copy.deepcopy(state.DEFAULTS[k]) for k in keys})


def button_row(*buttons: tuple[str, Callable[[], None]]) -> None:
    """One row of equal-width buttons (Prefill · Step · Reset and the like); the first is primary.

    Each button is ``(label, callback)``: the callback changes session state, then the page
    reruns once and draws the result."""
    for i, (col, (label, action)) in enumerate(zip(st.columns(len(buttons)), buttons, strict=True)):
        col.button(label, type="primary" if i == 0 else "secondary", on_click=action, width="stretch")


def sidebar_controls() -> None:
    """Presenter mode toggle (also ``?present=1``) and any URL parameters that were ignored."""
    with st.sidebar:
        st.toggle(
            "Presenter mode",
            key=state.PRESENT,
            persist_state="session",
            help="Larger text and figures for a projector; the sidebar folds away. Also: add ?present=1.",
        )
    ui_picker.picker()


def url_notes() -> None:
    """Link parameters that could not be used, said once in the main area where the class looks."""
    for note in st.session_state.pop("url.ignored", []):
        st.warning(f"Link parameter ignored: {note}.")  # the note quotes the link as a code span
    ui_picker.refusal_note()


def track_page(page) -> None:
    """Remember the page of this full run and of the one before (a figure element that lives
    across reruns is gone once its page was left)."""
    st.session_state["ui.prev_page"] = st.session_state.get("ui.page")
    st.session_state["ui.page"] = page.url_path


def came_from_another_page() -> bool:
    """This full run shows a different page than the one before it."""
    return st.session_state.get("ui.prev_page") != st.session_state.get("ui.page")


def sidebar_model_card() -> None:
    if presenter_mode():
        return  # fewer things on screen while presenting
    if ui_models.active().path is not None:
        return ui_picker.sidebar_card(ui_models.active().path)
    m, card = model(), model_card()
    cfg = m.cfg
    weight_bytes = weight_storage_bytes(m, None)
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
        st.table(ui_tables.arrow({"": list(rows), "value": [str(v) for v in rows.values()]}), hide_index=True)


def chart_in(container, fig, key: str, table: bool = True) -> None:
    """``chart`` inside a column or other container."""
    with container:
        chart(fig, key, table)
