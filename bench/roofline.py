"""This machine's roofline and the weight formats, as the "Speed on this machine" page measures them.

    nice -n 10 python -m bench.roofline [--quick] [--threads 1] [--seconds 20] [--models shipped,larger,smollm2]

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
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from dataclasses import asdict

import torch

from core.evaluate import format_speed, machine_speed
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


def one_run(model: GPT, seconds: float) -> dict:
    roof = machine_speed.measure_roofline(model, seconds * 0.6)
    context = machine_speed.passes(model.cfg.block_size)[0][3]
    rows = format_speed.measure_formats(model, context, seconds * 0.4)
    return {"roof": roof, "rows": rows, "context": context}


def report(name: str, runs: list[dict]) -> None:
    print(f"\n### {name}\n")
    for k, run in enumerate(runs, 1):
        roof, rows = run["roof"], run["rows"]
        print(
            f"Run {k}: bandwidth {roof.bandwidth_gbs:.2f} GB/s (copy {roof.copy_gbs:.2f}), peak "
            f"{roof.peak_gflops:.1f} GFLOP/s, ridge {roof.ridge:.1f} FLOP/byte, {roof.seconds:.0f} s\n"
        )
        print(table(machine_speed.point_rows(roof)) + "\n")
        print(
            f"Formats, one cached decode step at {run['context']} positions (the memory bandwidth timed "
            f"in the same rounds, their byte floors' divisor: {rows[0].bandwidth(roof.bandwidth_gbs):.2f} GB/s):\n"
        )
        print(table(format_speed.format_rows(rows, roof.bandwidth_gbs)) + "\n")
        print(format_speed.explain(rows, roof.bandwidth_gbs, roof.threads) + "\n")
        fastest = min(rows, key=lambda r: r.ms)
        ratio = fastest.floor_ratio(roof.bandwidth_gbs)
        print(
            f"Goal (fastest within 1.5× of its byte floor): {fastest.fmt} {ratio:.2f}× — "
            f"{'met' if ratio <= 1.5 else 'not met'}\n"
        )
    if len(runs) == 2:
        kept = [{"roofline": r["roof"].to_dict(), "formats": [asdict(f) for f in r["rows"]]} for r in runs]
        worst, what = machine_speed.run_agreement(kept)
        print(
            f"Two runs back to back: medians agree within {worst:.0%}, the largest difference {what} "
            f"({'met' if worst <= 0.15 else 'not met'}: target 15%)"
        )
        worst, what = machine_speed.run_agreement(kept, ratios=True)
        print(f"Their times over their own floors (× floor, × byte floor) agree within {worst:.0%} ({what})")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the shipped model, one run, 2 s")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=20.0, help="budget per run and model")
    ap.add_argument("--models", default="shipped,larger,smollm2")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    names, seconds, n_runs = args.models.split(","), args.seconds, 2
    if args.quick:
        names, seconds, n_runs = ["shipped"], 2.0, 1
    print(
        f"# bench.roofline — {machine_speed.cpu_model()}, {os.cpu_count()} cores, torch {torch.__version__}, "
        f"{torch.get_num_threads()} thread(s), python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.2f}, {time.strftime('%Y-%m-%d %H:%M')}"
    )
    for name, model in models(names):
        report(name, [one_run(model, seconds) for _ in range(n_runs)])


if __name__ == "__main__":
    main()
