"""The README's figures for llama.cpp's formats, GGUF export and GGUF reading, measured in one run.

    python -m bench.gguf_formats [--quick]

Prints: bits per weight of every block format and where the bits go; bit-exactness against
``gguf.quants`` on 10,240 normal values and every matrix of the shipped model; the RMS error of a
round trip on the normal values; the shipped model's export sizes; and the time to read a
header with a 150,000-token vocabulary with ``gguf.GGUFReader`` as is and as ``core.gguf.reader``
reads it. Not a test. ``--quick`` (seconds; tests/bench/test_quick_model.py): the same tables, the
byte comparison on the shipped model's first 4 matrices, and a 1,500-token header.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from core.cost.counts import kv_cache_bytes_typed
from core.gguf.blocks import dequantize_blocks, quantize_blocks
from core.gguf.layout import LAYOUTS
from core.gguf.reader import read_gguf
from core.gguf.writer import EXPORT_FORMATS, storage_bytes, write_gguf
from core.model.shipped import load_model, load_shipped_tokenizer

FORMATS = ("Q2_K", "Q3_K", "Q4_0", "Q4_1", "Q4_K", "Q5_0", "Q5_1", "Q5_K", "Q6_K", "Q8_0")


def bits_table() -> None:
    print("| format | bytes / values | bits per weight | codes | sub-block scales/mins | block scales (fp16) |")
    print("|---|---:|---:|---:|---:|---:|")
    for f in FORMATS + ("IQ4_NL", "IQ4_XS"):
        lay = LAYOUTS[f]
        parts = {r["kind"]: float(r["bits_per_weight"]) for r in lay.breakdown()}
        cols = [f"{parts.get(k, 0):g}" for k in ("codes", "sub-block scales/mins", "block scales (fp16)")]
        print(
            f"| {f} | {lay.type_size} / {lay.block_size} | {float(lay.bits_per_weight):g} | " + " | ".join(cols) + " |"
        )


def exactness_and_error(max_matrices: int | None = None) -> None:
    import gguf

    x = np.random.default_rng(0).normal(size=10_240).astype(np.float32)
    mats = [p.detach().numpy() for p in load_model().parameters() if p.ndim == 2][:max_matrices]
    print("\n| format | bytes equal to gguf's (normal / model) | RMS error, 10,240 N(0, 1) values |")
    print("|---|---|---:|")
    for f in FORMATS:
        t = gguf.GGMLQuantizationType[f]
        if f.endswith("_K"):  # gguf has no K quantizer: its dequantizer must read our bytes as we do
            same = all(
                np.array_equal(
                    gguf.quants.dequantize(np.frombuffer(quantize_blocks(v.ravel(), f), np.uint8), t),
                    dequantize_blocks(quantize_blocks(v.ravel(), f), f, v.size),
                )
                for v in [x] + [m for m in mats if m.size % 256 == 0]
            )
            exact = "gguf decodes ours identically" if same else "DIFFERENT"
        else:
            ok = [quantize_blocks(v, f) == gguf.quants.quantize(v, t).tobytes() for v in [x] + mats]
            exact = f"{'yes' if ok[0] else 'NO'} / {sum(ok[1:])} of {len(mats)} matrices"
        back = dequantize_blocks(quantize_blocks(x, f), f, x.shape)
        print(f"| {f} | {exact} | {np.sqrt(np.mean((back - x) ** 2)):.4f} |")
    f16 = x.astype(np.float16).astype(np.float32)
    print(f"| F16 | | {np.sqrt(np.mean((f16 - x) ** 2)):.6f} |")


def export_sizes() -> None:
    model, tok = load_model(), load_shipped_tokenizer()
    print("\n| export | file bytes | tensor data | header + metadata | bits per weight |")
    print("|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for f in EXPORT_FORMATS:
            size = write_gguf(model, tok, f, Path(tmp) / f"{f}.gguf")
            data = storage_bytes(model, f)
            print(f"| {f} | {size:,} | {data:,} | {size - data:,} | {8 * data / model.n_params():.3f} |")


def read_speed(vocab: int = 150_000) -> None:
    import gguf

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "vocab.gguf"
        w = gguf.GGUFWriter(str(path), "llama")
        w.add_block_count(32)
        w.add_head_count(32)
        w.add_head_count_kv(8)
        w.add_embedding_length(4096)
        w.add_token_list([f"t{i}" for i in range(vocab)])
        w.add_token_types([1] * vocab)
        w.add_token_merges([f"a{i} b{i}" for i in range(vocab)])
        w.add_tensor("token_embd.weight", np.zeros((4, 64), dtype=np.float16))
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        t = time.perf_counter()
        read_gguf(path)
        ours = time.perf_counter() - t
        t = time.perf_counter()
        gguf.GGUFReader(path)
        plain = time.perf_counter() - t
    print(f"\nheader with {vocab:,} tokens, types and merges: GGUFReader {plain:.2f} s, core.gguf.reader {ours:.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="seconds: 4 of the model's matrices, a 1,500-token header")
    args = ap.parse_args()
    bits_table()
    exactness_and_error(4 if args.quick else None)
    export_sizes()
    kv = kv_cache_bytes_typed(64, 8, 128, 32_768, "q8_0")
    k_mib, total_mib = kv["kv_cache/keys_bytes"] / 2**20, kv["total"] / 2**20
    print(f"\nq8_0 cache, 64 layers × 8 KV heads × 128, 32,768 positions: K {k_mib:,.0f} MiB, K+V {total_mib:,.0f} MiB")
    read_speed(1_500 if args.quick else 150_000)


if __name__ == "__main__":
    main()
