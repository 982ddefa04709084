"""The weight formats' packed projections, each multiplying through a real kernel: ``Int8Linear``
(``_weight_int8pack_mm``), ``Int4Linear`` (``_weight_int4pack_mm_for_cpu``, groups of ``GROUP``),
``BlockLinear`` (ggml's Q8_0 / Q4_0 blocks, dequantized to float32 on every forward), and
``packed_module`` choosing one for a format; ``KERNELS`` names each format's code path for the
sentence (``report``). Why these kernels and not others: the package's docstring.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from core.gguf.blocks import quantize_blocks

GROUP = 32  # int4 group and ggml block

# How each format multiplies, as the sentence names it (facts about the code path, not claims of speed).
KERNELS = {
    "float32": "MKL's float32 matrix product",
    "bfloat16": "torch's bfloat16 matrix product",
    "int8 (bf16 activations)": "_weight_int8pack_mm on bfloat16 activations",
    "int8 (f32 activations)": "_weight_int8pack_mm on float32 activations",
    "int4 (bf16 activations)": "_weight_int4pack_mm_for_cpu on bfloat16 activations",
    "Q8_0 dequantize + matmul": "dequantizes every Q8_0 block to float32, then a float32 product",
    "Q4_0 dequantize + matmul": "dequantizes every Q4_0 block to float32, then a float32 product",
}
DEQUANTIZING = {"Q8_0 dequantize + matmul", "Q4_0 dequantize + matmul"}


class Int8Linear(nn.Module):
    """``y = x · (q · scale)ᵀ + bias`` through ``_weight_int8pack_mm``: q int8 ``(out, in)``, one
    symmetric scale per output row (max |w| / 127) in the kernel's activation dtype ``dtype``; the
    input is converted to it and the output back (one row each: the rest of the model stays float32,
    where torch's attention, norms and output head run fastest on this CPU build)."""

    def __init__(self, lin: nn.Linear, dtype: torch.dtype):
        super().__init__()
        self.act, self.in_features = dtype, lin.in_features
        w = lin.weight.detach().float()
        scale = (w.abs().amax(1) / 127).clamp(min=1e-12)  # (out,)
        self.register_buffer("q", (w / scale[:, None]).round().clamp(-127, 127).to(torch.int8).contiguous())
        self.register_buffer("scale", scale.to(dtype))
        self.register_buffer("bias", None if lin.bias is None else lin.bias.detach())

    def weight(self) -> torch.Tensor:
        return self.q.float() * self.scale.float()[:, None]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x2 = x.reshape(-1, x.shape[-1]).to(self.act).contiguous()  # (rows, in)
        y = torch.ops.aten._weight_int8pack_mm(x2, self.q, self.scale).to(x.dtype).view(*x.shape[:-1], -1)
        return y if self.bias is None else y + self.bias


class Int4Linear(nn.Module):
    """Asymmetric 4-bit groups of 32 through ``_weight_int4pack_mm_for_cpu``: code c in 0 … 15,
    w = (c − 8) · scale + zero with zero = min + 8 · scale (the kernel's convention), packed two
    codes a byte; scales and zeros ``(in / 32, out, 2)`` in bfloat16, the kernel's activation dtype
    (input converted to it, output back, as ``Int8Linear``)."""

    def __init__(self, lin: nn.Linear, dtype: torch.dtype):
        super().__init__()
        self.act, self.in_features = dtype, lin.in_features
        w = lin.weight.detach().float()
        n, k = w.shape
        g = w.view(n, k // GROUP, GROUP)  # (out, groups, 32)
        lo, hi = g.amin(-1), g.amax(-1)
        scale = ((hi - lo) / 15).clamp(min=1e-12)  # (out, groups)
        codes = ((g - lo[..., None]) / scale[..., None]).round().clamp(0, 15).to(torch.int32).view(n, k)
        zero = lo + 8 * scale
        self.register_buffer("packed", torch.ops.aten._convert_weight_to_int4pack_for_cpu(codes, 1))  # (out, in/2)
        self.register_buffer("scale_zero", torch.stack([scale, zero], -1).transpose(0, 1).contiguous().to(dtype))
        self.register_buffer("bias", None if lin.bias is None else lin.bias.detach())
        self._codes = codes  # kept only to check the packing (tests); not read by forward

    def weight(self) -> torch.Tensor:
        sz = self.scale_zero.float().transpose(0, 1)  # (out, groups, 2)
        n, k = self._codes.shape
        c = self._codes.view(n, k // GROUP, GROUP).float()
        return ((c - 8) * sz[..., :1] + sz[..., 1:]).view(n, k)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x2 = x.reshape(-1, x.shape[-1]).to(self.act).contiguous()  # (rows, in)
        y = torch.ops.aten._weight_int4pack_mm_for_cpu(x2, self.packed, GROUP, self.scale_zero)
        y = y.to(x.dtype).view(*x.shape[:-1], -1)
        return y if self.bias is None else y + self.bias


class BlockLinear(nn.Module):
    """ggml's Q8_0 or Q4_0 blocks (``core.gguf.blocks.quantize_blocks``, bit for bit), kept as the
    fp16 scales ``d`` ``(out, in/32)`` and the stored bytes ``qs`` ``(out, in/32, 32 or 16)``;
    every forward dequantizes to a float32 ``(out, in)`` weight and multiplies."""

    def __init__(self, lin: nn.Linear, fmt: str):
        super().__init__()
        self.in_features = lin.in_features
        w = lin.weight.detach().float().contiguous()
        n, k = w.shape
        raw = np.frombuffer(quantize_blocks(w.numpy(), fmt), dtype=np.uint8)
        size = {"Q8_0": 34, "Q4_0": 18}[fmt]
        blocks = raw.reshape(n, k // GROUP, size)
        self.fmt, self.shape = fmt, (n, k)
        self.register_buffer("d", torch.from_numpy(blocks[..., :2].copy().view(np.float16)[..., 0]))  # (out, groups)
        self.register_buffer("qs", torch.from_numpy(blocks[..., 2:].copy()))  # (out, groups, 32 | 16) uint8
        self.register_buffer("bias", None if lin.bias is None else lin.bias.detach().float())

    def weight(self) -> torch.Tensor:
        if self.fmt == "Q8_0":
            q = self.qs.view(torch.int8).float()  # (out, groups, 32)
        else:  # value j in the low nibble of byte j, value j + 16 in the high nibble; stored code = q + 8
            q = torch.cat([self.qs & 0x0F, self.qs >> 4], dim=-1).float() - 8
        return (q * self.d.float()[..., None]).view(self.shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight(), self.bias)


def packed_module(lin: nn.Linear, fmt: str) -> nn.Module:
    """The module a projection becomes in ``fmt`` (float formats: the ``nn.Linear`` itself)."""
    if fmt.startswith("int8"):
        return Int8Linear(lin, torch.bfloat16 if "bf16" in fmt else torch.float32)
    if fmt.startswith("int4"):
        return Int4Linear(lin, torch.bfloat16)
    if fmt in DEQUANTIZING:
        return BlockLinear(lin, fmt[:4])
    return lin
