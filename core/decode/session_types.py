"""What one learner's decode request holds (``core.decode.session`` prefills and steps it): the shared
model it runs on (``ModelKey``), its state (``DecodeSession``) and a step computed but not yet
shown (``PendingStep``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import numpy as np
import torch

from core.decode.generate import SamplingConfig, StepResult
from core.decode.kv_cache import KVCache


@dataclass(frozen=True)
class ModelKey:
    """Which shared model a request runs on: its precision, its weight-only quantization
    (``weight_bits`` None = float weights) and its ``source`` (None: the shipped model, else the
    checkpoint folder it was loaded from). A request keeps its key from Prefill on."""

    dtype: str = "float32"
    weight_bits: int | None = None
    source: str | None = None

    @classmethod
    def of(cls, key) -> ModelKey:
        """A ``ModelKey`` from itself or a ``(dtype, weight_bits)`` pair."""
        return key if isinstance(key, ModelKey) else cls(*key)

    @property
    def plain(self) -> bool:
        """float32 with float weights: the precision every model is shown in by default."""
        return self.dtype == "float32" and self.weight_bits is None

    @property
    def label(self) -> str:
        """Precision and weights ("float64, 4-bit weights"); the model is named elsewhere."""
        return self.dtype + ("" if self.weight_bits is None else f", {self.weight_bits}-bit weights")

    @property
    def change(self) -> str:
        """Only what differs from ``plain`` ("4-bit weights", "float64", "float64, 8-bit weights"):
        the heatmap's title adds it, and "float32, " made that title run under the chart's icons."""
        parts = ([] if self.dtype == "float32" else [self.dtype]) + (
            [] if self.weight_bits is None else [f"{self.weight_bits}-bit weights"]
        )
        return ", ".join(parts)


@dataclass
class DecodeSession:
    """State of one request. ``consumed`` ids have K/V in ``cache``; ``pending`` is the token
    chosen from the latest logits and not yet consumed (Table 30.1).

    Per forward pass: ``passes`` its attention, one ``(n_head, T_new, S)`` array per layer;
    ``engine_ms`` its measured compute (forward + selection, ms, excluding a learner's clicks);
    ``max_diff`` max |cached − recomputed| logit; ``cache_bytes`` the cache tensors' bytes after it.
    Per cached position: ``row_prints`` its fingerprint, taken when a pass wrote it
    (``core.decode.cache_rows.fingerprints``).
    """

    prompt_ids: list[int]
    sampling: SamplingConfig
    cache: KVCache
    generator: torch.Generator
    model_key: ModelKey = ModelKey()
    prompt_text: str = ""
    consumed: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)
    passes: list[list[np.ndarray]] = field(default_factory=list)
    logits: torch.Tensor | None = None
    engine_ms: list[float] = field(default_factory=list)
    max_diff: list[float] = field(default_factory=list)
    max_logit: list[float] = field(default_factory=list)
    cache_bytes: list[int] = field(default_factory=list)
    row_prints: list[tuple[bytes, ...]] = field(default_factory=list)
    scores_cached: int = 0
    scores_naive: int = 0
    reused: int = 0  # leading positions this request's Prefill kept from the request before it (not counted)
    past_end: bool = False  # the learner chose to keep stepping after the end token
    check_ms: float = 0.0  # how long the latest full-prefix recompute took by the clock (ms)
    check_cpu_ms: float = 0.0  # … and in CPU time of the thread that ran it (ms)
    uid: str = field(default_factory=lambda: uuid.uuid4().hex[:12])  # tells figures of two requests apart

    @property
    def pending(self) -> int | None:
        """The chosen token that the next forward pass will consume, if any."""
        return self.outputs[-1] if self.outputs else None

    @property
    def n_positions(self) -> int:
        """Positions whose K/V are cached: rows of the attention matrix."""
        return self.cache.pos

    @property
    def n_steps(self) -> int:
        """Decode steps taken after prefill: every output token but the first (which prefill
        chose). Not ``len(passes) - 1``: a re-prefill keeps several earlier passes' rows."""
        return max(0, len(self.outputs) - 1)

    def emission_times_ms(self) -> list[float]:
        """Engine-clock emission time of each output token, arrival = start of prefill = 0."""
        return list(np.cumsum(self.engine_ms))


@dataclass
class PendingStep:
    """A decode step computed but not yet shown: its result, the token it chose, its time, the
    recomputed logits to compare with, and the cache and generator it leaves behind."""

    result: StepResult
    chosen: int
    ms: float
    naive_logits: torch.Tensor | None
    cache: KVCache
    generator: torch.Generator
