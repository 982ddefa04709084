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
the counted intensities), ``runs`` (the cache file of kept runs and how well two runs agree).
"""
