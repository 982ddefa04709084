"""Class mode through the app's own script (streamlit's AppTest): one class store per test, and sessions of the
app whose browser carries a class cookie (the one the class routes would have set)."""

import pytest
from streamlit.testing.v1 import AppTest

from bench.fresh_app import APP
from core.classroom.store import open_store
from ui.classroom import identity


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A fresh SQLite class store, the one the app's sessions open (``EXPLAINER_CLASS_STORE``)."""
    url = f"sqlite:///{tmp_path}/classes.db"
    monkeypatch.setenv("EXPLAINER_CLASS_STORE", url)
    return open_store(url)


@pytest.fixture
def session(monkeypatch):
    """A fresh session of the app at ``?class=CODE`` (more parameters as keywords), whose browser carries
    ``cookies`` (read on its first run, as a browser's are)."""

    def make(code: str, cookies: dict | None = None, **params) -> AppTest:
        monkeypatch.setattr(identity, "browser_cookies", lambda: dict(cookies or {}))
        at = AppTest.from_file(APP, default_timeout=60)
        for name, value in {"class": code, **params}.items():
            at.query_params[name] = value
        at.run()
        assert not at.exception, at.exception
        return at

    return make
