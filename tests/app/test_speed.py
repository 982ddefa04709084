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
    [counted] = charts(at)  # the passes' intensities, counted: no roofline yet
    assert not any(t.get("name", "").startswith("memory slope") for t in counted["data"])
    assert [t["name"] for t in counted["data"]] == ["decode (counted)", "prefill (counted)"]


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
    assert any(m.value.startswith("Fastest here:") for m in at.markdown)


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
