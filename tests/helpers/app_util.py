"""Helpers for AppTest-based page tests."""

import json

from streamlit.testing.v1 import AppTest


def click(at: AppTest, label: str) -> AppTest:
    [button] = [b for b in at.button if b.label == label]
    button.click().run()
    assert not at.exception, at.exception
    return at


def charts(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def plotly_array(value):
    """A plotly JSON array as nested lists (plotly 7 writes numpy arrays as base64 "bdata"); NaN → None."""
    if isinstance(value, dict) and "bdata" in value:
        import base64

        import numpy as np

        a = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        if "shape" in value:
            a = a.reshape([int(x) for x in str(value["shape"]).split(",")])
        return [[None if np.isnan(x) else float(x) for x in row] for row in a]
    return value


def heatmap_z(at: AppTest):
    """The attention matrix drawn, merging the dimmed (cached) and new-row heatmap traces."""
    for spec in charts(at):
        zs = [plotly_array(t["z"]) for t in spec["data"] if t.get("type") == "heatmap"]
        if zs:
            return [
                [next((z[i][j] for z in zs if z[i][j] is not None), None) for j in range(len(zs[0][i]))]
                for i in range(len(zs[0]))
            ]
    return None


def stage(at: AppTest) -> dict:
    """The decode stage's browser-drawn figures: component name → the payload sent this run."""
    return {n.proto.component_name: json.loads(n.proto.json) for n in at.get("bidi_component")}


def attention_rows(at: AppTest) -> int | None:
    """Rows the browser's attention heatmap holds after this run (a full drawing, or one more row)."""
    payload = stage(at).get("explainer_attention")
    if payload is None:
        return None
    return len(payload["rows"]) if payload["kind"] == "full" else payload["base"] + 1


def stage_matrix(payload: dict):
    """A full attention payload as a square matrix of shares (None above the diagonal)."""
    T, scale = len(payload["rows"]), payload["scale"]
    return [[row[j] / scale if j < len(row) else None for j in range(T)] for row in payload["rows"]]
