"""Share links reproduce the request on screen, not the controls' current values."""

from core.decode import session, share
from core.decode import settings as decode_settings
from core.decode.generate import SamplingConfig
from core.decode.session_types import ModelKey
from core.model.config import PRESETS
from ui.decode import keys as decode_keys

CFG = PRESETS["shipped"]


def test_a_link_encodes_the_request_as_prefilled_and_round_trips(tiny_model):
    """Sampling seed 3, five steps: the link says seed 3 and step 5 whatever the seed box says now;
    parsing it gives back the same prompt, sampling, precision, weights, layer and head."""
    sampling = SamplingConfig("sample", 1.2, 10, 3)
    sess = session.start(tiny_model, [5, 6, 7], sampling, ModelKey("float32", 4), prompt_text="The cat <b>")
    for _ in range(5):
        session.step(tiny_model, sess)
    link = share.link_for(sess, 1, decode_settings.MEAN_HEADS)
    assert link["seed"] == "3" and link["step"] == "5" and link["head"] == "mean" and link["bits"] == "4"
    values, ignored = share.parse_url_state(link, CFG)
    assert ignored == []
    assert values == {
        "prompt": "The cat <b>",
        "strategy": "sample",
        "temperature": 1.2,
        "top_k": 10,
        "seed": 3,
        "bits": 4,
        "layer": 1,
        "head": decode_settings.MEAN_HEADS,
        "step": 5,
    }


def test_presenter_and_predict_only_when_asked():
    """Students get the laptop view by default; presenter mode and predict mode are options of the link."""

    class Sess:
        sampling, prompt_text, n_steps = SamplingConfig(), decode_settings.DEFAULT_PROMPT, 0
        model_key = ModelKey()

    layer, head = decode_keys.DEFAULTS[decode_keys.DECODE_LAYER], decode_keys.DEFAULTS[decode_keys.DECODE_HEAD]
    assert share.link_for(Sess, layer, head) == {"step": "0"}
    want = {"step": "0", "predict": "1", "present": "1"}
    assert share.link_for(Sess, layer, head, predict=True, present=True) == want
    values, _ = share.parse_url_state({"predict": "1", "present": "1"}, CFG)
    assert values == {"predict": True, "present": True}


def test_malformed_parameters_are_named():
    """A bad head, flag or step is ignored with a reason each."""
    values, ignored = share.parse_url_state({"head": "middle", "present": "yes", "step": "-2"}, CFG)
    assert values == {} and len(ignored) == 3 and "head=" in ignored[0]


def test_typed_markdown_in_a_link_is_quoted_as_a_code_span():
    """?layer=**x** is named in the warning as a code span, so the asterisks show as typed (a
    markdown warning would otherwise draw x in bold); a backtick in the text cannot end the span."""
    _, ignored = share.parse_url_state({"layer": "**x**"}, CFG)
    assert ignored == ["layer=`**x**` is not a valid int"]
    _, ignored = share.parse_url_state({"layer": "a`b"}, CFG)
    assert ignored == ["layer=``a`b`` is not a valid int"]
