"""Benchmarks that cannot rot, the four that drive headless Chromium against a real ``streamlit run``:
each ``python -m bench.NAME --quick`` runs as a subprocess from the repository's root and its printed
tables hold the rows they promise, with finite numbers. The rest are in tests/bench/test_quick_model.py
(a file of its own, so that pytest-xdist's two workers share the load)."""

from __future__ import annotations

import re

import pytest

from tests.bench.test_quick_model import ROOT, all_finite, finite, row, run_quick, table_rows

pytestmark = pytest.mark.browser


def check_stage_speed(out: str) -> None:
    rows = table_rows(out)
    assert rows[0][:3] == ["cache length", "bytes received per Step", "server CPU per Step"], rows[0]
    for name in ("default prompt", "208-token prompt"):
        paced, back = [r for r in rows if r[0].endswith(f"({name})")]  # one row in each table
        assert re.fullmatch(rf"\d+ \({name}\)", paced[0]) and len(paced) == 7, paced
        assert re.fullmatch(rf"~\d+ \({name}\)", back[0]) and len(back) == 4, back
        all_finite(paced[1:]), all_finite(back[1:])
    assert "3 Steps back to back over the websocket protocol (no browser):" in out
    assert "load average after:" in out  # it ran to the end


def check_classroom_load(out: str) -> None:
    """3 browser sessions × 3 Steps at once on a server of their own (its peak memory is theirs): all complete, no
    errors, every session's text equals its solo run, the server under 2 GiB."""
    rows = table_rows(out)
    assert row(rows, "sessions completed")[1] == "3 of 3"
    assert row(rows, "errors")[1] == "0"
    assert row(rows, "sessions whose text differs from a solo run (cross-talk)")[1] == "0"
    for label in (
        "Prefill clicks repeated after 40 s without an answer",
        "click Step → new heatmap row, p50",
        "click Step → new heatmap row, p95",
        "server peak memory (VmHWM)",
        "wall time for the whole lesson",
    ):
        finite(row(rows, label)[1])
    assert finite(row(rows, "server peak memory (VmHWM)")[1])[0] < 2048  # MiB
    cpu = next(r for r in rows if r[0].startswith("CPU time: server / the 3 browser pages"))
    assert len(finite(cpu[1])) == 3


def check_app_speed(out: str) -> None:
    from bench.app_speed import INTERACTIONS

    rows = table_rows(out)
    for page in INTERACTIONS:
        finite(row(rows, page)[1])
    for label in (
        "browser: click Step → heatmap has the new row, 0.4 s between clicks (median)",
        "… same, p90",
        "… of which click → the server's last message arrives (median)",
        "browser: click Step → new row, clicks back to back (median)",
        "clicks with no new row within 10 s (left out above)",
        "`streamlit run` → decode page's Prefill button visible",
        "model load (safetensors → eval model), warm, median",
        "model load in a fresh process (after `import torch`)",
    ):
        finite(row(rows, label)[1])
    assert len([r for r in rows if r[0] == "… same, p90"]) == 2


SHOTS = ("decode-stage.png", "quantization-ruler.png", "practice.png")


def check_screenshots(out: str, folder) -> None:
    for name in SHOTS:
        path = folder / name
        m = re.search(rf"^{re.escape(str(path))}: (\d+)×(\d+), (\d+) KB$", out, re.MULTILINE)
        assert m, (name, out)
        assert path.stat().st_size < 250 * 1024  # the docstring's promise for README's images


def docs_img_times() -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (ROOT / "docs" / "img").glob("*.png")}


QUICK = {  # bench name: (extra arguments given the test's temporary folder, its check)
    "stage_speed": (lambda tmp: (), lambda out, tmp: check_stage_speed(out)),
    "classroom_load": (lambda tmp: (), lambda out, tmp: check_classroom_load(out)),
    "app_speed": (lambda tmp: (), lambda out, tmp: check_app_speed(out)),
    # into --out, never over README's images in docs/img/
    "screenshots": (lambda tmp: ("--out", str(tmp)), check_screenshots),
}


@pytest.mark.parametrize("name", QUICK)
def test_quick_mode_prints_its_rows(name, tmp_path):
    """Each within ~60 s on a quiet 2-core machine; the timeout only bounds a hung run."""
    args, check = QUICK[name]
    before = docs_img_times()
    check(run_quick(name, *args(tmp_path), timeout_s=300), tmp_path)
    assert docs_img_times() == before
