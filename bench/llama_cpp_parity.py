"""llama.cpp itself runs our GGUF exports: logits and greedy text against ``core/``.

    python -m bench.llama_cpp_parity [--threads N] [--new-tokens M] [--kv-type f32|f16] [--quick]

Needs ``llama-cpp-python`` (``pip install llama-cpp-python``: a source build of llama.cpp, about
25 minutes on 2 cores), which is not in requirements-test.txt and not run in CI. Exports the
shipped model as F32 and Q4_0 (``core.gguf.writer``) to a temporary folder, loads each in
llama.cpp, and for three prompts prints

- whether llama.cpp's tokenizer (from the file's metadata) gives our token ids;
- max |Δlogit| over every prompt position, llama.cpp against core/ (F32 file vs our float32
  model; Q4_0 file vs our Q4_0 model, ``block_quantized_model``, and vs our float32 model);
- greedy agreement: how many of ``--new-tokens`` greedy tokens match, and the first that differs.

Token ids are fed to llama.cpp directly, so a tokenizer difference cannot hide a logit one.
Prints measurements; not a test. ``--quick`` (seconds; tests/bench/test_quick_model.py): both files,
the first prompt, 5 greedy tokens; without llama-cpp-python it prints that it is skipped and what it
needs, and exits 0 (the full run exits 2).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

from core.decode.generate import SamplingConfig, generate_cached
from core.decode.settings import DEFAULT_PROMPT
from core.gguf.writer import block_quantized_model, write_gguf
from core.model.shipped import load_model, load_shipped_tokenizer
from core.model.tokenizer import encode

PROMPTS = (
    DEFAULT_PROMPT,
    "User: Can I book a train from Paris to Lyon?\nAssistant:",
    "User: What is the travel limit per day?\nAssistant:",
)


NEEDS = (
    "llama-cpp-python is not installed, so this optional benchmark cannot run.\n"
    "Install it with `pip install llama-cpp-python` (it builds llama.cpp from source: about\n"
    "25 minutes on 2 cores), then run `python -m bench.llama_cpp_parity` again."
)


def _import_llama_cpp(quick: bool = False):
    """The ``llama_cpp`` module; without it, say what is needed and exit: 2, or 0 with ``quick``
    (a smoke run that has nothing to run is skipped, not failed; the message goes to stdout then)."""
    try:
        import llama_cpp
    except ImportError:
        if quick:
            print("skipped (--quick): " + NEEDS)
            raise SystemExit(0) from None
        print(NEEDS, file=sys.stderr)
        raise SystemExit(2) from None
    return llama_cpp


def llama_logits(llm, ids: list[int]) -> np.ndarray:
    """llama.cpp's logits ``(len(ids), vocab)`` for one prompt, every position."""
    llm.reset()
    llm.eval(ids)
    return np.array(llm.scores[: llm.n_tokens], dtype=np.float64)


def llama_greedy(llm, ids: list[int], n_new: int) -> list[int]:
    """Greedy continuation in llama.cpp: argmax of the last position's logits, fed back one by one."""
    llm.reset()
    llm.eval(ids)
    out = []
    for _ in range(n_new):
        token = int(np.argmax(llm.scores[llm.n_tokens - 1]))  # first maximum, as core's greedy
        out.append(token)
        if len(out) == n_new or llm.n_tokens >= llm.n_ctx():
            break
        llm.eval([token])
    return out


def our_logits(model, ids: list[int]) -> np.ndarray:
    with torch.no_grad():
        logits, _ = model(torch.tensor([ids]))
    return logits[0].double().numpy()


def agreement(a: list[int], b: list[int]) -> str:
    same = sum(x == y for x, y in zip(a, b, strict=False))
    first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
    return f"{same}/{min(len(a), len(b))}" + ("" if first is None else f" (first differs at {first})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--new-tokens", type=int, default=30)
    # llama.cpp keeps its KV cache in f16 by default: K and V rounded to fp16 move the logits by ~1e-3,
    # which would hide whether the model itself agrees. f32 compares the model; f16 shows that rounding.
    ap.add_argument("--kv-type", choices=("f32", "f16"), default="f32", help="llama.cpp's KV cache type")
    ap.add_argument("--quick", action="store_true", help="seconds: the first prompt, 5 tokens; exit 0 if skipped")
    args = ap.parse_args()
    llama_cpp = _import_llama_cpp(args.quick)
    prompts = PROMPTS[:1] if args.quick else PROMPTS
    if args.quick:
        args.new_tokens = min(args.new_tokens, 5)
    torch.set_num_threads(args.threads)

    model, tok = load_model(), load_shipped_tokenizer()
    ours = {"F32": model, "Q4_0": block_quantized_model(model, "Q4_0")}
    greedy = SamplingConfig()
    kv_type = {"f32": llama_cpp.GGML_TYPE_F32, "f16": llama_cpp.GGML_TYPE_F16}[args.kv_type]
    print(
        f"llama-cpp-python {llama_cpp.__version__}; shipped model {model.n_params():,} parameters; "
        f"llama.cpp KV cache {args.kv_type}\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in ("F32", "Q4_0"):
            path = Path(tmp) / f"tiny-travel-gpt-{fmt}.gguf"
            size = write_gguf(model, tok, fmt, path)
            llm = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=model.cfg.block_size,
                n_batch=model.cfg.block_size,
                logits_all=True,
                n_threads=args.threads,
                type_k=kv_type,
                type_v=kv_type,
                verbose=False,
            )
            refs = [("our " + fmt, ours[fmt])] + ([("our float32", model)] if fmt != "F32" else [])
            print(f"{fmt} file ({size:,} bytes)")
            for p, prompt in enumerate(prompts, 1):
                ids = encode(tok, prompt)
                same_tok = llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=False) == ids
                theirs = llama_logits(llm, ids)
                text = llama_greedy(llm, ids, args.new_tokens)
                for label, ref in refs:
                    delta = float(np.max(np.abs(theirs - our_logits(ref, ids))))
                    mine = generate_cached(ref, ids, args.new_tokens, greedy).tokens
                    print(
                        f"  prompt {p} ({len(ids)} tokens, same tokens: {same_tok}) vs {label}: "
                        f"max |Δlogit| {delta:.2e}, greedy agreement {agreement(text, mine)}"
                    )
            del llm  # frees llama.cpp's context before the next file
            print()


if __name__ == "__main__":
    main()
