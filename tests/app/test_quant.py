"""App tests of the quantization ruler page."""

import json

import pytest

from bench.fresh_app import new_app
from core.decode import settings as decode_settings
from core.decode.session_types import ModelKey
from ui.decode import keys as decode_keys


def _ruler(at):
    for c in at.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        if spec["layout"]["title"]["text"].startswith("the ") and "-bit ruler — " in spec["layout"]["title"]["text"]:
            return spec
    return None


def _generic(table):
    """The ruler table with Table 30.2's scale-specific labels ("x / 0.5", "Reconstructed 0.5q") read
    under fixed names: x, x / s, stored q, x̂, error."""

    def name(c: str) -> str:
        if c == "Reconstructed − original":
            return "error"
        if c.startswith("Reconstructed "):
            return "x̂"
        if c.startswith("x / "):
            return "x / s"
        return {"Original x": "x", "Stored q": "stored q"}.get(c, c)

    return table.rename(columns=name)


def _table(at):
    return _generic(at.dataframe[0].value)


@pytest.mark.parametrize(
    "preset,q,xhat",
    [
        ("Ch. 19: four weights, scale 0.1", [3, -1, 7, 2], [0.3, -0.1, 0.7, 0.2]),
        ("Ch. 30 Table 30.2: scale 0.5", [-2, 0, 1, 4], [-1.0, 0.0, 0.5, 2.0]),
        ("Ch. 30: the outlier 8", [-2, 0, 1, 4, 7], [-1.0, 0.0, 0.5, 2.0, 3.5]),
        ("Exercise 4: ties 0.75 and −0.75, then 5", [2, -2, 7], [1.0, -1.0, 3.5]),
    ],
)
def test_presets_reproduce_the_chapters(preset, q, xhat):
    """Each preset's stored integers and reconstructions match the chapter."""
    at = new_app("app_pages/quantize.py")
    at.selectbox(key="quant.preset").set_value(preset).run()
    assert not at.exception
    table = _table(at)
    assert list(table["stored q"]) == q and list(table["x̂"]) == xhat


def test_outlier_is_marked_clipped_and_dot_product_shown():
    """The outlier is drawn as clipped; the Ch. 19 dot product reads 1.15 → 1.10, 4.35%."""
    at = new_app("app_pages/quantize.py")
    assert any("1.15" in m.value and "1.10" in m.value and "4.35%" in m.value for m in at.markdown)
    at.selectbox(key="quant.preset").set_value("Ch. 30: the outlier 8").run()
    names = [t.get("name") for t in _ruler(at)["data"]]
    assert any(n and n.startswith("clipped") for n in names)
    assert any("clipped" in w.value for w in at.warning)


def test_without_clipping_the_outlier_is_not_called_clipped():
    """Clip off: 8 at scale 0.5 rounds to q = 16, reconstructs exactly (error 0 ≤ s/2), but 16 does
    not fit in −7 … 7; the table and the legend say so instead of "clipped"."""
    at = new_app("app_pages/quantize.py")
    at.selectbox(key="quant.preset").set_value("Ch. 30: the outlier 8").run()
    at.toggle(key="quant.clip").set_value(False).run()
    names = [t.get("name") for t in _ruler(at)["data"]]
    assert "q outside -7 … 7: not storable" in names and not any(n and n.startswith("clipped") for n in names)
    table = _table(at)
    row = table[table["x"] == 8.0].iloc[0]
    assert row["stored q"] == 16 and row["error"] == "0" and row["within ±s/2"] == "yes, but q does not fit"
    assert any("outside -7 … 7: their error is still within s/2, but 4 bits cannot" in w.value for w in at.warning)


def test_near_tie_flips_to_paris():
    """Paris 0.6, Lyon 0.7 at scale 0.5: greedy goes from Lyon to Paris."""
    at = new_app("app_pages/quantize.py")
    assert any("greedy picks **Lyon**" in m.value and "→ **Paris**" in m.value for m in at.markdown)


def test_storage_ch30_block():
    """Four 4-bit values with one FP32 scale: 6 bytes."""
    at = new_app("app_pages/quantize.py")
    assert any(m.label == "Your values stored" and m.value == "6 bytes" for m in at.metric)


@pytest.mark.parametrize(
    "setup,expect",
    [
        ({"quant.values": ""}, "empty"),
        ({"quant.values": "1, nan"}, "finite"),
        ({"quant.values": "1, inf"}, "finite"),
        ({"quant.values": "1, abc"}, "not a number"),
        ({"quant.values": ", ".join(["0.5"] * 5000)}, "more than"),
        ({"quant.scale": 0.0}, "positive"),
        ({"quant.scale": -0.5}, "positive"),
        ({"quant.bits": 1}, "only zero"),
    ],
)
def test_bad_input_gets_a_clear_message(setup, expect):
    """Empty list, NaN/inf, words, thousands of values, scale 0 or negative, symmetric 1 bit."""
    at = new_app("app_pages/quantize.py")
    for key, value in setup.items():
        if key == "quant.values":
            at.text_area(key=key).set_value(value)
        elif key == "quant.scale":
            at.number_input(key=key).set_value(value)
        else:
            at.select_slider(key=key).set_value(value)
    at.run()
    assert not at.exception
    assert any(expect in e.value for e in at.error), [e.value for e in at.error]


def test_all_zero_values_explain_the_scale():
    """All zeros with an automatic scale: a note explains scale 1 is used."""
    at = new_app("app_pages/quantize.py")
    at.text_area(key="quant.values").set_value("0, 0, 0")
    at.radio(key="quant.scale_mode").set_value("automatic")
    at.run()
    assert any("automatic scale would be 0" in w.value for w in at.warning)


def test_one_bit_affine_works_and_sixteen_bit_reference():
    """Affine 1-bit stores two levels; 16-bit draws no shelf one by one and says so in the ruler's title."""
    at = new_app("app_pages/quantize.py")
    at.radio(key="quant.kind").set_value("affine (zero point)")
    at.select_slider(key="quant.bits").set_value(1)
    at.radio(key="quant.scale_mode").set_value("automatic")
    at.run()
    assert not at.error and not at.exception
    at.select_slider(key="quant.bits").set_value(16).run()
    assert "65,536 shelves, too close to draw" in _ruler(at)["layout"]["title"]["text"]  # affine: 0 … 65,535


def test_quant_model_page_tables_and_divergence():
    """Both sweeps list float32 and 8…2 bits; 8-bit weights change few greedy tokens; divergence is reported."""
    at = new_app("app_pages/quant_model.py")
    weights, kv = at.dataframe[1].value, at.dataframe[2].value
    assert list(weights["model"])[0] == "float32" and list(weights["model"])[-1] == "2-bit weights"
    assert list(kv["model"])[1] == "8-bit KV cache"
    assert float(weights["greedy changed"][1].rstrip("%")) <= 1.0
    assert at.success or any("first differ at output token" in w.value for w in at.warning)
    assert any(m.label == "Margin between them (logit units)" for m in at.metric)
    # Tokens read as the decode page shows them (spaces as ␣, no Python quotes): "␣Yes", not "' Yes'".
    from core.decode.generate import SamplingConfig
    from core.decode.session import start
    from core.model.shipped import load_model, load_shipped_tokenizer
    from core.model.tokenizer import encode, token_text
    from core.quant.flip import top_two

    tok = load_shipped_tokenizer()
    sess = start(load_model(), encode(tok, decode_settings.DEFAULT_PROMPT), SamplingConfig())
    want = token_text(tok, top_two(sess.logits.double().numpy()).greedy)
    got = next(m.value for m in at.metric if m.label == "Greedy next token")
    assert got == want.replace(" ", "␣") and not got.startswith("'")


def test_decode_page_runs_the_quantized_model():
    """Choosing 4-bit weights on the decode page prefills and steps with that model."""
    from tests.helpers.app_util import click, stage

    at = new_app()
    at.radio(key=decode_keys.DECODE_WEIGHT_BITS).set_value(4).run()
    click(at, "Prefill")
    click(at, "Step ▸")
    sess = at.session_state[decode_keys.DECODE_SESSION]
    assert sess.model_key == ModelKey("float32", 4)
    assert "4-bit weights" in stage(at)["explainer_attention"]["title"]


def _hand(at, values, bits, kind, scale):
    at.text_area(key="quant.values").set_value(values)
    at.select_slider(key="quant.bits").set_value(bits)
    at.radio(key="quant.kind").set_value(kind)
    at.radio(key="quant.scale_mode").set_value("set by hand")
    at.number_input(key="quant.scale").set_value(scale)
    at.run()


def test_affine_zero_point_can_be_set():
    """Affine, scale 0.5, zero point 5, values 0, 2.5, 5, 10: 8 bits store 5, 10, 15, 25; 4 bits 5, 10, 15, 15."""
    at = new_app("app_pages/quantize.py")
    _hand(at, "0, 2.5, 5, 10", 8, "affine (zero point)", 0.5)
    at.number_input(key="quant.zero_point").set_value(5).run()
    assert not at.exception and list(_table(at)["stored q"]) == [x * 2 + 5 for x in (0, 2.5, 5, 10)]
    at.select_slider(key="quant.bits").set_value(4).run()
    assert list(_table(at)["stored q"]) == [min(x * 2 + 5, 15) for x in (0, 2.5, 5, 10)] == [5, 10, 15, 15]
    assert "zero point 5" in _ruler(at)["layout"]["title"]["text"]


def test_scale_slider_snaps_values_to_new_shelves():
    """Moving the log slider to 0.25 sets the scale by hand: Ch. 19's weights round to x/0.25 → 1, 0, 3, 1."""
    at = new_app("app_pages/quantize.py")
    at.radio(key="quant.scale_mode").set_value("automatic").run()
    at.select_slider(key="quant.scale_step").set_value(0.25).run()
    assert at.radio(key="quant.scale_mode").value == "set by hand" and at.number_input(key="quant.scale").value == 0.25
    assert list(_table(at)["stored q"]) == [round(x / 0.25) for x in (0.34, -0.12, 0.7, 0.23)]
    assert "scale s = 0.25" in _ruler(at)["layout"]["title"]["text"]


def test_ruler_in_the_chapters_three_bands_follows_the_bit_width():
    """The default page draws Ch. 19's ruler (title, the pill "4-bit: shelf 3, ruler times 0.1 (half a byte
    each)", the caption) and says "Four bits provide sixteen patterns" and "eight times smaller" (6 bytes
    against 16: 2.67 times); at 8 bits the title says 256 values and the pill "1 byte each"."""
    at = new_app("app_pages/quantize.py")
    spec = _ruler(at)
    assert spec["layout"]["title"]["text"].startswith(
        "the 4-bit ruler — 16 possible stored values, spacing = scale = 0.1"
    )
    notes = [a["text"] for a in spec["layout"]["annotations"] if a.get("showarrow") is False]
    assert "4-bit: shelf 3, ruler times 0.1 (half a byte each)" in notes
    assert "<i>Fewer bits give fewer possible levels.</i>" in notes
    captions = " ".join(c.value for c in at.caption)
    assert "Four bits provide sixteen patterns" in captions and "Here 4 bits provide 16 patterns" in captions
    assert "32 ÷ 4 = eight times smaller" in captions and "16 bytes as float32 become 6 bytes, 2.67 times" in captions
    assert "smaller groups may better accommodate varied ranges" in captions
    at.select_slider(key="quant.bits").set_value(8).run()
    spec = _ruler(at)
    assert spec["layout"]["title"]["text"].startswith("the 8-bit ruler — 256 possible stored values")
    assert any("(1 byte each)" in a["text"] for a in spec["layout"]["annotations"])


def test_typed_scale_moves_the_slider_to_its_nearest_stop():
    """Typing 0.15 keeps 0.15 exactly (title, box) and puts the slider on the stop nearest 0.15 in log terms."""
    import math

    at = new_app("app_pages/quantize.py")
    at.number_input(key="quant.scale").set_value(0.15).run()
    slider = at.select_slider(key="quant.scale_step")
    assert slider.value == float(min(slider.options, key=lambda v: abs(math.log(float(v) / 0.15))))
    assert (
        "spacing = scale = 0.15<br>" in _ruler(at)["layout"]["title"]["text"]
        and "scale s = 0.15<" in _ruler(at)["layout"]["title"]["text"]
        and at.number_input(key="quant.scale").value == 0.15
    )


def test_automatic_mode_shows_its_scale_on_the_controls():
    """Automatic on Ch. 19's weights: the box shows max|x| / 7 = 0.7 / 7."""
    at = new_app("app_pages/quantize.py")
    at.radio(key="quant.scale_mode").set_value("automatic").run()
    assert at.number_input(key="quant.scale").value == 0.7 / 7


def test_near_tie_shows_every_digit():
    """Scale 0.15, value 0.675, half to even: x/s is 4.500000000000001 (not a tie), stored 5, and the page says so."""
    at = new_app("app_pages/quantize.py")
    _hand(at, "0.675", 4, "symmetric", 0.15)
    row = _table(at).iloc[0]
    assert row["x / s"] == repr(0.675 / 0.15) == "4.500000000000001" and row["stored q"] == 5
    assert row["tie?"] == "not an exact tie"
    assert any("not an exact tie" in w.value for w in at.warning)


def test_automatic_scale_overflow_is_explained():
    """Affine automatic over ±1e308: the range overflows float64; the message says so, not "got inf"."""
    at = new_app("app_pages/quantize.py")
    at.text_area(key="quant.values").set_value("1e308, -1e308")
    at.radio(key="quant.kind").set_value("affine (zero point)")
    at.radio(key="quant.scale_mode").set_value("automatic")
    at.run()
    assert not at.exception
    assert any("overflows" in e.value for e in at.error) and not any("got inf" in e.value for e in at.error)


def test_storage_line_uses_singular_forms():
    """One 4-bit value with an FP32 scale: "1 value × 4 bits = 1 byte packed + 4 bytes of scales = 5 bytes"."""
    at = new_app("app_pages/quantize.py")
    at.text_area(key="quant.values").set_value("1").run()
    assert any(
        "1 value × 4 bits = **1 byte packed** + **4 bytes of scales** = **5 bytes**" in m.value for m in at.markdown
    )
    assert any(m.label == "Your values stored" and m.value == "5 bytes" for m in at.metric)


def test_flip_finder_reports_the_exact_threshold_and_the_tie():
    """The page's threshold and tie count match a brute-force search over the shipped model's logits."""
    import numpy as np
    import torch

    from core.model.shipped import load_model, load_shipped_tokenizer
    from core.model.tokenizer import encode
    from core.quant.quantize import greedy_after_quantizing
    from tests.core.quant.test_flip import brute_force_threshold

    at = new_app("app_pages/quant_model.py")
    with torch.no_grad():
        out, _ = load_model()(torch.tensor([encode(load_shipped_tokenizer(), decode_settings.DEFAULT_PROMPT)]))
    logits = out[0, -1].double().numpy()
    s = brute_force_threshold(logits)
    _, xq = greedy_after_quantizing(logits, s * (1 + 1e-9))
    text = next(m.value for m in at.markdown if "first changes the greedy token" in m.value)
    assert f"**{s:.6g}**" in text and f"**{int((xq == xq.max()).sum())} tokens**" in text
    assert int(np.argmax(logits)) != int(np.argmax(xq))


def test_quant_model_page_says_what_fewer_bits_do_not_change():
    """The model page, under the weight sweep, in Ch. 19's words: the same parameters at every width (the shipped
    model's count, summed from its tensors), only bytes shrinking (the table's float32 and 2-bit weight bytes),
    errors that accumulate and sensitive weights; and Ch. 30 §30.5's groups."""
    from core.model.shipped import load_model

    at = new_app("app_pages/quant_model.py")
    n = sum(p.numel() for p in load_model().parameters())
    weights = at.dataframe[1].value
    float_bytes, two_bit = weights["weight bytes"].iloc[0], weights["weight bytes"].iloc[-1]
    text = " ".join(c.value for c in at.caption)
    assert "“We can now distinguish a smaller representation from fewer parameters.”" in text
    assert f"all {n:,} parameters of the shipped model" in text
    assert f"from {float_bytes} (float32) to {two_bit} at 2 bits" in text
    assert "“Rounding errors can accumulate, and sensitive weights need care." in text
    assert "smaller groups may better accommodate varied ranges" in text


def test_a_sum_past_float64s_range_is_said_not_shown_as_inf():
    """Two values of 1.7e308 add up past float64's maximum (1.797e308): the dot product says so
    instead of showing 'inf' and a 'nan%' change; the table shows x̂ = 1.7e308, not Infinity
    (rounding away float noise scaled it by 10¹⁰ and overflowed)."""
    at = new_app("app_pages/quantize.py")
    at.radio(key="quant.scale_mode").set_value("automatic").run()
    at.text_area(key="quant.values").set_value("1.7e308, 1.7e308").run()
    assert not at.exception  # (the GGUF block below refuses values past float32, rightly)
    shown = " ".join(m.value for m in at.markdown)
    assert "beyond float64's range" in shown and "inf" not in shown and "nan" not in shown
    [table] = [_generic(d.value) for d in at.dataframe if "Original x" in d.value.columns]  # finite: 7 · s
    assert table["x̂"].tolist() == [1.7e308, 1.7e308] and table["error"].tolist() == ["0", "0"]
    at.text_area(key="quant.values").set_value("1e308, -1e308").run()  # finite: 0 before, so no % change
    assert any(m.value.startswith("before: **0.00**") and "%" not in m.value for m in at.markdown)


def test_a_huge_dot_product_is_written_with_an_exponent():
    """1e300 + 2: the dot product is 1e300 and reads 1.0000e+300, not 301 digits (found by a helper)."""
    at = new_app("app_pages/quantize.py")
    at.text_area(key="quant.values").set_value("1e300, 2")
    at.radio(key="quant.scale_mode").set_value("automatic").run()
    dot = next(m.value for m in at.markdown if m.value.startswith("before: **"))
    assert "before: **1.0000e+300** · after: **1.0000e+300**" in dot and len(dot) < 120


def test_flip_finder_tokens_are_shown_literally_not_as_markdown():
    """A metric's value is markdown: the greedy "," and runner-up "!" after "User: Hi" (the shipped
    model) are backslash-escaped, so punctuation tokens (``*``, ``_``, ``[``) cannot format the card."""
    from core.decode.generate import SamplingConfig
    from core.decode.session import start
    from core.model.shipped import load_model, load_shipped_tokenizer
    from core.model.tokenizer import encode

    at = new_app()
    hi = encode(load_shipped_tokenizer(), "User: Hi")
    at.session_state[decode_keys.DECODE_SESSION] = start(load_model(), hi, SamplingConfig())
    at.switch_page("app_pages/quant_model.py").run()
    values = {m.label: m.value for m in at.metric}
    assert (values["Greedy next token"], values["Runner-up"]) == ("\\,", "\\!")


def test_a_near_tie_that_overflows_is_refused_not_shown_as_inf():
    """Paris and Lyon at 1e308 with a scale of 1e-300: x / s is past float64's range. The near tie
    said "rounded to [inf, inf] → Paris (a tie…)"; it now says the scale is too small, as the ruler
    does, and the scale box shows 1e-300, not 0.00 (its format was "%.2f")."""
    import math

    from core.quant.quantize import greedy_after_quantizing

    assert math.isinf(1e308 / 1e-300)
    with pytest.raises(ValueError, match="x / s overflows"):
        greedy_after_quantizing([1e308, 1e308], 1e-300)
    assert greedy_after_quantizing([1e308, -1e308], 1e300)[0] == 0  # a finite quotient still rounds
    at = new_app("app_pages/quantize.py")
    for key, v in (("quant.paris", 1e308), ("quant.lyon", 1e308), ("quant.tie_scale", 1e-300)):
        at.number_input(key=key).set_value(v).run()
    assert not at.exception
    said = " ".join(m.value for m in [*at.error, *at.warning, *at.markdown]).replace("\\", "")  # markdown escapes
    assert "too small for these logits: x / s overflows" in said and "[inf" not in said
    assert at.number_input(key="quant.tie_scale").proto.format == "%g"


def test_table_30_2_labels_and_signs():
    """The Table 30.2 preset shows the chapter's title, column labels and signed errors (+0.2, −0.2)."""
    at = new_app("app_pages/quantize.py")
    at.selectbox(key="quant.preset").set_value("Ch. 30 Table 30.2: scale 0.5").run()
    assert any(c.value.startswith("Table 30.2 — Derived storage values and signed errors") for c in at.caption)
    table = at.dataframe[0].value
    labels = ["Original x", "x / 0.5", "Stored q", "Reconstructed 0.5q", "Reconstructed − original"]
    assert list(table.columns)[:5] == labels
    assert list(table["Reconstructed − original"]) == ["+0.2", "+0.2", "−0.2", "+0.2"]


def test_quantize_page_cites_jacob_at_the_zero_point():
    """Ch. 30 §30.10's Jacob et al. 2018, Section 2.1 (scale/zero-point mappings), on the ruler page."""
    at = new_app("app_pages/quantize.py")
    assert any("Jacob et al., *Quantization and Training of Neural Networks" in c.value for c in at.caption)
    assert any("2018. Section 2.1 defines scale/zero-point mappings" in c.value for c in at.caption)


def test_quantization_pages_state_the_chapters_caveats():
    """Ch. 30 §30.6 on both quantization pages: activation quantization beside weight-only and KV, fewer bits
    not automatically faster (with a link to the page that times it), calibration apart from evaluation."""
    for page in ("app_pages/quant_model.py", "app_pages/quantize.py"):
        at = new_app(page)
        text = " ".join(m.value for m in at.markdown)
        assert "Weight-only quantization, activation quantization and KV quantization affect different arrays" in text
        assert "fewer stored bits do not automatically mean every operation runs faster" in text
        assert "Calibration data used to choose scales must be separated from final evaluation" in text
        assert [p.proto.page for p in at.get("page_link")] == ["speed"]
