"""A format timed: ``build`` makes a model's copy with its block projections packed
(``kernels.packed_module``) and the rest in the format's dtype (``rest_dtype``), ``step_products``
lists the weight products a decode step runs, and ``measure_formats`` times each format's cached
decode step and those products side by side with the memory bandwidth, one ``FormatRow`` each.
"""

from __future__ import annotations

import copy
import statistics
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from core.cost.step_traffic import FORMATS, step_bytes
from core.decode.kv_cache import KVCache
from core.evaluate.format_speed.kernels import GROUP, packed_module
from core.evaluate.machine_speed.roofline import bandwidth_fns
from core.evaluate.machine_speed.timing import rounds_ms, spread
from core.model.layout import Fused, fuse_projections, fusion_groups, project, quantizable_weights
from core.model.model import GPT


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
