"""Every page's heading is its name in the navigation."""

import pytest

from bench.fresh_app import new_app
from ui import frame

PAGES = [path for path, _, _ in frame.PAGES]


@pytest.mark.parametrize("path", PAGES)
def test_heading_is_the_navigation_name(path):
    """The page's h1 reads exactly as its entry in app.py's navigation."""
    at = new_app(path)
    name = next(n for p, n, _ in frame.PAGES if p == path)
    assert [t.value for t in at.title] == [name]
