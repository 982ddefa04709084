"""A fresh streamlit ``AppTest`` of the app, on one page: used by ``bench.app_speed`` and the tests
(bench imports nothing from tests)."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def new_app(page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at
