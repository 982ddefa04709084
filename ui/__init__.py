"""The streamlit glue, and the pages' small face: what a page calls as ``ui.*``.

The pages import ``ui`` and read as layout (``ui.title``, ``ui.chart``, ``ui.refuse``, ``ui.model``);
the modules behind the face: ``ui.frame`` (navigation, session state, sidebar), ``ui.page`` (page
helpers), ``ui.present`` (presenter mode), ``ui.models`` (the shared read-only models). Modules inside
``ui/`` import each other directly, never this face (so no import runs in a circle).
"""

from ui.frame import (
    PAGES,
    SECTIONS,
    TITLES,
    came_from_another_page,
    init_state,
    note_lost_session,
    sidebar_controls,
    sidebar_model_card,
    track_page,
    url_notes,
)
from ui.models import model, model_for, quantized_model, shipped_only_note, tokenizer
from ui.page import button_row, chart, chart_in, refuse, reset, set_message, show_message, title
from ui.present import (
    apply_presenter_style,
    beside,
    keep_presenter_in_url,
    presenter_mode,
    share_link_in_url,
    style_sheet,
    swapped,
)

__all__ = [
    "PAGES",
    "SECTIONS",
    "TITLES",
    "apply_presenter_style",
    "beside",
    "button_row",
    "came_from_another_page",
    "chart",
    "chart_in",
    "init_state",
    "keep_presenter_in_url",
    "model",
    "model_for",
    "note_lost_session",
    "presenter_mode",
    "quantized_model",
    "refuse",
    "reset",
    "set_message",
    "share_link_in_url",
    "shipped_only_note",
    "show_message",
    "sidebar_controls",
    "sidebar_model_card",
    "style_sheet",
    "swapped",
    "title",
    "tokenizer",
    "track_page",
    "url_notes",
]
