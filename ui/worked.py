"""The worked example page's session keys and their defaults."""

from __future__ import annotations

from ui.page import followable

WORKED_ASK_FIRST = "worked.ask_first"

WORKED_SCALED = "worked.scaled"

WORKED_GRID = "worked.grid"

WORKED_VECTORS = "worked.vectors"

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    WORKED_SCALED: False,  # ask_first: shares hidden until revealed
    WORKED_ASK_FIRST: False,  # ask_first: shares hidden until revealed
}
# The page's settings (core.lesson.pages.PAGES["worked"]) -> their session keys.
SETTINGS = {
    "scaled": WORKED_SCALED,
    "ask_first": WORKED_ASK_FIRST,
}


snapshot, show = followable("worked", SETTINGS, DEFAULTS)  # the page you can follow (ui.session)
