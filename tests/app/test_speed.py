"""App tests of "Speed on this machine" (app_pages/speed.py): a tiny budget, the tables, one measurement at a time."""

import pytest

from bench.fresh_app import new_app
from tests.helpers.app_util import charts
from ui import speed

PAGE = "app_pages/speed.py"


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """Each test measures into its own cache folder, never the user's ~/.cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))


def _measure(at, seconds=2):
    at.slider(key="speed.budget_s").set_value(seconds).run()
    [button] = [b for b in at.button if b.label == "Measure"]
    button.click().run(timeout=180)
    assert not at.exception, at.exception
    return at


def test_the_page_asks_before_measuring():
    """A machine with nothing measured says so and draws only the passes' counted intensities."""
    at = new_app(PAGE)
    assert any("Nothing measured on this machine" in i.value for i in at.info)
    counted, reference = charts(at)  # the passes' intensities, counted: no roofline yet; the reference GPU's
    assert not any(t.get("name", "").startswith("memory slope") for t in counted["data"])
    assert [t["name"] for t in counted["data"]] == ["decode (counted)", "prefill (counted)"]
    assert [len(t["x"]) for t in reference["data"]] == [17]  # only the GPU's bars before a measurement here


def test_the_reference_gpu_is_on_the_page_with_its_provenance():
    """Before any measurement: "Fewer bits on two machines" quotes Ch. 30 §30.6, draws the H200's rows, says each
    lesson (int4 1.7× faster at batch 1, 7× slower at 64; int8 12× slower; 12.8× the byte floor), that the numbers
    were measured elsewhere (where, when, how), and lists the reference table."""
    at = new_app(PAGE)
    assert any(h.value == "Fewer bits on two machines" for h in at.subheader)
    text = " ".join(c.value for c in at.caption) + " ".join(m.value for m in at.markdown)
    assert "fewer stored bits do not automatically mean every operation runs faster" in text
    assert "Measured elsewhere, not on this server: one NVIDIA H200" in text and "2026-12-04" in text
    assert "CUDA graph" in text and "python -m bench.roofline --device cuda" in text
    for said in ("1.7× faster than bfloat16", "7× slower than bfloat16", "12× slower than bfloat16", "12.8× its byte"):
        assert said in text, said
    table = next(d.value for d in at.dataframe if "speed vs bf16" in d.value.columns)
    assert len(table) == 17 and table["speed vs bf16"].min() == 0.004


def test_a_tiny_budget_draws_the_roofline_and_both_tables():
    """Measuring with a 2-second budget draws the roofline (slope, ceiling, decode and prefill points) and
    shows the passes' table and the formats' table with the sentence from the numbers."""
    at = _measure(new_app(PAGE))
    [roof] = [c for c in charts(at) if any(t.get("name", "").startswith("memory slope") for t in c["data"])]
    names = [t["name"] for t in roof["data"]]
    assert any(n.startswith("decode") for n in names) and any(n.startswith("prefill") for n in names)
    frames = [d.value for d in at.dataframe]
    passes = next(f for f in frames if "pass" in f.columns)
    assert {"decode B=1, n=128", "decode B=16, n=128"} <= set(passes["pass"]) and (passes["ms"] > 0).all()
    formats = next(f for f in frames if "format" in f.columns)
    assert {"float32", "bfloat16", "int8 (bf16 activations)", "int4 (bf16 activations)"} <= set(formats["format"])
    assert any(m.value.startswith("Fastest here for the whole decode step:") for m in at.markdown)
    # Fewer bits on two machines: this server's formats by their weight products against float32's
    two = next(c for c in charts(at) if len(c["data"]) == 2 and c["data"][1].get("base") == 1)
    products = dict(zip(formats["format"], formats["weight products ms"], strict=True))
    shown = dict(zip(two["data"][0]["y"], (x + 1 for x in two["data"][0]["x"]), strict=True))
    assert shown == pytest.approx({f: products["float32"] / ms for f, ms in products.items()}, rel=0.02)
    assert any("**This server**" in m.value and "than float32" in m.value for m in at.markdown)


def test_sessions_share_results_not_settings():
    """A second session sees the first one's measurement at once (kept per machine), keeps its own budget,
    and after a second run the page states how well the two runs agree: their medians and their times over
    their own floors (measured with the same thread count as the steps)."""
    first = _measure(new_app(PAGE))
    second = new_app(PAGE)
    assert second.slider(key="speed.budget_s").value == 20 and first.slider(key="speed.budget_s").value == 2
    assert charts(second) and not any("Nothing measured" in i.value for i in second.info)
    _measure(second)
    [said] = [c.value for c in second.caption if "The last two runs' medians agree within" in c.value]
    assert "their times over their own floors within" in said and "and for the bandwidth that gives its floor" in said


def test_a_second_measurement_waits_in_line(monkeypatch):
    """While another session holds the server's measurement, Measure says it waits, then gives up politely."""
    monkeypatch.setattr(speed, "WAIT_S", 0.2)
    at = new_app(PAGE)
    with speed._LOCK:
        [button] = [b for b in at.button if b.label == "Measure"]
        button.click().run()
    assert not at.exception
    assert any("still running" in w.value for w in at.warning)
    assert not speed.busy()


def test_the_caption_names_the_shipped_model_in_lower_case():
    """Mid-sentence the model is "the shipped model", not "(The shipped model)" (issue 40)."""
    [caption] = [c.value for c in new_app(PAGE).caption if "Measured on this server's CPU" in c.value]
    assert "CPU (the shipped model)" in caption, caption
