"""The roofline's measurement (core/evaluate/machine_speed.py): counts, cache file, agreement. No timing asserted."""

import json

import pytest

from core.cost.step_traffic import step_bytes, step_flops
from core.evaluate.machine_speed.roofline import counted, measure_pass, measure_roofline, passes, point_rows
from core.evaluate.machine_speed.runs import (
    agreement,
    cache_path,
    load_runs,
    machine_key,
    run_agreement,
    run_ratios,
    save_run,
)
from core.evaluate.machine_speed.timing import MIN_REPEATS, rounds_ms, spread
from core.model.config import PRESETS
from core.model.model import GPT


def test_a_pass_is_counted_by_core_cost(monkeypatch):
    """A measured pass carries step_traffic's FLOPs and bytes and at least MIN_REPEATS timings."""
    model = GPT(PRESETS["tiny"]).eval()
    p = measure_pass(model, "decode", 2, 1, 9, seconds=0.0)
    assert p.flops == step_flops(PRESETS["tiny"], 2, 1, 9)["total"]
    assert p.bytes == step_bytes(PRESETS["tiny"], 2, 1, 9)["total"]
    assert p.repeats >= MIN_REPEATS and p.ms > 0


def test_passes_fit_the_window():
    """Decode at B = 1, 4, 16 and prefills, never past the context window."""
    for cfg in (PRESETS["tiny"], PRESETS["shipped"], PRESETS["larger"]):
        todo = passes(cfg.block_size)
        assert [b for k, b, _, _ in todo if k == "decode"][:3] == [1, 4, 16]
        assert any(k == "prefill" for k, *_ in todo) and all(s <= cfg.block_size for *_, s in todo)


def test_the_cache_lives_outside_the_source_tree_and_keeps_two_runs(tmp_path, monkeypatch):
    """XDG_CACHE_HOME/inference-explainer/, one file per key, the last two runs; another key sees none."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    key = machine_key("shipped", PRESETS["shipped"])
    assert key["cpu"] and key["torch"] and key["threads"] >= 1
    for i in range(3):
        save_run(key, {"i": i})
    assert [r["i"] for r in load_runs(key)] == [1, 2]
    path = cache_path(key)
    assert path.parent == tmp_path / "inference-explainer" and json.loads(path.read_text())["key"] == key
    assert load_runs({**key, "threads": 99}) == []
    path.write_text("{half a fi")
    assert load_runs(key) == []


def test_agreement_is_the_largest_relative_difference():
    """Two runs' medians 10 vs 11 and 2 vs 2: 10%, named after the worst."""
    assert agreement([10.0, 2.0], [11.0, 2.0]) == pytest.approx(0.1)
    point = {"kind": "decode", "batch": 1, "new": 1, "context": 8, "ms": 1.0, "repeats": 3, "flops": 1, "bytes": 1}
    roof = {"bandwidth_gbs": 10.0, "copy_gbs": 5.0, "peak_gflops": 50.0, "points": [point], "threads": 1}
    run = {"roofline": {**roof, "seconds": 1.0, "when": ""}, "formats": [{"fmt": "float32", "ms": 2.0}]}
    other = json.loads(json.dumps(run))
    other["formats"][0]["ms"] = 2.4
    assert run_agreement([run, other]) == (pytest.approx(0.2), "float32")
    assert run_agreement([run]) is None


def test_counted_intensities_follow_the_passes():
    """Before timing: one counted intensity per pass, decode rising with the batch, prefill past decode."""
    got = dict(counted(PRESETS["shipped"]))
    assert len(got) == len(passes(PRESETS["shipped"].block_size))
    assert got["decode B=1, n=128"] < got["decode B=4, n=128"] < got["decode B=16, n=128"] < got["prefill B=1, T=128"]


def test_rounds_run_side_by_side_the_order_turning():
    """Each function once untimed, then rounds A B C, B C A, C A B (at least MIN_REPEATS with no budget);
    every one gets the same number of times."""
    calls = []
    fns = {name: (lambda name=name: calls.append(name)) for name in "ABC"}
    times = rounds_ms(fns, seconds=0.0)
    assert calls == list("ABC") + list("ABC") + list("BCA") + list("CAB")
    assert {name: len(t) for name, t in times.items()} == {"A": 3, "B": 3, "C": 3}


def test_spread_is_the_interquartile_range_over_the_median():
    """1 … 5: quartiles 1.5 and 4.5 (statistics.quantiles' exclusive method), median 3: a spread of 1."""
    assert spread([1.0, 2.0, 3.0, 4.0, 5.0]) == pytest.approx(1.0)
    assert spread([2.0]) == 0.0


def test_a_roofline_times_everything_side_by_side():
    """One run: the bandwidth, the peak and every pass from the same rounds (as many times each), each
    point with its spread; the table shows it."""
    model = GPT(PRESETS["tiny"]).eval()
    roof = measure_roofline(model, 0.0)
    assert len({p.repeats for p in roof.points}) == 1 and roof.points[0].repeats >= MIN_REPEATS
    assert roof.bandwidth_gbs > 0 and roof.peak_gflops > 0 and roof.bandwidth_spread >= 0
    assert all(p.spread >= 0 for p in roof.points)
    assert all("spread" in row for row in point_rows(roof))


def test_ratio_agreement_divides_each_time_by_its_runs_floor():
    """A run on a machine half as fast (bandwidth halved, every time doubled) has the same ratios: 0%."""
    point = {"kind": "decode", "batch": 1, "new": 1, "context": 8, "ms": 1.0, "repeats": 3, "flops": 1, "bytes": 10**7}
    roof = {"bandwidth_gbs": 10.0, "copy_gbs": 5.0, "peak_gflops": 50.0, "points": [point], "threads": 1}
    run = {"roofline": {**roof, "seconds": 1.0, "when": ""}, "formats": [{"fmt": "float32", "ms": 2.0, "bytes": 10**7}]}
    slow = json.loads(json.dumps(run))
    slow["roofline"]["bandwidth_gbs"], slow["roofline"]["points"][0]["ms"], slow["formats"][0]["ms"] = 5.0, 2.0, 4.0
    assert run_ratios(run) == {"decode B=1, n=8": 1.0, "float32": 2.0}
    assert run_agreement([run, slow])[0] == pytest.approx(1.0)
    assert run_agreement([run, slow], ratios=True)[0] == pytest.approx(0.0)
