"""The paged KV cache's costs and gains, measured in one run.

    python -m bench.paged_speed [--threads N] [--repeats R] [--trace-repeats R] [--quick]

1. One decode step through the paged cache (append the token, build the block-table view, one
   ``GPT.forward`` that gathers K/V by block index) vs one step with the contiguous ``KVCache``, at
   64, 256 and 512 cached positions on the larger preset (random weights, block size 16). The two
   alternate within every repeat; medians and their ratio (goal: paged / contiguous ≤ 1.5×).
2. Continuous vs static batching on the shipped model over a fixed arrival trace of 16 requests
   (arrivals in ms, greedy, fixed budgets): output tokens per second over the whole trace and mean
   TTFT (arrival → first token), at most 8 requests in a batch, on the engine's clock (measured
   compute per step; an idle engine jumps to the next arrival). Medians of repeats, the policies
   alternating which runs first.
Prints ratios measured side by side; not a test. ``--quick`` (seconds; tests/bench/test_quick_model.py):
the same two tables from 3 decode repeats and one run of the trace per policy.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from core.decode.generate import decode_one_token, prefill
from core.decode.kv_cache import KVCache
from core.model.config import PRESETS
from core.model.model import GPT
from core.model.shipped import load_model
from core.serving.paged import PagedKVCache, blocks_for
from core.serving.paged_presets import build_engine

LENGTHS = (64, 256, 512)


def _ms(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


@torch.no_grad()
def decode_steps(model: GPT, repeats: int, block_size: int = 16) -> list[dict]:
    cfg = model.cfg
    ids = [(7 * i + 3) % cfg.vocab_size for i in range(max(LENGTHS))]
    rows = []
    for n in LENGTHS:
        contiguous = KVCache(cfg, dtype=model.dtype)
        prefill(model, ids[: n - 1], contiguous)
        paged = PagedKVCache(cfg, blocks_for(cfg.block_size, block_size), block_size, model.dtype)
        paged.add("r", ids[: n - 1])
        model(torch.tensor([ids[: n - 1]]), paged.view(["r"]))  # prefill through the block table

        def step_contiguous(n=n, cache=contiguous):
            decode_one_token(model, ids[n - 1], cache)

        def step_paged(n=n, cache=paged):
            cache.append("r", [ids[n - 1]])
            model(torch.tensor([[ids[n - 1]]]), cache.view(["r"]))

        step_contiguous(), contiguous.truncate(n - 1), step_paged(), paged.truncate("r", n - 1)  # warm-up
        a, b = [], []
        for i in range(repeats):
            for fn, out, cache in ((step_contiguous, a, contiguous), (step_paged, b, paged))[:: 1 if i % 2 else -1]:
                out.append(_ms(fn))
                cache.truncate(n - 1) if cache is contiguous else cache.truncate("r", n - 1)
        rows.append(dict(positions=n, contiguous=statistics.median(a), paged=statistics.median(b)))
    return rows


def trace(tok_count: int, vocab: int) -> list[dict]:
    """16 requests: every 4th long (64 new tokens), the rest short (8); prompts 8–38 tokens;
    one arrival every 6 ms."""
    return [
        dict(
            prompt=[(13 * i + 5 * j + 1) % vocab for j in range(8 + (i * 10) % 31)],
            max_new_tokens=64 if i % 4 == 0 else 8,
            arrival=6.0 * i,
        )
        for i in range(tok_count)
    ]


def serve(model: GPT, requests: list[dict], policy: str) -> tuple[float, float]:
    """(output tokens per second over the trace, mean TTFT in ms) on the engine clock."""
    engine = build_engine(model, requests, 128, 16, policy, max_batch=8, clock="ms")
    engine.run()
    tokens = sum(len(r.outputs) for r in engine.requests)
    span_ms = max(r.finished_at for r in engine.requests) - min(r.arrival for r in engine.requests)
    return tokens / span_ms * 1000, statistics.mean(r.ttft for r in engine.requests)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=31)
    ap.add_argument("--trace-repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="seconds: 3 decode repeats, 1 trace run per policy")
    args = ap.parse_args()
    if args.quick:
        args.repeats, args.trace_repeats = min(args.repeats, 3), 1
    torch.set_num_threads(args.threads)

    torch.manual_seed(0)
    larger = GPT(PRESETS["larger"]).eval()
    print(f"Decode step on the larger preset, block size 16, {args.threads} thread(s), median of {args.repeats}:")
    print("| positions | contiguous KVCache | paged (gather by block index) | paged / contiguous |")
    print("|---:|---:|---:|---:|")
    for r in decode_steps(larger, args.repeats):
        ratio = r["paged"] / r["contiguous"]
        print(f"| {r['positions']} | {r['contiguous']:.2f} ms | {r['paged']:.2f} ms | {ratio:.2f}× |")

    shipped = load_model()
    requests = trace(16, shipped.cfg.vocab_size)
    serve(shipped, requests[:2], "continuous")  # warm-up
    runs = {"continuous": [], "static": []}
    for i in range(args.trace_repeats):
        for policy in ("continuous", "static")[:: 1 if i % 2 else -1]:
            runs[policy].append(serve(shipped, requests, policy))
    med = {p: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)) for p, v in runs.items()}
    print(f"\nShipped model, 16 requests arriving every 6 ms, median of {args.trace_repeats}:")
    print("| batching | output tokens / s | mean TTFT |")
    print("|---|---:|---:|")
    for p, (tps, ttft) in med.items():
        print(f"| {p} | {tps:,.0f} | {ttft:.1f} ms |")
    c, s = med["continuous"], med["static"]
    print(f"| continuous / static | {c[0] / s[0]:.2f}× | {c[1] / s[1]:.2f}× |")


if __name__ == "__main__":
    main()
