"""The frame around every page: the navigation's sections, each session's state and model, the
sidebar (presenter toggle, model picker and card), link notes and a lost session's note.
"""

from __future__ import annotations

import streamlit as st

from core.cost.counts import kv_cache_bytes_for
from core.quant.model_weights import weight_storage_bytes
from ui import models, picker, tables
from ui.models import model, model_card
from ui.present import PRESENT, presenter_mode

URL_IGNORED = "url.ignored"  # list[str]: query parameters this session ignored, shown once

SESSION_STARTED = "session.started"

UI_PAGE = "ui.page"

UI_PREV_PAGE = "ui.prev_page"

URL_APPLIED = "url.applied"
URL_FIRST = "url.first"  # the address's query parameters at this session's first run


# The navigation (sections in the top bar) and each page's heading: one list, so the two never differ.
SECTIONS = {
    "Decode": (
        ("app_pages/decode.py", "Prefill & decode", ":material/play_arrow:"),
        ("app_pages/worked.py", "The worked example", ":material/calculate:"),
        ("app_pages/context.py", "The context window", ":material/width_full:"),
        ("app_pages/cache.py", "What the cache holds", ":material/database:"),
        ("app_pages/see_it_move.py", "See it move", ":material/movie:"),
        ("app_pages/latency.py", "Latency on a timeline", ":material/timer:"),
        ("app_pages/batching.py", "Batching", ":material/stacks:"),
        ("app_pages/speculative.py", "Speculative decoding", ":material/fast_forward:"),
        ("app_pages/paged.py", "Paged KV cache", ":material/grid_view:"),
        ("app_pages/serve_class.py", "Serve the class", ":material/dns:"),
    ),
    "Cost & memory": (
        ("app_pages/cost.py", "The bill per token", ":material/show_chart:"),
        ("app_pages/memory.py", "KV-cache memory", ":material/memory:"),
        ("app_pages/weights.py", "Weights & model cards", ":material/balance:"),
        ("app_pages/speed.py", "Speed on this machine", ":material/speed:"),
    ),
    "Quantization": (
        ("app_pages/quantize.py", "The quantization ruler", ":material/straighten:"),
        ("app_pages/quant_model.py", "Quantizing the model", ":material/compress:"),
    ),
    "Practice": (
        ("app_pages/practice.py", "Practice", ":material/quiz:"),
        ("app_pages/summary.py", "What you now know", ":material/checklist:"),
    ),
}
PAGES = tuple(page for pages in SECTIONS.values() for page in pages)
DECODE_PAGE = "app_pages/decode.py"  # the default page, served at the app's root address
TITLES = {path.removeprefix("app_pages/").removesuffix(".py"): name for path, name, _ in PAGES}
ICONS = {path.removeprefix("app_pages/").removesuffix(".py"): icon for path, _, icon in PAGES}


def navigation_pages() -> dict[str, list]:
    """``SECTIONS`` as ``st.Page``s for ``st.navigation``. The decode page is the default, served at the root
    address; its own name, ``/decode`` (as the other pages have theirs), is a hidden page that opens it with the
    address's parameters, since streamlit serves a default page at the root only."""
    pages = {
        section: [
            st.Page(path, title=name, icon=icon, default=path == DECODE_PAGE, url_path=_url_path(path))
            for path, name, icon in entries
        ]
        for section, entries in SECTIONS.items()
    }
    pages["Decode"].append(st.Page(_open_decode, title=TITLES["decode"], url_path="decode", visibility="hidden"))
    return pages


def _url_path(path: str) -> str:
    """A page's address: its file's name; the default page's (never shown: it is served at the root) another."""
    name = path.removeprefix("app_pages/").removesuffix(".py")
    return "prefill-and-decode" if path == DECODE_PAGE else name


def _open_decode() -> None:
    st.switch_page(DECODE_PAGE, query_params=st.query_params.to_dict())


def first_address() -> dict:
    """The address's query parameters as this session's first run found them (a copy). Each mode reads what it
    needs from here once per session, whatever another mode's move has since written into the address bar."""
    ss = st.session_state
    if URL_FIRST not in ss:
        ss[URL_FIRST] = st.query_params.to_dict()
    return dict(ss[URL_FIRST])


def url_applied() -> None:
    """This session has read its address's share link (once per session)."""
    st.session_state[URL_APPLIED] = True


def note_ignored(ignored: list[str]) -> None:
    """Query parameters this session ignored, said once above the page (``url_notes``)."""
    if ignored:
        st.session_state[URL_IGNORED] = [*st.session_state.get(URL_IGNORED, []), *ignored]


def note_lost_session() -> None:
    """Say so on screen when this browser tab had a session the server no longer holds: its
    replica of the class server restarted or stopped (or the tab was away longer than streamlit
    keeps a disconnected session), so streamlit's frontend reconnected to a fresh, empty session.

    The signal: a reconnecting frontend asks to resume its previous session by sending that
    session's id as the third entry of the websocket's ``Sec-WebSocket-Protocol`` header. A server
    that still holds the session resumes it, state and all; so a *fresh* session that was asked
    to resume one means the old one is gone. A first visit or a page reload sends no id."""
    if SESSION_STARTED in st.session_state:
        return
    st.session_state[SESSION_STARTED] = True
    entries = st.context.headers.get("Sec-WebSocket-Protocol", "").split(",")
    if len(entries) >= 3 and entries[2].strip() and "class" in st.query_params:
        st.info(  # a class's page: its cookie rejoins the class at the teacher's step (ui/classroom)
            "The class server restarted your session: you are back in your class at your teacher's step, "
            "with your answers kept.",
            icon=":material/restart_alt:",
        )
    elif len(entries) >= 3 and entries[2].strip():
        st.warning(
            "The class server restarted your session, so this page starts afresh: what you computed "
            "(a prefill, its steps, measurements) is gone. Press **Prefill** to start again.",
            icon=":material/restart_alt:",
        )


def sidebar_controls() -> None:
    """Presenter mode toggle (also ``?present=1``) and any URL parameters that were ignored."""
    with st.sidebar:
        st.toggle(
            "Presenter mode",
            key=PRESENT,
            persist_state="session",
            help="Larger text and figures for a projector; the sidebar folds away. Also: add ?present=1.",
        )
    picker.picker()


def url_notes() -> None:
    """Link parameters that could not be used, said once in the main area where the class looks."""
    for note in st.session_state.pop(URL_IGNORED, []):
        st.warning(f"Link parameter ignored: {note}.")  # the note quotes the link as a code span
    picker.refusal_note()


def track_page(page) -> None:
    """Remember the page of this full run and of the one before (a figure element that lives
    across reruns is gone once its page was left)."""
    st.session_state[UI_PREV_PAGE] = st.session_state.get(UI_PAGE)
    st.session_state[UI_PAGE] = page.url_path


def came_from_another_page() -> bool:
    """This full run shows a different page than the one before it."""
    return st.session_state.get(UI_PREV_PAGE) != st.session_state.get(UI_PAGE)


def sidebar_model_card() -> None:
    if presenter_mode():
        return  # fewer things on screen while presenting
    if models.active().path is not None:
        return picker.sidebar_card(models.active().path)
    m, card = model(), model_card()
    cfg = m.cfg
    weight_bytes = weight_storage_bytes(m, None)
    with st.sidebar:
        st.subheader("The shipped model")
        st.caption(f"{card['name']} — trained by this project (`python -m core.model.train`), runs offline.")
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
        st.table(tables.arrow({"": list(rows), "value": [str(v) for v in rows.values()]}), hide_index=True)
