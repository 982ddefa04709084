"""Widget values survive page changes (streamlit's persist_state, seeded from core.state)."""

import pytest

from bench.fresh_app import new_app
from core.decode import share
from core.model.config import PRESETS

CHANGES = [
    ("app_pages/context.py", "slider", "ctx.window", 32),
    ("app_pages/quantize.py", "select_slider", "quant.bits", 3),
    ("app_pages/weights.py", "text_input", "weights.card", "13B, Q8, 4K"),
    ("app_pages/cost.py", "number_input", "cost.layers", 3),
    ("app_pages/speculative.py", "slider", "spec.k", 6),
    ("app_pages/quant_model.py", "select_slider", "qm.diverge_bits", 4),
    ("app_pages/paged.py", "number_input", "paged.n_blocks", 32),
]


@pytest.mark.parametrize("page,kind,key,value", CHANGES)
def test_a_setting_survives_a_visit_to_another_page(page, kind, key, value):
    """Change a setting, open another page, come back: the setting is still there."""
    at = new_app(page)
    getattr(at, kind)(key=key).set_value(value).run()
    at.switch_page("app_pages/latency.py").run()
    at.switch_page(page).run()
    assert not at.exception
    assert getattr(at, kind)(key=key).value == value


def test_url_limits_follow_the_loaded_models_config():
    """Layer and head limits come from the model: layer 3 is valid for 4 layers, not for 2."""
    shipped, tiny = PRESETS["shipped"], PRESETS["tiny"]
    assert share.parse_url_state({"layer": "3"}, shipped)[0] == {"layer": 3}
    out, ignored = share.parse_url_state({"layer": "3", "step": "40"}, tiny)
    assert out == {} and ignored == ["layer=3 is outside 0 … 1", "step=40 is outside 0 … 32"]
