"""Helpers for AppTest-based page tests."""

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def new_app(page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def click(at: AppTest, label: str) -> AppTest:
    [button] = [b for b in at.button if b.label == label]
    button.click().run()
    assert not at.exception, at.exception
    return at


def charts(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def heatmap_z(at: AppTest):
    for spec in charts(at):
        for trace in spec["data"]:
            if trace.get("type") == "heatmap":
                return trace["z"]
    return None
