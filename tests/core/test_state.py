from core import state
from core.decode import share
from core.model.config import PRESETS

CFG = PRESETS["shipped"]


def test_parse_url_state_applies_valid_values():
    """Valid parameters map to session-state keys with the right types."""
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
        state.DECODE_PROMPT: "<b>hi</b>",
        state.DECODE_SEED: 7,
        state.DECODE_STRATEGY: "sample",
        state.DECODE_TEMPERATURE: 1.2,
        state.DECODE_LAYER: 1,
        state.DECODE_HEAD: 0,
        state.URL_STEP: 5,
        state.PRESENT: True,
        state.DECODE_WEIGHT_BITS: 4,
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
            "prompt": "x" * (state.MAX_PROMPT_CHARS + 1),
            "unknown": "1",
        },
        CFG,
    )
    assert out == {} and len(ignored) == 6
