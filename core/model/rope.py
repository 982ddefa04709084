"""Rotary position embeddings (RoPE, Su et al., 2021) in Llama's rotate-half convention, with
Llama 3.1's frequency scaling: the angle tables and the rotation ``core.model.model`` applies to each
layer's queries and keys. Tables are computed in float64 and cast, so the float64 model is exact.
"""

from __future__ import annotations

import math

import torch

from core.model.config import GPTConfig


def rope_inv_freq(cfg: GPTConfig) -> torch.Tensor:
    """RoPE's angular frequencies ``(head_dim/2,)`` in float64: θ^(−2i/hd), then Llama 3.1's
    scaling if ``cfg.rope_scaling`` is set (low frequencies ÷ factor, high kept, a smooth blend
    between, by wavelength 2π/ω against the original context window)."""
    hd = cfg.head_dim
    arange = torch.arange(0, hd, 2, dtype=torch.float64, device="cpu")  # CPU even while a model is built on meta
    inv_freq = 1.0 / (cfg.rope_theta ** (arange / hd))  # (hd/2,)
    s = cfg.rope_scaling
    if s is None:
        return inv_freq
    wavelen = 2 * math.pi / inv_freq  # (hd/2,) positions per turn
    old = s.original_max_position_embeddings
    smooth = (old / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor)  # 0 … 1 in the band
    blended = (1 - smooth) * inv_freq / s.factor + smooth * inv_freq
    out = torch.where(wavelen > old / s.low_freq_factor, inv_freq / s.factor, blended)  # long waves: stretched
    return torch.where(wavelen < old / s.high_freq_factor, inv_freq, out)  # short waves: kept


def rope_tables(cfg: GPTConfig, dtype: torch.dtype, start: int = 0, length: int | None = None):
    """cos and sin tables, each ``(length, head_dim)`` (default: the ``block_size`` positions
    from 0), for RoPE (Su et al., 2021).

    Computed in float64 and cast, so the float64 model is exact and float32 matches Llama's.
    """
    inv_freq = rope_inv_freq(cfg)  # (hd/2,)
    t = torch.arange(start, start + (cfg.block_size if length is None else length), dtype=torch.float64, device="cpu")
    freqs = torch.outer(t, inv_freq)  # (length, hd/2)
    emb = torch.cat((freqs, freqs), dim=-1)  # (length, hd)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate ``x`` ``(B, heads, T, hd)`` by the angles of its absolute positions ``cos/sin (T, hd)``:
    x·cos + rotate_half(x)·sin, with rotate_half(x) = (−x₂, x₁) for the halves x = (x₁, x₂)."""
    return rotate(x, cos, signed_sin(sin))


def signed_sin(sin: torch.Tensor) -> torch.Tensor:
    """``sin`` ``(…, hd)`` with its first half negated, so that rotate_half(x)·sin =
    roll(x, hd/2)·signed_sin(sin) exactly (negation is exact: float64 stays exact)."""
    half = sin.shape[-1] // 2
    return torch.cat((-sin[..., :half], sin[..., half:]), dim=-1)


def rotate(x: torch.Tensor, cos: torch.Tensor, sin_signed: torch.Tensor) -> torch.Tensor:
    """``apply_rope`` with ``signed_sin`` done once per pass (every layer rotates q and k by the
    same angles): one roll per rotation instead of two slices, a negation and a concatenation."""
    return x * cos + x.roll(x.shape[-1] // 2, dims=-1) * sin_signed
