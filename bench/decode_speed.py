"""Decode-step speed: with the KV cache vs full-prefix recompute vs Hugging Face's Llama.

    python -m bench.decode_speed [--threads N] [--repeats R] [--quick]

For the shipped model and a larger random preset (n_layer 8, n_embd 512, block 512), at context
lengths 16 … block_size: the median ms of one cached decode step, of one full-prefix recompute,
their ratio, the fitted growth exponent of each curve, and the same weights' cached decode step in
``transformers``' ``LlamaForCausalLM`` (its own KV cache, eager attention, same thread count).
Prints ratios measured side by side in one run; not a test. ``--quick`` (seconds; what
tests/bench/test_quick_model.py runs): the shipped model only, at 16, 32 and 64 positions, median of 3.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch

from core.decode.generate import decode_one_token, full_forward, prefill
from core.decode.kv_cache import KVCache
from core.evaluate.step_times import fit_exponent
from core.model.config import PRESETS
from core.model.model import GPT
from core.model.shipped import load_model


def hf_twin(model: GPT):
    """The same weights in transformers' LlamaForCausalLM (config built locally, no download)."""
    import transformers

    cfg = model.cfg
    hf = transformers.LlamaForCausalLM(
        transformers.LlamaConfig(
            vocab_size=cfg.vocab_size,
            hidden_size=cfg.n_embd,
            intermediate_size=cfg.ffn_hidden,
            num_hidden_layers=cfg.n_layer,
            num_attention_heads=cfg.n_head,
            num_key_value_heads=cfg.n_kv_head,
            max_position_embeddings=cfg.block_size,
            rms_norm_eps=cfg.norm_eps,
            tie_word_embeddings=False,
            rope_parameters={"rope_type": "default", "rope_theta": cfg.rope_theta},
            attn_implementation="eager",
        )
    )
    state = {(k if k == "lm_head.weight" else f"model.{k}"): v for k, v in model.state_dict().items()}
    hf.load_state_dict(state, strict=False)
    return hf.eval()


def median_ms(fn, repeats: int) -> float:
    fn()  # warm-up
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return statistics.median(out)


@torch.no_grad()
def measure(model: GPT, hf, lengths, repeats: int) -> list[dict]:
    ids = [(7 * i + 3) % model.cfg.vocab_size for i in range(max(lengths))]
    rows = []
    for n in lengths:
        cache = KVCache(model.cfg, dtype=model.dtype)
        prefill(model, ids[: n - 1], cache)

        def ours(n=n, cache=cache):
            cache.truncate(n - 1)
            decode_one_token(model, ids[n - 1], cache)

        out = hf(torch.tensor([ids[: n - 1]]), use_cache=True)
        past = out.past_key_values

        def theirs(n=n, past=past):
            extra = past.get_seq_length() - (n - 1)  # back to n-1 positions: every repeat is one step to n
            if extra:
                past.crop(-extra)
            hf(torch.tensor([[ids[n - 1]]]), past_key_values=past, use_cache=True)

        rows.append(
            {
                "n": n,
                "cached": median_ms(ours, repeats),
                "recompute": median_ms(lambda n=n: full_forward(model, ids[:n]), repeats),
                "hf_cached": median_ms(theirs, repeats),
            }
        )
    return rows


def report(name: str, model: GPT, rows: list[dict]) -> None:
    cfg = model.cfg
    print(
        f"\n## {name}: n_layer {cfg.n_layer}, n_head {cfg.n_head}, n_kv_head {cfg.n_kv_head}, "
        f"n_embd {cfg.n_embd}, block_size {cfg.block_size}, {model.n_params():,} parameters"
    )
    print(
        "| positions | cached step (ms) | full recompute (ms) | recompute / cached | HF Llama cached (ms) | ours / HF |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['n']} | {r['cached']:.3f} | {r['recompute']:.3f} | {r['recompute'] / r['cached']:.1f}× | "
            f"{r['hf_cached']:.3f} | {r['cached'] / r['hf_cached']:.2f} |"
        )
    half = rows[len(rows) // 2 :]
    for key, label in (("cached", "cached step"), ("recompute", "full recompute"), ("hf_cached", "HF cached step")):
        k_all = fit_exponent([r["n"] for r in rows], [r[key] for r in rows])
        k_half = fit_exponent([r["n"] for r in half], [r[key] for r in half])
        print(f"fitted growth exponent, {label}: {k_all:.2f} over all lengths, {k_half:.2f} over the longer half")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--quick", action="store_true", help="seconds: the shipped model at 3 lengths, 3 repeats")
    args = ap.parse_args()
    if args.quick:
        args.repeats = min(args.repeats, 3)
    torch.set_num_threads(args.threads)
    print(
        f"machine: {os.cpu_count()} cores; torch {torch.__version__}, {torch.get_num_threads()} thread(s); "
        f"median of {args.repeats} runs after one warm-up"
    )
    shipped = load_model()
    if args.quick:
        runs = [("shipped model", lambda: shipped, [16, 32, 64])]
    else:
        runs = [
            ("shipped model", lambda: shipped, [16, 32, 64, 128, 256]),
            ("larger preset (random weights)", larger_preset, [16, 32, 64, 128, 256, 512]),
        ]
    for name, build, lengths in runs:
        model = build()
        report(name, model, measure(model, hf_twin(model), lengths, args.repeats))


def larger_preset() -> GPT:
    torch.manual_seed(0)
    return GPT(PRESETS["larger"]).eval()


if __name__ == "__main__":
    main()
