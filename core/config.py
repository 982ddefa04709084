"""Model shape: one frozen dataclass with the field's standard names, plus presets."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class GPTConfig:
    """Shape of a Llama-style decoder-only transformer.

    Fields use the standard names: ``vocab_size`` tokens, ``block_size`` positions
    (the context window), ``n_layer`` blocks, ``n_head`` query heads, ``n_kv_head``
    key/value heads (GQA: ``n_head % n_kv_head == 0``; MHA when equal, MQA when 1),
    ``n_embd`` (= d_model) and ``ffn_hidden`` for the SwiGLU MLP.
    ``head_dim`` is derived as ``n_embd // n_head``.

    Raises ``ValueError`` on a non-positive size or heads that do not divide.
    """

    vocab_size: int = 1024
    block_size: int = 256
    n_layer: int = 4
    n_head: int = 4
    n_kv_head: int = 2
    n_embd: int = 128
    ffn_hidden: int = 352
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5

    def __post_init__(self) -> None:
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_kv_head", "n_embd", "ffn_hidden"):
            value = getattr(self, name)
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")
        if self.n_head % self.n_kv_head:
            raise ValueError(f"n_head ({self.n_head}) must be divisible by n_kv_head ({self.n_kv_head})")
        if self.head_dim % 2:
            raise ValueError(f"head_dim ({self.head_dim}) must be even for RoPE")

    @property
    def head_dim(self) -> int:
        """Width of one attention head, ``n_embd // n_head``."""
        return self.n_embd // self.n_head

    @property
    def attention_kind(self) -> str:
        """'MHA', 'MQA' or 'GQA', from how many query heads share one KV head."""
        if self.n_kv_head == self.n_head:
            return "MHA"
        return "MQA" if self.n_kv_head == 1 else "GQA"

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> GPTConfig:
        """Build from a dict; unknown keys raise ``ValueError`` naming them."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown config fields: {sorted(unknown)}")
        return cls(**data)

    @classmethod
    def load(cls, path: str | Path) -> GPTConfig:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


PRESETS: dict[str, GPTConfig] = {
    # The model shipped in assets/ (trained by `python -m core.train`).
    "shipped": GPTConfig(),
    # The draft model for speculative decoding (assets/draft/), same tokenizer, far cheaper.
    "draft": GPTConfig(n_layer=1, n_head=2, n_kv_head=1, n_embd=64, ffn_hidden=176),
    # A tiny shape for tests: fast, still GQA.
    "tiny": GPTConfig(vocab_size=64, block_size=32, n_layer=2, n_head=4, n_kv_head=2, n_embd=32, ffn_hidden=64),
    # A larger shape for benchmarks.
    "larger": GPTConfig(block_size=512, n_layer=8, n_head=8, n_kv_head=4, n_embd=512, ffn_hidden=1376),
}
