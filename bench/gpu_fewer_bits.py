"""Fewer weight bits on a GPU: the reference table of ``assets/reference/gpu_fewer_bits.json`` measured again
(Ch. 30 §30.6, "fewer stored bits do not automatically mean every operation runs faster").

    python -m bench.gpu_fewer_bits [--quick] [--shapes llama3-8b,smollm2] [--formats float32,bfloat16,fp8,int8,int4]
                                   [--batches 1,64] [--replays 50] [--json PATH]

(also reached as ``python -m bench.roofline --device cuda``). ``--quick``: SmolLM2 only, 10 replays (seconds).

The weight products of one decode step: every linear layer of every block (q, k, v, o, gate, up, down, unfused)
plus the output head, with random weights of the model's shape, run back to back for ``B`` tokens. The whole
step is captured as one CUDA graph (no Python or launch gaps between products) and replayed ``--replays`` times
after warm-up, each replay timed with CUDA events; the figure is the median. Formats:

- float32, bfloat16: ``torch.nn.functional.linear``;
- fp8 e4m3, per-tensor scales: ``torch._scaled_mm`` (activations padded to 16 rows, its smallest);
- int8 weight-only, per-output-channel bfloat16 scales: ``torch._weight_int8pack_mm`` on bfloat16 activations;
- int4 weight-only, groups of 64 with a bfloat16 scale and zero each: ``torch._weight_int4pack_mm`` (tinygemm)
  on bfloat16 activations, packed by ``torch._convert_weight_to_int4pack`` with the largest inner-k tiling of
  8, 4, 2 that divides the row (SmolLM2's 576 takes 4).

The byte floor is the format's weight bytes (scales included: ``weight_bytes``) over the GPU's copy bandwidth,
measured as a 1 GiB device-to-device copy (read + write). Attention, norms and the KV cache are left out: this
isolates the weight products, which dominate a step's bytes. Prints a markdown table laid out as the
reference's; ``--json`` also writes the rows in the reference file's form (to replace it, with its provenance).
Without a CUDA device (``torch.cuda.is_available()`` is False) it measures nothing and says so.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F

FORMATS = ("float32", "bfloat16", "fp8 e4m3", "int8 weight-only", "int4 weight-only, g64")
KEYS = dict(zip(("float32", "bfloat16", "fp8", "int8", "int4"), FORMATS, strict=True))  # --formats' names
GROUP = 64  # int4 group size
MIB = 2**20


@dataclass(frozen=True)
class Shape:
    """A model's linear layers: ``n_layer`` blocks of width ``d`` (``n_head`` query heads, ``n_kv_head`` key/value
    heads of ``head_dim``), an MLP of ``ffn`` (gate, up, down) and an output head over ``vocab``."""

    name: str
    n_layer: int
    d: int
    ffn: int
    n_head: int
    n_kv_head: int
    head_dim: int
    vocab: int

    @property
    def label(self) -> str:
        return (
            f"{self.name} ({self.n_layer} layers, d {self.d}, FFN {self.ffn}, {self.n_kv_head} KV heads, "
            f"vocab {self.vocab})"
        )


SHAPES = {  # the reference's two models (their config.json)
    "llama3-8b": Shape("Llama-3-8B", 32, 4096, 14336, 32, 8, 128, 128256),
    "smollm2": Shape("SmolLM2-135M", 30, 576, 1536, 9, 3, 64, 49152),
}


def products(s: Shape) -> list[tuple[int, int]]:
    """``(out, in)`` of every weight product of one decode step, in order: per block q, k, v, o, gate, up, down;
    then the output head."""
    q, kv = s.n_head * s.head_dim, s.n_kv_head * s.head_dim
    block = [(q, s.d), (kv, s.d), (kv, s.d), (s.d, q), (s.ffn, s.d), (s.ffn, s.d), (s.d, s.ffn)]
    return block * s.n_layer + [(s.vocab, s.d)]


def weight_bytes(s: Shape, fmt: str) -> int:
    """Bytes of the step's weights in ``fmt``, scales included: 4 or 2 a weight (float32, bfloat16); fp8 1 a
    weight + one float32 scale a tensor; int8 1 + a bfloat16 scale per output row; int4 ½ + a bfloat16 scale and
    zero per group of 64."""
    total = 0
    for out, k in products(s):
        n = out * k
        total += {
            "float32": 4 * n,
            "bfloat16": 2 * n,
            "fp8 e4m3": n + 4,
            "int8 weight-only": n + 2 * out,
            "int4 weight-only, g64": n // 2 + 4 * (n // GROUP),
        }[fmt]
    return total


def _inner_k_tiles(k: int) -> int:
    """tinygemm's packing needs k divisible by 16 × innerKTiles: the largest of 8, 4, 2 that fits."""
    return next(t for t in (8, 4, 2) if k % (16 * t) == 0)


def _int4_pack(out: int, k: int, device) -> torch.Tensor:
    """Random int4 codes packed for ``_weight_int4pack_mm``: two codes a byte (``(out, k/2)`` uint8, the input
    torch ≥ 2.5 takes), or on an older torch the ``(out, k)`` int32 codes it took before."""
    tiles = _inner_k_tiles(k)
    codes = torch.randint(0, 16, (out, k), dtype=torch.int32, device=device)
    try:
        return torch._convert_weight_to_int4pack((codes[:, ::2] << 4 | codes[:, 1::2]).to(torch.uint8), tiles)
    except RuntimeError:
        return torch._convert_weight_to_int4pack(codes, tiles)


def build_step(s: Shape, fmt: str, batch: int, device="cuda"):
    """The step's products in ``fmt`` for ``batch`` tokens, as one function (weights and inputs made here)."""
    fns = []
    for out, k in products(s):
        if fmt in ("float32", "bfloat16"):
            dtype = torch.float32 if fmt == "float32" else torch.bfloat16
            w = torch.randn(out, k, device=device, dtype=dtype)
            x = torch.randn(batch, k, device=device, dtype=dtype)
            fns.append(lambda x=x, w=w: F.linear(x, w))
        elif fmt == "fp8 e4m3":
            w = torch.randn(out, k, device=device, dtype=torch.bfloat16).to(torch.float8_e4m3fn)
            x = torch.randn(max(batch, 16), k, device=device, dtype=torch.bfloat16).to(torch.float8_e4m3fn)
            one = torch.tensor(1.0, device=device)
            fns.append(lambda x=x, w=w, one=one: torch._scaled_mm(x, w.t(), one, one, out_dtype=torch.bfloat16))
        elif fmt == "int8 weight-only":
            w = torch.randint(-127, 128, (out, k), device=device, dtype=torch.int8)
            scale = torch.rand(out, device=device, dtype=torch.bfloat16)
            x = torch.randn(batch, k, device=device, dtype=torch.bfloat16)
            fns.append(lambda x=x, w=w, scale=scale: torch._weight_int8pack_mm(x, w, scale))
        elif fmt == "int4 weight-only, g64":
            w = _int4_pack(out, k, device)
            sz = torch.rand(k // GROUP, out, 2, device=device, dtype=torch.bfloat16)
            x = torch.randn(batch, k, device=device, dtype=torch.bfloat16)
            fns.append(lambda x=x, w=w, sz=sz: torch._weight_int4pack_mm(x, w, GROUP, sz))
        else:
            raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")

    def step():
        for fn in fns:
            fn()

    return step


def graph_median_ms(step, replays: int, warmup: int = 5) -> float:
    """``step`` captured as one CUDA graph, replayed ``warmup`` times, then ``replays`` times each timed with CUDA
    events: the median, ms."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):  # warm-up outside the graph (library handles, workspaces) on a side stream
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    for _ in range(warmup):
        graph.replay()
    times = []
    for _ in range(replays):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    del graph
    return statistics.median(times)


def copy_bandwidth_bps(n_bytes: int = 2**30, repeats: int = 20) -> float:
    """Device-to-device copy of ``n_bytes``: bytes read + written per second, the median of ``repeats``."""
    a = torch.empty(n_bytes, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    b.copy_(a)
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        b.copy_(a)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1000)
    del a, b
    return 2 * n_bytes / statistics.median(times)


def rows_for(s: Shape, batch: int, step_ms: dict[str, float], bandwidth_bps: float) -> list[dict]:
    """The reference table's rows for ``s`` at ``batch`` from each format's median step (ms): weight MiB, byte
    floor (weight bytes ÷ ``bandwidth_bps``), step ÷ floor, speed against bfloat16 (when bfloat16 was timed)."""
    out = []
    for fmt, ms in step_ms.items():
        b = weight_bytes(s, fmt)
        floor_ms = b / bandwidth_bps * 1000
        bf16 = step_ms.get("bfloat16")
        out.append(
            {
                "model": s.name,
                "shape": s.label,
                "batch": batch,
                "format": fmt,
                "weights_mib": b / MIB,
                "step_ms": ms,
                "floor_ms": floor_ms,
                "over_floor": ms / floor_ms,
                "vs_bf16": None if bf16 is None else bf16 / ms,
            }
        )
    return out


def _ms(v: float) -> str:
    """Milliseconds as the reference prints them: "1,085", "57.31", "0.843"."""
    return f"{v:,.0f}" if v >= 1000 else f"{v:.2f}" if v >= 1 else f"{v:.3f}"


def _times(v: float) -> str:
    """A ratio as the reference prints it: "1.72", "0.08", "0.004"."""
    return f"{v:.2f}" if v >= 0.01 else f"{v:.1g}"


def markdown(rows: list[dict]) -> str:
    """The rows as the reference's markdown table (the model's shape on its first row only)."""
    out = [
        "| model shape | B | format | weights | step | byte floor | ÷ floor | speed vs bf16 |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    last = None
    for r in rows:
        mib = r["weights_mib"]
        weights = f"{mib:,.0f} MiB" if mib >= 1000 else f"{mib:.1f} MiB"
        speed = "—" if r["vs_bf16"] is None else f"{_times(r['vs_bf16'])}×"
        ratio = f"{r['over_floor']:,.0f}" if r["over_floor"] >= 1000 else f"{r['over_floor']:.3g}"
        out.append(
            f"| {r['shape'] if r['shape'] != last else ''} | {r['batch']} | {r['format']} | {weights} | "
            f"{_ms(r['step_ms'])} ms | {_ms(r['floor_ms'])} ms | {ratio} | {speed} |"
        )
        last = r["shape"]
    return "\n".join(out)


def parse_args(argv=None) -> argparse.Namespace:
    """The GPU path's own options (``bench.roofline --device cuda`` hands them on); unknown shapes, formats or
    batches are refused with a sentence."""
    ap = argparse.ArgumentParser(prog="python -m bench.roofline --device cuda", description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="llama3-8b,smollm2", help=f"comma-separated: {', '.join(SHAPES)}")
    ap.add_argument("--formats", default=",".join(KEYS), help=f"comma-separated: {', '.join(KEYS)}")
    ap.add_argument("--batches", default="1,64", help="tokens per step, comma-separated")
    ap.add_argument("--replays", type=int, default=50, help="timed graph replays per row (the median is reported)")
    ap.add_argument("--json", default="", help="also write the rows, in the reference file's form, to this path")
    ap.add_argument("--quick", action="store_true", help="SmolLM2 only, 10 replays: seconds")
    args = ap.parse_args(argv)
    if args.quick:
        args.shapes, args.replays = "smollm2", min(args.replays, 10)
    args.shapes = [x for x in args.shapes.split(",") if x]
    if bad := [x for x in args.shapes if x not in SHAPES]:
        ap.error(f"unknown shape {bad[0]!r}: {', '.join(SHAPES)}")
    keys = [x for x in args.formats.split(",") if x]
    if bad := [x for x in keys if x not in KEYS]:
        ap.error(f"unknown format {bad[0]!r}: {', '.join(KEYS)}")
    args.formats = [KEYS[x] for x in keys]
    try:
        args.batches = [int(b) for b in args.batches.split(",") if b]
    except ValueError:
        ap.error(f"--batches takes whole numbers separated by commas, got {args.batches!r}")
    if not args.batches or min(args.batches) < 1 or args.replays < 1:
        ap.error("--batches and --replays must be at least 1")
    return args


NO_GPU = (
    "bench.roofline --device cuda: torch sees no CUDA device here (torch.cuda.is_available() is False), so "
    "nothing was measured. Run it on a machine with an NVIDIA GPU; the reference it measures again is "
    "assets/reference/gpu_fewer_bits.json."
)


def main(argv=None) -> int:
    """Parse, then measure on the GPU and print the table (0); without a CUDA device print ``NO_GPU`` and
    measure nothing (0: a skip, not a failure)."""
    args = parse_args(argv)
    if not torch.cuda.is_available():
        print(NO_GPU)
        return 0
    torch.manual_seed(0)
    props = torch.cuda.get_device_properties(0)
    when = time.strftime("%Y-%m-%d %H:%M")
    bw = copy_bandwidth_bps()
    print(
        f"# bench.roofline --device cuda — {props.name} ({props.total_memory / 1e9:.0f} GB), torch "
        f"{torch.__version__} (CUDA {torch.version.cuda}), {when}; copy bandwidth {bw / 1e12:.2f} TB/s "
        f"(1 GiB, read + write); median of {args.replays} graph replays\n"
    )
    rows = []
    for name in args.shapes:
        s = SHAPES[name]
        for batch in args.batches:
            ms = {}
            for fmt in args.formats:
                step = build_step(s, fmt, batch)
                ms[fmt] = graph_median_ms(step, args.replays)
                del step
                torch.cuda.empty_cache()
            rows += rows_for(s, batch, ms, bw)
    print(markdown(rows))
    if args.json:
        out = {
            "device": f"one {props.name} ({props.total_memory / 1e9:.0f} GB)",
            "software": f"PyTorch {torch.__version__} (CUDA {torch.version.cuda})",
            "when": when[:10],
            "copy_bandwidth_tbs": round(bw / 1e12, 2),
            "measure_again": "python -m bench.roofline --device cuda",
            "models": {SHAPES[n].name: SHAPES[n].label.split(" (", 1)[1][:-1] for n in args.shapes},
            "rows": [{k: v for k, v in r.items() if k != "shape"} for r in rows],
        }
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
        print(f"\nRows written to {args.json}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
