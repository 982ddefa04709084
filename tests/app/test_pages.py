"""Every page's heading is its name in the navigation."""

import pytest

import ui
from tests.helpers.app_util import new_app

PAGES = [path for path, _, _ in ui.PAGES]


@pytest.mark.parametrize("path", PAGES)
def test_heading_is_the_navigation_name(path):
    """The page's h1 reads exactly as its entry in app.py's navigation."""
    at = new_app(path)
    name = next(n for p, n, _ in ui.PAGES if p == path)
    assert [t.value for t in at.title] == [name]
