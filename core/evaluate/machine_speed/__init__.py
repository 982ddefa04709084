"""This machine's roofline, measured: memory read bandwidth, peak matmul rate, and a model's
prefill and decode passes placed on it. Results are kept per machine in a JSON file.

- Bandwidth: a float32 matrix-vector product over a 64 MiB matrix (twice the 32 MiB L3 here), so
  every byte comes from memory: bytes = the matrix's, once; a copy of the same size is also timed
  (read + write). The roofline's slope is the matvec's rate: it is how a decode step reads.
- Peak: a square float32 GEMM (n = 1,024: 2.1 GFLOP), 2·n³ FLOPs.
- Passes: ``core.cost.step_traffic`` gives each pass's FLOPs and bytes; the clock gives its time.

Every measurement runs once untimed, then all of a run's measurements repeat side by side in rounds,
the order turning each round (``rounds_ms``), until the time budget is spent (at least
``MIN_REPEATS`` rounds); each reports its median and its spread (interquartile range ÷ median)
(docs/ARCHITECTURE.md "Measured sections warm up and repeat"). Side by side, the bandwidth that
gives a pass its floor is measured under the same load as the pass. The cache file lives in
``$XDG_CACHE_HOME/inference-explainer/`` (default ``~/.cache/``), never in the source tree, keyed
by CPU model, torch version, thread count and the model's shape; it keeps the last two runs, so
the page can say how well they agree.

The package, by concern: ``timing`` (the clock, repeats and side-by-side rounds, the spread),
``roofline`` (bandwidth, peak and a model's passes measured, ``Point``, ``Roofline``, the table and
the counted intensities), ``runs`` (the cache file of kept runs and how well two runs agree). Every
public name is importable from here, as it was from the single module.
"""

from __future__ import annotations

from core.evaluate.machine_speed.roofline import (
    BANDWIDTH_SHAPE,
    GEMM_N,
    Point,
    Roofline,
    bandwidth_fns,
    counted,
    gemm_fn,
    measure_bandwidth,
    measure_pass,
    measure_peak,
    measure_roofline,
    pass_fn,
    passes,
    point_rows,
)
from core.evaluate.machine_speed.runs import (
    agreement,
    cache_dir,
    cache_path,
    cpu_model,
    load_runs,
    machine_key,
    run_agreement,
    run_medians,
    run_ratios,
    save_run,
)
from core.evaluate.machine_speed.timing import MIN_REPEATS, clock, repeat_ms, rounds_ms, spread

__all__ = [
    "BANDWIDTH_SHAPE",
    "GEMM_N",
    "MIN_REPEATS",
    "Point",
    "Roofline",
    "agreement",
    "bandwidth_fns",
    "cache_dir",
    "cache_path",
    "clock",
    "counted",
    "cpu_model",
    "gemm_fn",
    "load_runs",
    "machine_key",
    "measure_bandwidth",
    "measure_pass",
    "measure_peak",
    "measure_roofline",
    "pass_fn",
    "passes",
    "point_rows",
    "repeat_ms",
    "rounds_ms",
    "run_agreement",
    "run_medians",
    "run_ratios",
    "save_run",
    "spread",
]
