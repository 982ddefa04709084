from core.decode import settings as decode_settings
from core.decode import share
from core.model.config import PRESETS

CFG = PRESETS["shipped"]


def test_parse_url_state_applies_valid_values():
    """Valid parameters map to the decode settings (core.decode.settings) with the right types."""
    out, ignored = share.parse_url_state(
        {
            "prompt": "<b>hi</b>",
            "seed": "7",
            "strategy": "sample",
            "temperature": "1.2",
            "layer": "1",
            "head": "0",
            "step": "5",
            "present": "1",
            "bits": "4",
        },
        CFG,
    )
    assert out == {
        "prompt": "<b>hi</b>",
        "seed": 7,
        "strategy": "sample",
        "temperature": 1.2,
        "layer": 1,
        "head": 0,
        "step": 5,
        "present": True,
        "bits": 4,
    }
    assert ignored == []


def test_parse_url_state_ignores_bad_values_with_reasons():
    """Out-of-range, non-numeric and unknown choices are ignored, each with a reason."""
    out, ignored = share.parse_url_state(
        {
            "seed": "-1",
            "layer": "nine",
            "strategy": "beam",
            "temperature": "nan",
            "step": "999",
            "prompt": "x" * (decode_settings.MAX_PROMPT_CHARS + 1),
            "unknown": "1",
        },
        CFG,
    )
    assert out == {} and len(ignored) == 6
