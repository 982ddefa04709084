"""The model's weights, quantized: weight-only round-trips of every projection in groups, and their
storage bytes (Ch. 30 §30.6; Ch. 19 "Shrinking the numbers").
"""

from __future__ import annotations

import copy

import torch

from core.model.layout import fuse_projections, quantizable_weights
from core.model.model import GPT
from core.quant.quantize import fake_quantize_groups, int_range, storage_bytes


def row_lengths(model: GPT) -> list[int]:
    """Distinct input lengths (row lengths, in values) of the quantized weights: a group of
    inputs sharing one scale must divide each of them (e.g. 128 and the SwiGLU width 352)."""
    params = dict(model.named_parameters())
    return sorted({params[n].shape[1] for n in quantizable_weights(model)})


def valid_group_sizes(model: GPT, candidates=(8, 16, 32, 64, 128)) -> list[int]:
    """The ``candidates`` that divide every row length of ``model``'s quantized weights."""
    return [g for g in candidates if all(n % g == 0 for n in row_lengths(model))]


@torch.no_grad()
def quantize_weights(model: GPT, n_bit: int, group_size: int | None = 32, rounding: str = "half_even") -> GPT:
    """A copy of ``model`` whose block projections are rounded through ``n_bit`` symmetric
    integers, one scale per ``group_size`` inputs of each output row, stored back as floats.
    The original model is not touched. Raises ``ValueError`` for a bad bit width or group."""
    int_range(n_bit)  # validates n_bit (a symmetric 1-bit format is refused with its reason)
    q = copy.deepcopy(model)
    params = dict(q.named_parameters())
    for name in quantizable_weights(q):
        w = params[name]
        wq = fake_quantize_groups(w.detach().double().numpy(), n_bit, group_size, rounding)
        w.copy_(torch.from_numpy(wq).to(w.dtype))
    if model.layers and model.layers[0].self_attn.fused_qkv is not None:
        fuse_projections(q)  # a deep copy runs its parts one by one (core.model.layout): fuse it as the original
    return q.eval()


def weight_storage_bytes(model: GPT, n_bit: int | None, group_size: int | None = 32, scale_bytes: int = 2) -> int:
    """Bytes of all weights: quantized projections packed at ``n_bit`` with one fp16 scale per
    group, everything else at its float size. ``n_bit=None``: all float."""
    total = 0
    names = set(quantizable_weights(model)) if n_bit is not None else set()
    for name, p in model.named_parameters():
        if name in names:
            rows, cols = p.shape
            per_row = storage_bytes(cols, n_bit, group_size, scale_bytes)["total"]
            total += rows * per_row
        else:
            total += p.numel() * p.element_size()
    return total
