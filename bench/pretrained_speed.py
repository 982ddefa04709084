"""A real-sized checkpoint through ``core.checkpoints.load.load``: decode step against the memory floor.

    nice -n 10 python -m bench.pretrained_speed [--threads 1] [--repeats 7] [--checkpoint DIR] [--quick]

A random model with SmolLM2-135M's published shape (30 layers, 9 heads, 3 KV heads, d_model 576,
intermediate 1536, vocabulary 49,152, tied embeddings) is written by ``transformers`` as a local
checkpoint (safetensors + a small tokenizer.json) and loaded through ``core.checkpoints.load.load``.
At 128 and 512 cached positions it times, interleaved and with the same thread count: our cached
decode step, our full recompute of the n + 1 positions, and transformers' own cached step
(``LlamaForCausalLM``, its default attention and ``DynamicCache``) on the same folder. Every
repeat leaves the caches at n positions again (``truncate`` / ``crop``), so each step attends
n + 1 positions.

A decode step reads every weight once, so its floor on a CPU is weight bytes ÷ memory read
bandwidth. The bandwidth is measured in the same run: a float32 matrix-vector product over a
matrix far larger than the caches (bytes of the matrix ÷ time). A second ratio adds the cached
keys and values the step reads (2 · n_layer · (n + 1) · n_kv_head · head_dim · 4 bytes) to the
floor. The last column times the same step on ``tiny_twin``: the same layers and heads with tiny
matrices (the cached K/V keep their real size), what the step's ~1,300 small operations cost
when there are almost no weights to read. Prints medians and ratios measured side by side, by
the wall clock and by this process's CPU time (on a shared machine the CPU time is the steadier
of the two), and the load average; not a test. One thread by default, as the app's server runs
each request (``ui/models.py``).
``--checkpoint`` times a real folder (e.g. a downloaded SmolLM2-135M) instead of the random one.
``--quick`` (seconds; tests/bench/test_quick_model.py): the same table on ``TINY_LLAMA`` (SmolLM2's
layout with 2 layers, d_model 64 and a 512-token vocabulary), a 16 MiB bandwidth probe, 2 repeats.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import tempfile
import time
from pathlib import Path

import torch

from core.checkpoints.load import load
from core.decode.generate import decode_one_token, full_forward, prefill
from core.decode.kv_cache import KVCache
from core.model.config import GPTConfig
from core.model.layout import fuse_projections
from core.model.model import GPT

SMOLLM2_135M = dict(  # HuggingFaceTB/SmolLM2-135M's config.json (shape fields)
    vocab_size=49152,
    hidden_size=576,
    intermediate_size=1536,
    num_hidden_layers=30,
    num_attention_heads=9,
    num_key_value_heads=3,
    max_position_embeddings=8192,
    rms_norm_eps=1e-5,
    rope_parameters={"rope_type": "default", "rope_theta": 100000.0},
    tie_word_embeddings=True,
)

# ``--quick``: the same architecture (grouped-query heads, tied embeddings, RoPE) in a few MB.
TINY_LLAMA = dict(
    SMOLLM2_135M,
    vocab_size=512,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
)


def write_checkpoint(folder: Path, shape: dict = SMOLLM2_135M) -> None:
    """Random weights in SmolLM2-135M's shape (or ``shape``), saved by transformers, plus a
    byte-level tokenizer."""
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**shape))
    model.save_pretrained(folder, safe_serialization=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(["the cat sat on the mat"] * 10, trainer=trainer)
    tok.save(str(folder / "tokenizer.json"))


def timed(fn) -> tuple[float, float]:
    """(wall ms, this process's CPU ms) of one call."""
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000


def tiny_twin(cfg: GPTConfig) -> GPT:
    """The same layers, heads and ``head_dim`` with tiny matrices (d_model 8 per head, intermediate
    32, vocabulary 300), projections fused as the loader fuses them: its decode step does the same
    operations on almost no bytes, so its time is what the operations cost beyond reading weights."""
    twin = GPT(dataclasses.replace(cfg, n_embd=8 * cfg.n_head, ffn_hidden=32, vocab_size=300)).eval()
    fuse_projections(twin)
    return twin


def measure(n: int, model, hf, vocab_size: int, probe: torch.Tensor, repeats: int) -> dict:
    """Medians (wall ms, CPU ms) at ``n`` cached positions of: the bandwidth probe ("mv"), our
    cached step ("ours"), transformers' cached step ("hf"), our full recompute ("full") and our
    step on ``tiny_twin`` ("twin")."""
    ids = torch.randint(0, vocab_size, (n,), generator=torch.Generator().manual_seed(n)).tolist()
    token = ids[-1]
    cache = KVCache(model.cfg)
    prefill(model, ids, cache)
    twin = tiny_twin(model.cfg)
    twin_cache = KVCache(twin.cfg)
    prefill(twin, [i % 300 for i in ids], twin_cache)

    def twin_step():
        decode_one_token(twin, token % 300, twin_cache)
        twin_cache.truncate(n)

    with torch.no_grad():
        past = hf(torch.tensor([ids]), use_cache=True).past_key_values  # a DynamicCache
    vec = torch.randn(probe.shape[1])

    def ours():
        decode_one_token(model, token, cache)
        cache.truncate(n)  # back to n cached positions: every repeat attends n + 1

    @torch.no_grad()
    def theirs():
        hf(torch.tensor([[token]]), cache=past, use_cache=True)
        past.crop(-1)  # drop the position just added

    prefix = ids + [token]  # what the cached step sees, recomputed from scratch
    runs = {
        "mv": lambda: torch.mv(probe, vec),
        "ours": ours,
        "hf": theirs,
        "full": lambda: full_forward(model, prefix),
        "twin": twin_step,
    }
    for fn in runs.values():
        fn()  # warm-up
    wall, cpu = {k: [] for k in runs}, {k: [] for k in runs}
    for _ in range(repeats):  # interleaved: every variant sees the same machine
        for key, fn in runs.items():
            w, c = timed(fn)
            wall[key].append(w)
            cpu[key].append(c)
    return {k: (statistics.median(wall[k]), statistics.median(cpu[k])) for k in runs}


def kv_read_bytes(card, positions: int) -> int:
    """Bytes of cached keys and values a step at ``positions`` attended positions reads, float32:
    2 · n_layer · positions · n_kv_head · head_dim · 4 (M of the KV-cache chapter with B = 1)."""
    return 2 * card.n_layer * positions * card.n_kv_head * card.head_dim * 4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--checkpoint", type=Path, help="an existing checkpoint folder instead of the random one")
    parser.add_argument("--quick", action="store_true", help="seconds: a 2-layer model of the same layout, 2 repeats")
    args = parser.parse_args()
    if args.quick:
        args.repeats = min(args.repeats, 2)
    torch.set_num_threads(args.threads)
    import transformers

    with tempfile.TemporaryDirectory() as tmp:
        name = "tiny-llama-random (--quick)" if args.quick else "SmolLM2-135M-random"
        folder = args.checkpoint or Path(tmp) / name
        if args.checkpoint is None:
            write_checkpoint(folder, TINY_LLAMA if args.quick else SMOLLM2_135M)
        model, _, card = load(folder)
        again_ms = load(folder)[2].load_ms  # files now in the page cache either way
        hf = transformers.AutoModelForCausalLM.from_pretrained(folder).eval()
    # float32, 512 MiB: far larger than the CPU caches (--quick: 16 MiB, still past most L2s)
    probe = torch.randn(2048, 2048) if args.quick else torch.randn(8192, 16384)
    probe_bytes = probe.numel() * probe.element_size()
    mib = 2**20
    print(f"{card.name}: {card.n_params:,} parameters, {card.weight_bytes / mib:,.0f} MiB as float32")
    print(f"load: {card.load_ms:,.0f} ms (again: {again_ms:,.0f} ms); RSS after load {card.rss_bytes / mib:,.0f} MiB")
    print(f"threads: {args.threads}, repeats: {args.repeats}, load average before: {os.getloadavg()[0]:.1f}\n")
    head = "positions | clock | bandwidth | floor | cached step | ÷ floor | ÷ floor with K/V | recompute | transformers"
    print(f"| {head} | ours ÷ tf | same layers, tiny matrices |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in (128, 512):
        m = measure(n, model, hf, card.vocab_size, probe, args.repeats)
        for i, clock in enumerate(("wall", "process CPU")):
            mv, ours, theirs, full, twin = (m[k][i] for k in ("mv", "ours", "hf", "full", "twin"))
            floor = card.weight_bytes / probe_bytes * mv  # weight bytes ÷ bandwidth
            kv_floor = (card.weight_bytes + kv_read_bytes(card, n + 1)) / probe_bytes * mv
            print(
                f"| {n} | {clock} | {probe_bytes / mv / 1e6:.1f} GB/s | {floor:.1f} ms | {ours:.1f} ms | "
                f"{ours / floor:.2f}× | {ours / kv_floor:.2f}× | {full:,.0f} ms | {theirs:.1f} ms | "
                f"{ours / theirs:.2f} | {twin:.1f} ms |"
            )
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
