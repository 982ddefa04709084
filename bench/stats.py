"""The one percentile every bench reports: numpy's ``linear`` method (Hyndman & Fan's type 7, the
default of numpy, R and spreadsheets): for ``n`` sorted values and a fraction ``p``, the value at rank
``h = (n - 1)·p``, interpolated between its neighbours. A p95 of 10 values is 9.55 % of the way
between the 9th and 10th, not either one; with 40 values it is never the maximum alone."""

from __future__ import annotations

import math

import numpy as np

METHOD = "linear"


def percentile(values, q: float) -> float:
    """The ``q``-th percentile (0 … 100) of ``values`` (any units; ms in the benches) by ``METHOD``;
    NaN when there are none. Raises ``ValueError`` for ``q`` outside 0 … 100."""
    if not 0 <= q <= 100:
        raise ValueError(f"a percentile is from 0 to 100, not {q}")
    values = [float(v) for v in values]
    if not values:
        return math.nan
    return float(np.percentile(values, q, method=METHOD))


def p50_p95(values) -> tuple[float, float]:
    """Median and 95th percentile of ``values`` (``percentile``); NaN, NaN when there are none."""
    return percentile(values, 50), percentile(values, 95)
