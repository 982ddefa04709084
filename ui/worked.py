"""The worked example page's session keys and their defaults."""

from __future__ import annotations

from ui.page import settings_now, show_settings

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


def snapshot():
    """The page's settings as this session has them (a class's plan carries them to followers)."""
    return settings_now("worked", SETTINGS)


def show(settings) -> None:
    """Show ``settings`` (a lesson stop's, a class's plan's) on the page, before it runs."""
    show_settings(SETTINGS, DEFAULTS, settings)
