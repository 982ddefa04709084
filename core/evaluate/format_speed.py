"""Weight formats timed honestly: one cached decode step with the block projections stored as
float32, bfloat16, int8, int4, or ggml's Q8_0 / Q4_0 blocks, each through a real kernel.

Ch. 30 §30.6: "fewer stored bits do not automatically mean every operation runs faster". A format
here is a copy of the model whose projections (``core.model.layout.quantizable_weights``: q, k, v,
o, gate, up, down of every block) are replaced by a module that keeps the weights packed and
multiplies through torch's own kernels:

- int8: ``torch.ops.aten._weight_int8pack_mm`` (one symmetric scale per output row), with bfloat16
  activations and, separately, float32 ones: on torch 2.13's CPU build the float32 path is ~20×
  slower for the same bytes (2048 × 2048, one thread: 5.4 vs 0.23 ms), so both are timed;
- int4: ``torch.ops.aten._weight_int4pack_mm_for_cpu`` (groups of 32, a scale and a zero point
  each, bfloat16 activations; its float32 path took 18 ms for the same matrix, not timed).
  ``_dyn_quant_matmul_4bit`` is not used: on x86 (no KleidiAI) ``_dyn_quant_pack_4bit_weight``
  keeps float32 weights, and its product ran at ~1 GB/s with the weights hot (3,072 × 576, one
  thread, measured 2026-12-03); groups of 64 or other inner-k tiles moved the int4 kernel by at
  most ~10%, within the noise;
- Q8_0 / Q4_0: ggml's blocks bit for bit (``core.gguf.blocks``), dequantized to float32 on every
  step, then one float32 matmul: what a simple engine without fused block kernels does.

The rest of the model (embedding, norms, output head, KV cache, activations between products) stays
in the format's ``rest`` dtype (``core.cost.step_traffic.FORMATS``): bfloat16 for bfloat16, float32
otherwise. The int kernels get their row of activations converted to bfloat16 and give it back as
float32: with the whole model in bfloat16, the ``larger`` preset's int4 step spent more time in its
bfloat16 attention, norms and output head than in the int4 products (torch's profiler, one thread).
Every format's step runs from the same cached context (a float32 prefill, cast), so max |Δlogit| is
that one step's error against float32. The block projections are also timed alone (one row each, in
the same rounds), so the sentence can say how much of a step is the weight products.
"""

from __future__ import annotations

import copy
import statistics
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from core.cost.step_traffic import FORMATS, step_bytes
from core.decode.kv_cache import KVCache
from core.evaluate.machine_speed import bandwidth_fns, rounds_ms, spread
from core.gguf.blocks import quantize_blocks
from core.model.layout import Fused, fuse_projections, fusion_groups, project, quantizable_weights
from core.model.model import GPT

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


def rest_dtype(fmt: str) -> torch.dtype:
    return torch.bfloat16 if FORMATS[fmt]["rest"] == 2 else torch.float32


def build(model: GPT, fmt: str) -> GPT:
    """A copy of ``model`` in ``fmt``: the rest cast to the format's dtype, every block projection
    replaced by ``packed_module``. When ``model`` runs q/k/v and gate/up as one product each (a loaded
    checkpoint: ``core.model.layout.fuse_projections``), so does the copy: for the float formats its
    parts are fused again (a deep copy gives them tensors of their own); for the others each group's
    weights, stacked, are packed once more into one module that the step calls (its rows and groups
    are the parts', quantized alike, so the values are the same as the parts' one by one). Raises ``ValueError`` for
    an unknown format or a projection whose input width is not a multiple of 32 (int4 groups, ggml
    blocks)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    fused = bool(model.layers) and model.layers[0].self_attn.fused_qkv is not None
    out = copy.deepcopy(model).to(rest_dtype(fmt))
    if fmt in ("float32", "bfloat16"):
        if fused:
            fuse_projections(out)
        return out
    for name in quantizable_weights(out):
        parent_name, _, attr = name.removesuffix(".weight").rpartition(".")
        parent = out.get_submodule(parent_name)
        lin = getattr(parent, attr)
        if lin.in_features % GROUP:
            raise ValueError(f"{name} has {lin.in_features} inputs: not a multiple of {GROUP}")
    for group in fusion_groups(out) if fused else []:
        lins = [out.get_submodule(n) for n in group]
        whole = nn.Linear(lins[0].in_features, sum(m.out_features for m in lins), bias=lins[0].bias is not None)
        with torch.no_grad():
            whole.weight = nn.Parameter(torch.cat([m.weight.detach() for m in lins]), requires_grad=False)
            if whole.bias is not None:
                whole.bias = nn.Parameter(torch.cat([m.bias.detach() for m in lins]), requires_grad=False)
        fused = Fused(None, None, tuple(m.out_features for m in lins), (), module=packed_module(whole, fmt))
        parent = out.get_submodule(group[0].rpartition(".")[0])
        if group[0].endswith("q_proj"):
            parent.fused_qkv = fused
        else:
            parent.fused_gate_up = fused
    for name in quantizable_weights(out):
        parent_name, _, attr = name.removesuffix(".weight").rpartition(".")
        parent = out.get_submodule(parent_name)
        setattr(parent, attr, packed_module(getattr(parent, attr), fmt))
    return out


def step_products(m: GPT) -> list[tuple[Callable[[torch.Tensor], object], int]]:
    """The weight products a decode step of ``m`` runs, in order, as (function of a ``(1, 1, in)``
    row, in): per block the q/k/v product (fused or not), o, gate/up (fused or not), down."""
    out = []
    for block in m.layers:
        attn, mlp = block.self_attn, block.mlp
        qkv = (attn.q_proj, attn.k_proj, attn.v_proj)
        out.append((lambda x, p=qkv, f=attn.fused_qkv: project(x, p, f, join=2), attn.q_proj.in_features))
        out.append((attn.o_proj, attn.o_proj.in_features))
        if mlp.swiglu:
            gu = (mlp.gate_proj, mlp.up_proj)
            out.append((lambda x, p=gu, f=mlp.fused_gate_up: project(x, p, f), mlp.up_proj.in_features))
        else:
            out.append((mlp.up_proj, mlp.up_proj.in_features))
        out.append((mlp.down_proj, mlp.down_proj.in_features))
    return out


@dataclass(frozen=True)
class FormatRow:
    """One format's decode step: bytes it reads, median ms (and repeats), max |Δlogit| vs float32."""

    fmt: str
    bytes: int
    ms: float
    repeats: int
    max_dlogit: float
    products_ms: float = float("nan")  # the block projections alone, one row each, in the same rounds
    products_bytes: int = 0  # their weights and scales
    spread: float = float("nan")  # the step's times' interquartile range ÷ median
    bandwidth_gbs: float = float("nan")  # the 64 MiB matvec's rate, timed in the same rounds

    def bandwidth(self, fallback_gbs: float) -> float:
        """The memory bandwidth this row's floor uses: the one measured beside it in the same rounds
        when there is one (the load on the machine then was the load the step met), else ``fallback_gbs``."""
        return self.bandwidth_gbs if self.bandwidth_gbs == self.bandwidth_gbs else fallback_gbs

    @property
    def tokens_per_s(self) -> float:
        return 1000.0 / self.ms

    def floor_ratio(self, bandwidth_gbs: float) -> float:
        """Measured time ÷ its byte floor (bytes ÷ bandwidth; ``bandwidth``: the row's own if measured)."""
        return self.ms / (self.bytes / self.bandwidth(bandwidth_gbs) / 1e6)


@torch.inference_mode()
def measure_formats(
    model: GPT,
    context: int,
    seconds: float,
    formats=tuple(FORMATS),
    progress: Callable[[float, str], None] | None = None,
) -> list[FormatRow]:
    """Each format's cached decode step at ``context`` positions (batch 1), in about ``seconds``.

    Every format is built, its cache filled from one float32 prefill of ``context − 1`` positions
    (cast to its dtype), and one step's logits compared with float32's. Then rounds: in each, every
    format takes a timed step (the cache rolled back) and its weight products alone, and the 64 MiB
    matvec measures the memory bandwidth, the order turning each round so a burst of other work hits
    all alike (``machine_speed.rounds_ms``); rounds repeat until ``seconds`` are spent (at least
    three). Each row's byte floor uses that bandwidth (``FormatRow.bandwidth_gbs``): a step and the
    floor it is held to meet the same load."""
    cfg, say = model.cfg, progress or (lambda f, what: None)
    ids = torch.arange(context).remainder(cfg.vocab_size).view(1, context)
    base = KVCache(cfg, dtype=torch.float32)
    ref_model = model.float() if model.dtype != torch.float32 else model
    ref_model(ids[:, :-1], base)
    ref, _ = ref_model(ids[:, -1:], base)
    runs = {}
    for i, fmt in enumerate(formats):
        say(i / (len(formats) + 1), f"building {fmt}")
        m = build(model, fmt)
        cache = KVCache(cfg, dtype=rest_dtype(fmt))
        for layer in range(cfg.n_layer):
            cache.k_cache[layer].copy_(base.k_cache[layer])
            cache.v_cache[layer].copy_(base.v_cache[layer])
        cache.pos = context - 1
        logits, _ = m(ids[:, -1:], cache)
        dlogit = float((logits.float() - ref).abs().max())

        def step(m=m, cache=cache):
            cache.truncate(context - 1)
            m(ids[:, -1:], cache)

        projections = step_products(m)
        rows = [torch.zeros(1, 1, n, dtype=m.dtype) for _, n in projections]

        def products(projections=projections, rows=rows):
            for (p, _), x in zip(projections, rows, strict=True):
                p(x)

        runs[fmt] = (step, dlogit, products)
    say(len(formats) / (len(formats) + 1), "timing the formats in turn")
    fns, nbytes = bandwidth_fns()
    del fns["copy"]
    for fmt, (step, _, products) in runs.items():
        fns[(fmt, "step")], fns[(fmt, "products")] = step, products
    n = len(formats)
    times = rounds_ms(fns, seconds, progress=lambda f, what: say((n + f) / (n + 1), f"timing the formats, {what}"))
    say(1.0, "done")
    bw = nbytes / statistics.median(times["matvec"]) / 1e6
    out = []
    for fmt, (_, d, _) in runs.items():
        b = step_bytes(cfg, 1, 1, context, fmt)
        proj = int(b["weights/projections"])
        t, p = times[(fmt, "step")], times[(fmt, "products")]
        ms, products_ms = statistics.median(t), statistics.median(p)
        out.append(FormatRow(fmt, b["total"], ms, len(t), d, products_ms, proj, spread(t), bw))
    return out


def _why(r: FormatRow, bandwidth_gbs: float) -> str:
    """Where a format's step goes, from its numbers: its weight products' rate against the memory's,
    and the time outside them."""
    rate = r.products_bytes / r.products_ms / 1e6  # GB/s of stored weights through the products
    bandwidth_gbs = r.bandwidth(bandwidth_gbs)
    if r.fmt in DEQUANTIZING:
        how = f"the products {r.products_ms:.2f} ms: each writes a float32 copy of its weights before multiplying"
    elif rate < bandwidth_gbs / 1.5:
        how = (
            f"the products {r.products_ms:.2f} ms, {rate:.1f} GB/s of weights against the memory's "
            f"{bandwidth_gbs:.1f}: {KERNELS[r.fmt]} does not keep the memory busy here"
        )
    else:
        how = f"the products {r.products_ms:.2f} ms, {rate:.1f} GB/s of weights: near the memory's {bandwidth_gbs:.1f}"
    return how + f"; the rest of the step {max(r.ms - r.products_ms, 0):.2f} ms"


def explain(rows: list[FormatRow], bandwidth_gbs: float, threads: int, noise: float = 0.15) -> str:
    """A sentence from the numbers: the fastest format here and its kernel, how it compares with
    float32, where its time goes (the weight products, timed alone in the same rounds, and the rest of
    the step: attention, norms, output head, the many small operations), and which formats read fewer
    bytes than float32 yet took longer by more than ``noise`` (the runs' agreement target), and why."""
    by = {r.fmt: r for r in rows}
    fastest = min(rows, key=lambda r: r.ms)
    f32 = by.get("float32")
    out = (
        f"Fastest here: {fastest.fmt} at {fastest.ms:.2f} ms per step ({KERNELS[fastest.fmt]}), "
        f"{fastest.floor_ratio(bandwidth_gbs):.1f}× its byte floor"
    )
    if f32 is not None and fastest is not f32:
        gain = f32.ms / fastest.ms
        out += (
            f"; {gain:.2f}× the speed of float32 ({f32.ms:.2f} ms) while reading {fastest.bytes / f32.bytes:.2f}× "
            + (
                "its bytes"
                if gain > 1 + noise
                else f"its bytes, which is within the {noise:.0%} run-to-run noise: a tie"
            )
        )
    out += f" ({_why(fastest, bandwidth_gbs)})."
    if f32 is not None:
        slower = sorted((r for r in rows if r.bytes < f32.bytes and r.ms > f32.ms * (1 + noise)), key=lambda r: -r.ms)
        if slower:
            said = "; ".join(f"{r.fmt} {r.ms:.2f} ms ({_why(r, bandwidth_gbs)})" for r in slower)
            out += f" Fewer bytes, yet slower than float32 ({f32.ms:.2f} ms): {said}."
    return out + f" One token at a time, {threads} torch thread{'s' if threads != 1 else ''}."


def format_rows(rows: list[FormatRow], bandwidth_gbs: float) -> list[dict]:
    """The formats table: bytes read per step, median ms, tokens/s, time ÷ byte floor, the spread of
    the step's times (interquartile range ÷ median), max |Δlogit|."""
    return [
        {
            "format": r.fmt,
            "MB per step": round(r.bytes / 1e6, 3),
            "ms per step": round(r.ms, 3),
            "weight products ms": round(r.products_ms, 3),
            "tokens/s": round(r.tokens_per_s, 1),
            "× byte floor": round(r.floor_ratio(bandwidth_gbs), 2),
            "spread": round(r.spread, 2),
            "max |Δlogit|": float(f"{r.max_dlogit:.3g}"),
        }
        for r in rows
    ]
