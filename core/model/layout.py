"""Weight layouts for decode: long contiguous lines, and q/k/v (SwiGLU's gate/up) fused.

A decode step multiplies one row vector by every weight, so its floor is weight bytes ÷ memory
read bandwidth (#15). One thread of MKL reads small matrices well below that bandwidth, and one
product over the stacked q, k and v (gate and up) reads faster than the three (two) apart
(measured on SmolLM2-135M's shapes: docs/benchmarks.md, "A real-sized checkpoint").

The pages name, draw, quantize and export ``q_proj``, ``k_proj``, ``v_proj``, ``gate_proj`` and
``up_proj`` one by one, so they stay separate ``nn.Linear`` modules: after ``fuse_projections``
their weights (and biases) are *views* into one fused tensor, which is stored once. The forward
pass uses the fused product only while that is still true — each part's tensor is the view at
its offset — and with gradients off; otherwise it runs the parts one by one. So anything that
gives a part a new tensor (``.double()``, ``load_state_dict(assign=True)``, ``param.data = …``,
a ``copy.deepcopy``) falls back to the separate products, and in-place writes (``copy_``) reach
the fused product through the views. A ``Fused`` may instead hold a ``module`` multiplying by the
stacked weights in another form (``core.evaluate.format_speed`` packs them as int8, int4 or ggml
blocks): ``project`` then always calls it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


def decode_layout(w: torch.Tensor) -> torch.Tensor:
    """The same ``(out, in)`` weight, stored along its longer side. A decode step multiplies one
    row vector by every weight, and BLAS (MKL here) streams a matrix fastest along long
    contiguous lines: a wide one (``out > in``: the SwiGLU gate/up, the output head) runs at
    about the full memory read bandwidth stored column by column — a transposed view of a
    contiguous ``(in, out)`` tensor — but at about half stored row by row with rows of d_model
    values (measured here for SmolLM2's 49,152 × 576 output head: 22 vs 12 GB/s, one thread).
    A square one (``o_proj``) is a little faster column by column too (576 × 576: 89–95 vs
    102–109 µs). Values, names and shapes are unchanged; ``nn.Linear`` uses either layout."""
    if w.shape[0] >= w.shape[1]:
        return w.T.contiguous().T  # (out, in) view of a contiguous (in, out) tensor
    return w.contiguous()


@dataclass
class Fused:
    """Parts ``(out_i, in)`` stacked along ``out``: ``weight`` ``(Σ out_i, in)`` in
    ``decode_layout``, ``bias`` ``(Σ out_i,)`` or None, ``sizes`` the ``out_i`` in order."""

    weight: torch.Tensor
    bias: torch.Tensor | None
    sizes: tuple[int, ...]
    ptrs: tuple[tuple[int, int], ...]  # each part's (weight, bias) data_ptr when fused (bias: 0 if none)
    # A module that multiplies by the parts' weights stacked, kept in another form (a packed int4
    # or int8 copy: ``core.evaluate.format_speed``): ``project`` calls it instead of ``F.linear``,
    # and ``weight``, ``bias`` and ``ptrs`` are then unused.
    module: nn.Module | None = None

    def __deepcopy__(self, memo):
        # A deep copy gives the parts their own tensors (nn.Parameter clones), so a copied fused
        # tensor would be dead weight: the copy runs its parts one by one.
        return None


def empty_decode_layout(shape: tuple[int, int], dtype: torch.dtype) -> torch.Tensor:
    """An uninitialised ``(out, in)`` tensor stored as ``decode_layout`` would store it."""
    out, inp = shape
    return torch.empty(inp, out, dtype=dtype).T if out >= inp else torch.empty(out, inp, dtype=dtype)


def _adjacent(parts: list[torch.Tensor]) -> torch.Tensor | None:
    """The one tensor ``parts`` are consecutive slices of along dim 0 (same storage, strides and
    dtype, each starting where the one before ends), as a view; None if they are not."""
    first = parts[0]
    offset = first.storage_offset()
    for t in parts:
        same = t.untyped_storage().data_ptr() == first.untyped_storage().data_ptr()
        if not same or t.stride() != first.stride() or t.dtype != first.dtype or t.storage_offset() != offset:
            return None
        offset += t.shape[0] * t.stride(0)
    return first.detach().as_strided((sum(t.shape[0] for t in parts), *first.shape[1:]), first.stride())


def _stack(linears, attr: str, layout) -> torch.Tensor:
    """The parts' ``attr`` (weight or bias) as one tensor; parts not already adjacent are copied
    into a new one (in ``layout``) and each module's parameter becomes its view of it."""
    parts = [getattr(m, attr) for m in linears]
    whole = _adjacent(parts)
    if whole is not None:
        return whole  # laid out fused when loaded (``fused_buffers``): nothing to copy
    whole = layout(torch.cat([p.detach() for p in parts]))
    start = 0
    for m, p in zip(linears, parts, strict=True):
        setattr(m, attr, nn.Parameter(whole[start : start + p.shape[0]], requires_grad=p.requires_grad))
        start += p.shape[0]
    return whole


def fuse(linears: list[nn.Linear]) -> Fused:
    """``linears``' weights (and biases) as one tensor each, every part's parameter a view of it;
    values, names, shapes and ``requires_grad`` unchanged. Raises ``ValueError`` if the parts
    differ in input size, dtype or having a bias."""
    if len({(m.in_features, m.weight.dtype, m.bias is None) for m in linears}) != 1:
        raise ValueError("fused parts need the same input size, dtype and bias-or-none")
    weight = _stack(linears, "weight", decode_layout)  # (Σ out, in)
    bias = _stack(linears, "bias", lambda t: t) if linears[0].bias is not None else None  # (Σ out,)
    ptrs = tuple((m.weight.data_ptr(), m.bias.data_ptr() if bias is not None else 0) for m in linears)
    return Fused(weight, bias, tuple(m.out_features for m in linears), ptrs)


def fusion_groups(model) -> list[list[str]]:
    """Module names ``fuse_projections`` fuses, one list per product: each block's
    ``layers.{i}.self_attn.{q,k,v}_proj`` and, with SwiGLU, ``layers.{i}.mlp.{gate,up}_proj``."""
    groups = []
    for i, block in enumerate(model.layers):
        groups.append([f"layers.{i}.self_attn.{p}_proj" for p in ("q", "k", "v")])
        if block.mlp.swiglu:
            groups.append([f"layers.{i}.mlp.{p}_proj" for p in ("gate", "up")])
    return groups


def fused_buffers(model, dtype: torch.dtype) -> dict[str, torch.Tensor]:
    """For a loader: parameter name → an empty view to ``copy_`` that weight (or bias) into,
    the views of one ``fusion_groups`` product lying one after another in one tensor (weights in
    ``decode_layout``). Assigned as the parameters, ``fuse_projections`` then fuses them without
    a copy (a copy would leave the freed parts as holes in the heap: ~280 MB more RSS for
    SmolLM2-135M). ``model`` may be on the meta device: only shapes are read."""
    params, views = dict(model.named_parameters()), {}
    for names in fusion_groups(model):
        for attr in ("weight", "bias"):
            keys = [f"{n}.{attr}" for n in names]
            if keys[0] not in params:
                continue
            sizes = [params[k].shape[0] for k in keys]
            rest = tuple(params[keys[0]].shape[1:])
            whole = empty_decode_layout((sum(sizes), *rest), dtype) if rest else torch.empty(sum(sizes), dtype=dtype)
            views.update(zip(keys, whole.split(sizes), strict=True))
    return views


def _still_views(fused: Fused, linears) -> bool:
    """True while every part's weight (and bias) is still the view of ``fused`` it was made:
    the fused tensor is kept alive, so no other tensor can start at that address, and a view's
    shape and dtype cannot change in place."""
    for m, (w_ptr, b_ptr) in zip(linears, fused.ptrs, strict=True):
        if m.weight.data_ptr() != w_ptr or (m.bias.data_ptr() if m.bias is not None else 0) != b_ptr:
            return False
    return True


def project(x: torch.Tensor, linears, fused: Fused | None, join: int = 1) -> tuple[torch.Tensor, ...]:
    """Each of ``linears`` applied to ``x`` ``(B, T, in)`` → a tuple of ``(B, T, out_i)``: one
    product when ``fused`` still holds their weights and gradients are off, else one each.
    ``join`` = j returns the first j outputs as one ``(B, T, out_0 + … + out_{j-1})`` (q and k,
    which RoPE rotates together): a view of the fused product, else a concatenation. A ``fused``
    holding a ``module`` (weights packed in another format) is always used."""
    if fused is not None and fused.module is not None:
        return fused.module(x).split((sum(fused.sizes[:join]), *fused.sizes[join:]), dim=-1)
    if fused is not None and not torch.is_grad_enabled() and _still_views(fused, linears):
        return F.linear(x, fused.weight, fused.bias).split((sum(fused.sizes[:join]), *fused.sizes[join:]), dim=-1)
    outs = [m(x) for m in linears]
    return (torch.cat(outs[:join], dim=-1) if join > 1 else outs[0], *outs[join:])


def fuse_projections(model) -> None:
    """Fuse every block's q/k/v and (SwiGLU) gate/up of a ``core.model.model.GPT`` in place, one
    block at a time (peak memory: one block's parts twice; none when loaded into
    ``fused_buffers``). For inference: ``project`` keeps training and any replaced weight on the
    separate products."""
    for block in model.layers:
        attn, mlp = block.self_attn, block.mlp
        attn.fused_qkv = fuse([attn.q_proj, attn.k_proj, attn.v_proj])
        if mlp.swiglu:
            mlp.fused_gate_up = fuse([mlp.gate_proj, mlp.up_proj])


def quantizable_weights(model) -> list[str]:
    """Names of the linear weights that weight-only quantization rounds: every projection in
    every block. The embedding and the output head (lm_head) stay in float (the
    GGUF export stores the same ones quantized)."""
    return [n for n, p in model.named_parameters() if n.startswith("layers.") and n.endswith("proj.weight")]
