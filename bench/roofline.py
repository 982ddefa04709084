"""This machine's roofline and the weight formats, as the "Speed on this machine" page measures them.

    nice -n 10 python -m bench.roofline [--quick] [--threads 1] [--seconds 20] [--models shipped,larger,smollm2]
                                        [--compiled "int4 (bf16 activations),float32"]
    python -m bench.roofline --device cuda [--quick] [--shapes llama3-8b,smollm2] [--replays 50] [--json PATH]

For each model: the memory bandwidth (a 64 MiB float32 matvec; a copy too), the peak (a 1,024³ GEMM),
the model's decode steps at B = 1, 4, 16 and prefills (``core.evaluate.machine_speed``), then one
cached decode step in every weight format (``core.evaluate.format_speed``), each median against its
byte floor. Within a run everything is timed side by side in rounds (``machine_speed.rounds_ms``),
the formats with the bandwidth their floors use. Everything runs twice back to back, and the bench
states how well the two runs' medians agree, and their times over their own floors. Models: the
shipped one (assets/), the ``larger`` preset and a SmolLM2-135M-shaped model (random weights, laid
out and fused as ``core.checkpoints.load`` lays out a checkpoint, a tied embedding too), with a
512-position window (the weights are the real shape; the window only sizes the preallocated cache).

Goals (issue 40): the fastest format's decode step of ``larger`` and of the SmolLM2 shape within
1.5× of its byte floor; two runs within 15%. ``--quick`` (seconds): the shipped model only, one run,
a 2-second budget. One thread by default, as the app's server runs each request (``ui/models.py``).

``--compiled FORMATS``: also, per run, each named format's decode step with every block compiled
(``torch.compile``, inductor's C++ code for the CPU) beside the same step in eager mode and the 64 MiB
matvec, in the same rounds (``compiled_rows``): compile time (excluded from the timing), ms, × byte
floor, and max |Δlogit| compiled vs eager. Bench only: compiling takes tens of seconds to minutes.

``--device cuda``: not this machine's CPU but a GPU's: the reference table of
``assets/reference/gpu_fewer_bits.json`` measured again (``bench.gpu_fewer_bits``: the weight products of one
decode step of Llama-3-8B and SmolLM2-135M shapes at B = 1 and 64, in float32, bfloat16, fp8, int8 and int4
weight-only, CUDA graph replays, medians against a byte floor from the measured copy bandwidth), printed as
the reference's markdown table; without a CUDA device it says so and measures nothing.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from dataclasses import asdict

import torch

from bench import gpu_fewer_bits
from core.cost.step_traffic import step_bytes
from core.decode.kv_cache import KVCache
from core.evaluate.format_speed.measure import build, measure_formats, rest_dtype
from core.evaluate.format_speed.report import explain, format_rows
from core.evaluate.machine_speed.roofline import bandwidth_fns, measure_roofline, passes, point_rows
from core.evaluate.machine_speed.runs import cpu_model, run_agreement
from core.evaluate.machine_speed.timing import rounds_ms, spread
from core.model.config import PRESETS, GPTConfig
from core.model.layout import decode_layout, fuse_projections
from core.model.model import GPT
from core.model.shipped import load_model

SMOLLM2_135M = GPTConfig(  # HuggingFaceTB/SmolLM2-135M's config.json; block_size only sizes the cache here
    vocab_size=49152, block_size=512, n_layer=30, n_head=9, n_kv_head=3, n_embd=576, ffn_hidden=1536,
    rope_theta=100000.0, tie_embeddings=True,
)  # fmt: skip


def random_model(cfg: GPTConfig) -> GPT:
    """Random weights in ``cfg``'s shape, laid out as a loaded checkpoint (``decode_layout``, fused)."""
    torch.manual_seed(0)
    model = GPT(cfg).eval()
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.Linear) and not (cfg.tie_embeddings and module is model.lm_head):
                module.weight = torch.nn.Parameter(decode_layout(module.weight.detach()), requires_grad=False)
        if cfg.tie_embeddings:  # the loader lays the tied table out as the output head it also is
            model.embed_tokens.weight = torch.nn.Parameter(decode_layout(model.embed_tokens.weight.detach()))
            model.tie_weights()
    for p in model.parameters():
        p.requires_grad_(False)
    fuse_projections(model)
    return model


def models(names: list[str]):
    for name in names:
        if name == "shipped":
            yield "shipped (assets/)", load_model()
        elif name == "larger":
            yield "larger preset (random)", random_model(PRESETS["larger"])
        elif name == "smollm2":
            yield "SmolLM2-135M shape (random)", random_model(SMOLLM2_135M)
        else:
            raise SystemExit(f"unknown model {name!r}: shipped, larger, smollm2")


def table(rows: list[dict]) -> str:
    """Rows of dicts as a markdown table."""
    cols = list(rows[0])
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(f"{r[c]:,}" if isinstance(r[c], int) else str(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(out)


def _as_modules(m: GPT) -> None:
    """Each fused q/k/v and gate/up product of a float copy ``m`` as an ``nn.Linear`` over the same
    fused tensors (``Fused.module``, which ``project`` calls): the same product, without the views check."""
    for block in m.layers:
        for fused in (block.self_attn.fused_qkv, block.mlp.fused_gate_up):
            if fused is not None and fused.module is None:
                lin = torch.nn.Linear(fused.weight.shape[1], fused.weight.shape[0], bias=fused.bias is not None)
                lin.weight = torch.nn.Parameter(fused.weight, requires_grad=False)
                if fused.bias is not None:
                    lin.bias = torch.nn.Parameter(fused.bias, requires_grad=False)
                fused.module = lin


@torch.inference_mode()
def compiled_rows(model: GPT, context: int, seconds: float, formats: list[str]) -> list[dict]:
    """Each of ``formats``' cached decode step (batch 1, ``context`` positions) eager and with every
    block compiled (``nn.Module.compile``: dynamo + inductor, default mode; the layer index each block
    is called with is a constant, so one compiled graph per block; timed with
    ``skip_guard_eval_unsafe``), side by side in rounds with the 64 MiB matvec (the byte floors'
    divisor). A float format's fused products are handed to dynamo as modules holding the same fused
    tensors (``_as_modules``): ``project``'s check that the parts are still views of them compares data
    pointers, which dynamo cannot trace (six graph breaks a block). Both copies start from one cache
    filled by the eager copy's prefill, so max |Δlogit| is compiled against eager on the same step."""
    import torch._dynamo.config as dynamo_config

    torch._dynamo.reset()  # a fresh start each run: no compiled entries of another model or run in the way
    dynamo_config.automatic_dynamic_shapes = False  # every block compiled for its own static shapes
    dynamo_config.recompile_limit = max(dynamo_config.recompile_limit, len(formats) * model.cfg.n_layer + 8)
    cfg = model.cfg
    ids = torch.arange(context).remainder(cfg.vocab_size).view(1, context)
    fns, nbytes = bandwidth_fns()
    del fns["copy"]
    built = {}
    for fmt in formats:
        eager, comp = build(model, fmt), build(model, fmt)
        _as_modules(comp)
        for block in comp.layers:
            block.compile()
        cache = KVCache(cfg, dtype=rest_dtype(fmt))
        eager(ids[:, :-1], cache)
        caches = {"eager": cache, "compiled": cache.clone()}

        def step(m, kind, caches=caches):
            caches[kind].truncate(context - 1)
            return m(ids[:, -1:], caches[kind])[0]

        t0 = time.perf_counter()
        out = step(comp, "compiled")
        compile_s = time.perf_counter() - t0
        dlogit = float((out.float() - step(eager, "eager").float()).abs().max())
        fns[(fmt, "eager")] = lambda m=eager: step(m, "eager")
        fns[(fmt, "compiled")] = lambda m=comp: step(m, "compiled")
        built[fmt] = (compile_s, dlogit)
    # Every block's code is one function called with n_layer layer indices: dynamo keeps n_layer compiled
    # entries for it and checks their guards one by one on every call (~0.1 ms a block, more than the
    # block's own kernels on ``larger``). Warmed up, no input changes, so the timing skips the guards that
    # do not tell those entries apart.
    torch.compiler.set_stance("default", skip_guard_eval_unsafe=True)
    try:
        times = rounds_ms(fns, seconds)
    finally:
        torch.compiler.set_stance("default")
    bw = nbytes / statistics.median(times["matvec"]) / 1e6
    out = []
    for fmt, (compile_s, dlogit) in built.items():
        b = step_bytes(cfg, 1, 1, context, fmt)["total"]
        for kind in ("eager", "compiled"):
            t = times[(fmt, kind)]
            ms = statistics.median(t)
            out.append(
                {
                    "format": fmt,
                    "step": kind,
                    "MB per step": round(b / 1e6, 3),
                    "ms per step": round(ms, 3),
                    "× byte floor": round(ms / (b / bw / 1e6), 2),
                    "spread": round(spread(t), 2),
                    "rounds": len(t),
                    "compile s": round(compile_s, 1) if kind == "compiled" else "",
                    "max |Δlogit| vs eager": float(f"{dlogit:.3g}") if kind == "compiled" else "",
                    "bandwidth GB/s": round(bw, 2),
                }
            )
    return out


def one_run(model: GPT, seconds: float, compiled: list[str] | None = None) -> dict:
    roof = measure_roofline(model, seconds * 0.6)
    context = passes(model.cfg.block_size)[0][3]
    rows = measure_formats(model, context, seconds * 0.4)
    comp = compiled_rows(model, context, seconds * 0.4, compiled) if compiled else []
    return {"roof": roof, "rows": rows, "context": context, "compiled": comp}


def report(name: str, runs: list[dict]) -> None:
    print(f"\n### {name}\n")
    for k, run in enumerate(runs, 1):
        roof, rows = run["roof"], run["rows"]
        print(
            f"Run {k}: bandwidth {roof.bandwidth_gbs:.2f} GB/s (copy {roof.copy_gbs:.2f}), peak "
            f"{roof.peak_gflops:.1f} GFLOP/s, ridge {roof.ridge:.1f} FLOP/byte, {roof.seconds:.0f} s\n"
        )
        print(table(point_rows(roof)) + "\n")
        print(
            f"Formats, one cached decode step at {run['context']} positions (the memory bandwidth timed "
            f"in the same rounds, their byte floors' divisor: {rows[0].bandwidth(roof.bandwidth_gbs):.2f} GB/s):\n"
        )
        print(table(format_rows(rows, roof.bandwidth_gbs)) + "\n")
        print(explain(rows, roof.bandwidth_gbs, roof.threads) + "\n")
        fastest = min(rows, key=lambda r: r.ms)
        ratio = fastest.floor_ratio(roof.bandwidth_gbs)
        print(
            f"Goal (fastest within 1.5× of its byte floor): {fastest.fmt} {ratio:.2f}× — "
            f"{'met' if ratio <= 1.5 else 'not met'}\n"
        )
        if run["compiled"]:
            print(
                "Compiled blocks against eager, the same step side by side (the matvec in the same rounds; "
                "compile time not in the step's time):\n"
            )
            print(table(run["compiled"]) + "\n")
    if len(runs) == 2:
        kept = [{"roofline": r["roof"].to_dict(), "formats": [asdict(f) for f in r["rows"]]} for r in runs]
        worst, what = run_agreement(kept)
        print(
            f"Two runs back to back: medians agree within {worst:.0%}, the largest difference {what} "
            f"({'met' if worst <= 0.15 else 'not met'}: target 15%)"
        )
        worst, what = run_agreement(kept, ratios=True)
        print(f"Their times over their own floors (× floor, × byte floor) agree within {worst:.0%} ({what})")


def main(argv=None) -> int | None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the shipped model, one run, 2 s")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=20.0, help="budget per run and model")
    ap.add_argument("--models", default="shipped,larger,smollm2")
    ap.add_argument("--compiled", default="", help="formats also timed with compiled blocks, comma-separated")
    ap.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="cuda: the reference GPU table instead (bench.gpu_fewer_bits; its options: --shapes, --formats, "
        "--batches, --replays, --json; --quick: SmolLM2 only, 10 replays)",
    )
    args, rest = ap.parse_known_args(argv)
    if args.device == "cuda":
        if args.models != ap.get_default("models") or args.compiled:
            ap.error("--models and --compiled are the CPU path's; with --device cuda choose --shapes")
        return gpu_fewer_bits.main((["--quick"] if args.quick else []) + rest)
    if rest:
        ap.error(f"unrecognized arguments: {' '.join(rest)}")
    torch.set_num_threads(args.threads)
    names, seconds, n_runs = args.models.split(","), args.seconds, 2
    if args.quick:
        names, seconds, n_runs = ["shipped"], 2.0, 1
    print(
        f"# bench.roofline — {cpu_model()}, {os.cpu_count()} cores, torch {torch.__version__}, "
        f"{torch.get_num_threads()} thread(s), python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.2f}, {time.strftime('%Y-%m-%d %H:%M')}"
    )
    compiled = [f for f in args.compiled.split(",") if f]
    for name, model in models(names):
        report(name, [one_run(model, seconds, compiled) for _ in range(n_runs)])


if __name__ == "__main__":
    raise SystemExit(main())
