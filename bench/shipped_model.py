"""What the shipped model does on the default prompt: the README's shipped-model figures.

    python -m bench.shipped_model [--assets DIR] [--skip-speed] [--threads N] [--quick]

Prints (1) greedy output tokens 1..20 of the default prompt with the top two probabilities
(softmax, T = 1) and how many steps have a runner-up ≥ 5 %; (2) at the step where the
traveller's name is written again, every layer/head's attention share on the prompt positions
holding the name; (3) the greedy reply with float32 weights and with 4-, 3- and 2-bit weights
(groups of 32); (4) the quantization table of the "Quantizing the model" page (8 held-out windows
of 128 tokens, groups of 32, half to even); (5) speculative decoding on the default prompt,
greedy, 60 tokens, k = 1 … 8: acceptance rate and wall-clock speed-up (median of 3 runs).
Measured in one run; not a test. ``--quick`` (seconds; tests/bench/test_quick_model.py): the same
sections, the quantization table on 2 windows and the speculative timing from one run of each k.
"""

from __future__ import annotations

import argparse
import re
import statistics
from pathlib import Path

import torch

from core.decode.generate import decode_one_token, prefill
from core.decode.kv_cache import KVCache
from core.decode.settings import DEFAULT_PROMPT
from core.evaluate.quant_quality import eval_windows, sweep
from core.evaluate.speedups import measure_speculative
from core.model.shipped import ASSETS, load_model, load_shipped_tokenizer
from core.model.tokenizer import decode, encode, end_token_id, token_text
from core.quant.model_weights import quantize_weights


def greedy_trace(model, ids: list[int], n: int):
    """Greedy output ids, each pass's logits ``(vocab,)`` and attention (per layer ``(n_head, T_new, S)``)."""
    cache = KVCache(model.cfg, dtype=model.dtype)
    step = prefill(model, ids, cache)
    out, logits, atts = [], [], []
    for _ in range(n):
        logits.append(step.logits)
        atts.append(step.att)
        out.append(int(torch.argmax(step.logits)))
        step = decode_one_token(model, out[-1], cache)
    return out, logits, atts


def reply(tok, out: list[int]) -> str:
    end = end_token_id(tok)
    return decode(tok, out[: out.index(end) + 1] if end in out else out)


def choices(tok, model, ids: list[int]) -> None:
    out, logits, atts = greedy_trace(model, ids, 40)
    print("## Greedy output tokens 1..20 of the default prompt (softmax, T = 1)\n")
    print("| token | greedy | p | runner-up | p |\n|---:|---|---:|---|---:|")
    count = 0
    for i, x in enumerate(logits[:20]):
        p, j = torch.softmax(x.double(), -1).topk(2)
        count += p[1] >= 0.05
        print(
            f"| {i + 1} | `{token_text(tok, int(j[0]))}` | {p[0]:.3f} | `{token_text(tok, int(j[1]))}` | {p[1]:.3f} |"
        )
    print(f"\nRunner-up ≥ 5 %: {count} of 20 steps\n")
    name = re.search(r"my name is (\w+)", DEFAULT_PROMPT).group(1)
    name_ids = encode(tok, " " + name)
    where = [p for p in range(len(ids)) if ids[p : p + len(name_ids)] == name_ids]
    written = [k for k in range(len(out)) if out[k : k + len(name_ids)] == name_ids]
    if not written:
        print(f"The greedy reply never writes {name!r}.\n")
    else:
        k = written[0]
        print(f"## Look-back: output token {k + 1} is {name!r} (decode step {k}); prompt positions {where}\n")
        for layer, a in enumerate(atts[k]):
            shares = [float(a[h, -1, where].sum()) for h in range(a.shape[0])]
            print(f"layer {layer}: " + "  ".join(f"head {h} {s:.3f}" for h, s in enumerate(shares)))
        print()
    print("## Greedy reply by weight precision (groups of 32)\n")
    print(f"float32: {reply(tok, out)!r}")
    for bits in (4, 3, 2):
        q_out, _, _ = greedy_trace(quantize_weights(model, bits, 32), ids, 40)
        print(f"{bits}-bit:   {reply(tok, q_out)!r}")
    print()


README_ROWS = ("8-bit weights", "4-bit weights", "2-bit weights", "8-bit KV cache", "2-bit KV cache")


def quant_table(tok, model, n_windows: int = 8) -> None:
    rows = sweep(model, eval_windows(tok, n_windows), group_size=32)
    print(f"## Quantizing the model ({n_windows} × 128 held-out predictions, groups of 32, half to even)\n")
    print("| | bytes | max abs Δlogit | greedy changed | perplexity |\n|---|---|---|---|---|")
    f32 = rows["weights"][0]
    print(
        f"| float32 | {f32.weight_bytes:,} weight B; {f32.kv_bytes_per_token:,.0f} KV B/token | 0 | 0% "
        f"| {f32.perplexity:.3f} |"
    )
    for r in rows["weights"][1:] + rows["kv_cache"][1:]:
        if r.label not in README_ROWS:
            continue
        size = f"{r.weight_bytes:,}" if "weights" in r.label else f"{r.kv_bytes_per_token:,.0f} KV B/token"
        print(f"| {r.label} | {size} | {r.max_logit_error:.3g} | {r.greedy_changed:.1%} | {r.perplexity:.3f} |")
    print()


def speculative(model, draft, ids: list[int], runs: int = 3, repeats: int = 3) -> None:
    results = [measure_speculative(model, draft, ids, ks=(1, 2, 3, 4, 6, 8), repeats=repeats) for _ in range(runs)]
    print(f"## Speculative decoding, default prompt, greedy, 60 tokens (median of {runs} runs)\n")
    print("| k | acceptance | target passes per token | speed-up |\n|---:|---:|---:|---:|")
    for i, row in enumerate(results[0]):  # SpecSpeed rows, one per k
        speedup = statistics.median(r[i].speedup for r in results)
        print(f"| {row.k} | {row.acceptance:.1%} | {row.target_passes_per_token:.3f} | {speedup:.2f}× |")
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--assets", type=Path, default=ASSETS)
    ap.add_argument("--skip-speed", action="store_true", help="leave out the speculative timing")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the app's server uses 1)")
    ap.add_argument("--quick", action="store_true", help="seconds: 2 evaluation windows, one speculative run per k")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    tok, model = load_shipped_tokenizer(args.assets), load_model(assets=args.assets)
    ids = encode(tok, DEFAULT_PROMPT)
    choices(tok, model, ids)
    quant_table(tok, model, 2 if args.quick else 8)
    if not args.skip_speed:
        runs = (1, 1) if args.quick else (3, 3)
        speculative(model, load_model(assets=args.assets / "draft"), ids, *runs)


if __name__ == "__main__":
    main()
