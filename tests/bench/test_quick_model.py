"""Benchmarks that cannot rot: every ``python -m bench.NAME`` runs in its ``--quick`` mode (the same
code path on tiny sizes) as a subprocess from the repository's root, and its printed tables hold the
rows they promise, with finite numbers where the bench reports numbers. This file: the benches
without a browser (models, and the websocket-protocol servers); tests/bench/test_quick_browser.py
has the four that drive Chromium, so that pytest-xdist's two workers (``--dist loadfile``) share the
load. ``run_quick``, ``table_rows``, ``row`` and ``finite`` are shared with that file.

bench.step_profile has no command line (server_load --replicas --profile runs it); bench.browser,
fresh_app, procs, stats and ws_session are libraries the benches use."""

from __future__ import annotations

import importlib.util
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from bench import gpu_fewer_bits

ROOT = Path(__file__).resolve().parents[2]
NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?|\b(?:nan|inf)\b", re.IGNORECASE)


def run_quick(name: str, *args: str, timeout_s: float = 240) -> str:
    """Run ``python -m bench.NAME --quick ARGS`` from the repository's root and wait for it to end
    (no fixed sleep: ``timeout_s`` only bounds a hung run); fail with its output unless it exits 0.
    Returns its standard output."""
    cmd = [sys.executable, "-m", f"bench.{name}", "--quick", *args]
    try:
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"{' '.join(cmd[1:])} ran over {timeout_s:.0f} s; its output so far:\n{err.stdout or ''}")
    assert done.returncode == 0, f"{' '.join(cmd[1:])} exited {done.returncode}:\n{done.stdout}\n{done.stderr[-3000:]}"
    return done.stdout


def table_rows(out: str) -> list[list[str]]:
    """Every row of every markdown table printed in ``out``, as its cells (the label first);
    separator rows (``|---|---:|``) left out, header rows kept."""
    rows = []
    for line in out.splitlines():
        line = line.strip()
        if not (line.startswith("|") and line.endswith("|")):
            continue
        cells = [c.strip() for c in line[1:-1].split("|")]
        if all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
            continue
        rows.append(cells)
    return rows


def row(rows: list[list[str]], label: str) -> list[str]:
    """The first row whose label (first cell) is ``label``; fails naming the labels there are."""
    for cells in rows:
        if cells[0] == label:
            return cells
    pytest.fail(f"no row {label!r}; rows: {[c[0] for c in rows]}")


def finite(cell: str) -> list[float]:
    """The numbers in a cell (thousands separators allowed: ``1,234.5 ms``, ``2.02×``, ``122 / 156
    ms``); fails if there are none or any is NaN or infinite."""
    found = NUMBER.findall(cell)
    values = [float(x.replace(",", "")) for x in found]
    assert values, f"no number in {cell!r}"
    assert all(math.isfinite(v) for v in values), f"a number that is not finite in {cell!r}"
    return values


def all_finite(cells: list[str]) -> None:
    for cell in cells:
        finite(cell)


def check_decode_speed(out: str) -> None:
    rows = table_rows(out)
    assert rows[0][:3] == ["positions", "cached step (ms)", "full recompute (ms)"], rows[0]
    assert "## shipped model" in out
    for n in ("16", "32", "64"):
        all_finite(row(rows, n))
    assert len(re.findall(r"fitted growth exponent, .*: -?[\d.]+ over all lengths", out)) == 3


def check_paged_speed(out: str) -> None:
    rows = table_rows(out)
    for label in ("positions", "batching"):
        row(rows, label)
    for label in ("64", "256", "512", "continuous", "static", "continuous / static"):
        all_finite(row(rows, label)[1:])


def check_gguf_formats(out: str) -> None:
    from bench.gguf_formats import FORMATS

    rows = table_rows(out)
    for f in FORMATS + ("IQ4_NL", "IQ4_XS"):
        all_finite(row(rows, f)[1:])  # the bits table comes first: its row is the one found
    exact = [r for r in rows if r[0] in FORMATS and len(r) == 3]
    assert [r[0] for r in exact] == list(FORMATS)
    for label, same, rms in exact:
        assert "DIFFERENT" not in same and "NO" not in same.split(), (label, same)
        finite(rms)
    finite(row(rows, "F16")[2])
    for fmt in ("F32", "Q8_0", "Q4_0"):
        assert any(r[0] == fmt and len(r) == 5 for r in rows), fmt
    assert re.search(r"header with 1,500 tokens, types and merges: GGUFReader [\d.]+ s, core.gguf.reader [\d.]+ s", out)


def check_llama_cpp_parity(out: str) -> None:
    if importlib.util.find_spec("llama_cpp") is None:  # not installed here (see docs/benchmarks.md)
        assert out.startswith("skipped (--quick): llama-cpp-python is not installed"), out
        assert "pip install llama-cpp-python" in out
        return
    for fmt in ("F32", "Q4_0"):
        assert f"{fmt} file (" in out
    deltas = re.findall(r"max \|Δlogit\| (\S+), greedy agreement (\d+)/(\d+)", out)
    assert len(deltas) == 3 and all(math.isfinite(float(d)) for d, _, _ in deltas), out


def check_pretrained_speed(out: str) -> None:
    rows = table_rows(out)
    assert rows[0][:4] == ["positions", "clock", "bandwidth", "floor"], rows[0]
    for n in ("128", "512"):
        clocks = [r for r in rows if r[0] == n]
        assert [r[1] for r in clocks] == ["wall", "process CPU"], clocks
        for r in clocks:
            all_finite([r[0], *r[2:]])


def check_server_load(out: str) -> None:
    rows = table_rows(out)
    assert row(rows, "sessions completed")[1] == "2 of 2"
    assert row(rows, "errors")[1] == "0"
    assert row(rows, "sessions whose text differs from a solo run (cross-talk)")[1] == "0"
    for label in (
        "send Step → the Step's rerun finished, p50",
        "send Step → the Step's rerun finished, p95",
        "wall time for the whole lesson",
        "server memory at the end: RSS / PSS",
        "server CPU time during the lesson",
    ):
        finite(row(rows, label)[1])


def check_gc_pauses(out: str) -> None:
    from bench.gc_pauses import SETTINGS

    rows = table_rows(out)
    assert rows[0] == ["setting", "full collections", "longest / median pause", "Step p50 / p95"], rows[0]
    for name, _ in SETTINGS:
        all_finite(row(rows, name)[1:])


def check_shipped_model(out: str) -> None:
    from bench.shipped_model import README_ROWS

    rows = table_rows(out)
    for k in range(1, 21):
        r = row(rows, str(k))
        finite(r[2]), finite(r[4])
    assert re.search(r"Runner-up ≥ 5 %: \d+ of 20 steps", out)
    assert "float32: '" in out and all(f"{b}-bit:   '" in out for b in (4, 3, 2))
    for label in ("float32", *README_ROWS):
        all_finite(row(rows, label)[1:])
    for k in ("1", "2", "3", "4", "6", "8"):  # speculative decoding; the token table's 1–8 come first
        spec = [r for r in rows if r[0] == k and len(r) == 4]
        assert len(spec) == 1, (k, spec)
        all_finite(spec[0])


def check_roofline(out: str) -> None:
    """bench.roofline (issue 40's, written beside this file): its shipped-model run, loosely, by labels
    that name what is measured."""
    rows = table_rows(out)
    assert "### shipped (assets/)" in out and re.search(r"Run 1: bandwidth [\d.]+ GB/s", out), out[:500]
    decode = [r for r in rows if r[0].startswith("decode B=1")]
    assert decode, [r[0] for r in rows]
    finite(decode[0][1])  # ms
    all_finite(row(rows, "float32")[1:4])  # MB, ms and tokens per step


def test_roofline_compiled_copy_runs_the_same_products():
    """bench.roofline --compiled hands dynamo each fused product of a float copy as a module over the
    same fused tensors (no data-pointer check to break its graph): the same tensors, the same logits."""
    import copy

    import torch

    from bench.roofline import _as_modules
    from core.evaluate.format_speed.measure import build
    from core.model.layout import fuse_projections
    from core.model.shipped import load_model

    model = copy.deepcopy(load_model())  # fused as a loaded checkpoint is (the shipped one is not)
    fuse_projections(model)
    eager, moduled = build(model, "float32"), build(model, "float32")
    _as_modules(moduled)
    fused = moduled.layers[0].self_attn.fused_qkv
    assert fused.module is not None and fused.module.weight.data_ptr() == fused.weight.data_ptr()
    ids = torch.arange(9).view(1, 9)
    with torch.inference_mode():
        assert torch.equal(eager(ids)[0], moduled(ids)[0])


def check_gpu_fewer_bits(out: str) -> None:
    if not torch.cuda.is_available():  # this machine: it refuses in a sentence and measures nothing
        assert out.strip() == gpu_fewer_bits.NO_GPU, out
        return
    rows = table_rows(out)  # a GPU here: SmolLM2's rows only
    assert len(rows) > 1 and "SmolLM2" in out and "Llama-3-8B" not in out, out


def check_class_workload(out: str) -> None:
    """Through nginx to the engine's process: every request served, each token-identical to a solo greedy run
    (generate_cached, the same weights), every request after the system prompt reading its two whole blocks, each
    long document prefilled whole (no prefix-cache hit)."""
    rows = table_rows(out)
    assert row(rows, "requests served / sent")[1] == "8 / 8", out
    assert row(rows, "requests token-identical to solo runs")[1] == "8 / 8", out
    assert row(rows, "shared system prompt: hits per request (positions)")[1] == "32 … 32", out
    # each long document prefills whole: the second would find the first's blocks cached, and measure no stall
    assert row(rows, "… the document's positions found in the prefix cache, off / on")[1] == "0 / 0", out
    for label in ("throughput: engine ÷ one at a time", "per-student ITL p50 / p95", "engine CPU with nothing to do"):
        finite(row(rows, label)[1])


QUICK = {  # bench name: (extra arguments, its check, timeout in s)
    "decode_speed": ((), check_decode_speed, 180),
    "paged_speed": ((), check_paged_speed, 120),
    "gguf_formats": ((), check_gguf_formats, 120),
    "llama_cpp_parity": ((), check_llama_cpp_parity, 120),
    "pretrained_speed": ((), check_pretrained_speed, 180),
    "server_load": ((), check_server_load, 180),
    "gc_pauses": ((), check_gc_pauses, 240),
    "shipped_model": ((), check_shipped_model, 120),
    "roofline": ((), check_roofline, 120),
    "gpu_fewer_bits": ((), check_gpu_fewer_bits, 120),
    "class_workload": ((), check_class_workload, 240),
}


@pytest.mark.parametrize("name", QUICK)
def test_quick_mode_prints_its_rows(name):
    args, check, timeout_s = QUICK[name]
    check(run_quick(name, *args, timeout_s=timeout_s))
