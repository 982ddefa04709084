"""Reproduce the shipped models: ``python -m core.model.train`` (about 9 minutes on 2 CPU cores), then
``python -m core.model.train --preset draft`` for the speculative-decoding draft (about a minute; it
reuses ``assets/tokenizer.json`` so both models share one tokenizer).

Generates the corpus (core.model.corpus, fixed seed), trains the byte-level BPE tokenizer (shipped
model only), trains the transformer with AdamW on random windows, and writes to ``assets/``
(the draft to ``assets/draft/``): ``config.json``, ``model.safetensors``, ``tokenizer.json`` and
``model_card.json``. Weights are saved with
safetensors (no pickle). Bit-for-bit equality across machines is not promised (thread
counts change float sums); the procedure and seed are fixed.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import torch
from safetensors.torch import save_file

from core.model.config import PRESETS, GPTConfig
from core.model.corpus import END, generate_corpus
from core.model.model import GPT
from core.model.shipped import ASSETS
from core.model.tokenizer import load_tokenizer, train_tokenizer


def encode_stream(tok, docs: list[str]) -> torch.Tensor:
    """All documents as one id stream, each followed by the end token."""
    text_ids: list[int] = []
    end = tok.token_to_id(END)
    for enc in tok.encode_batch(docs):
        text_ids.extend(enc.ids)
        text_ids.append(end)
    return torch.tensor(text_ids, dtype=torch.long)


def batches(stream: torch.Tensor, batch_size: int, block: int, g: torch.Generator):
    while True:
        starts = torch.randint(0, len(stream) - block - 1, (batch_size,), generator=g)
        x = torch.stack([stream[s : s + block] for s in starts])
        y = torch.stack([stream[s + 1 : s + block + 1] for s in starts])
        yield x, y


@torch.no_grad()
def evaluate(model: GPT, stream: torch.Tensor, block: int, max_windows: int = 64) -> float:
    """Mean next-token cross-entropy (nats/token) over consecutive windows of ``stream``."""
    model.eval()
    losses = []
    for i in range(min(max_windows, (len(stream) - 1) // block)):
        x = stream[i * block : (i + 1) * block].unsqueeze(0)
        y = stream[i * block + 1 : (i + 1) * block + 1].unsqueeze(0)
        logits, _ = model(x)
        losses.append(torch.nn.functional.cross_entropy(logits[0], y[0]).item())
    model.train()
    return sum(losses) / len(losses)


def train(
    cfg: GPTConfig, steps: int, batch_size: int, lr: float, seed: int, out: Path, tokenizer_from: Path | None = None
) -> dict:
    torch.manual_seed(seed)
    docs = generate_corpus(24000, seed=seed)
    n_val = 1000
    if tokenizer_from is not None:
        tok = load_tokenizer(tokenizer_from)
    else:
        tok = train_tokenizer(docs[n_val:], cfg.vocab_size)
    train_ids, val_ids = encode_stream(tok, docs[n_val:]), encode_stream(tok, docs[:n_val])
    model = GPT(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.1)
    data = batches(train_ids, batch_size, cfg.block_size, torch.Generator().manual_seed(seed))
    t0 = time.perf_counter()
    for step in range(steps):
        # Cosine decay after a short warm-up.
        warm = min(1.0, (step + 1) / 50)
        for group in opt.param_groups:
            group["lr"] = lr * warm * 0.5 * (1 + math.cos(math.pi * step / steps))
        x, y = next(data)
        logits, _ = model(x)
        loss = torch.nn.functional.cross_entropy(logits.view(-1, cfg.vocab_size), y.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 100 == 0 or step == steps - 1:
            print(f"step {step:5d}  loss {loss.item():.3f}  {time.perf_counter() - t0:6.0f} s", flush=True)
    val_loss = evaluate(model, val_ids, cfg.block_size)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(cfg.to_dict(), indent=2) + "\n", encoding="utf-8")
    if tokenizer_from is None:  # the draft shares the shipped model's tokenizer
        tok.save(str(out / "tokenizer.json"))
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(out / "model.safetensors"))
    card = {
        "name": "tiny-travel-gpt" if tokenizer_from is None else "tiny-travel-gpt-draft",
        "n_params": model.n_params(),
        "validation_loss_nats_per_token": round(val_loss, 4),
        "validation_perplexity": round(math.exp(val_loss), 3),
        "train_steps": steps,
        "batch_size": batch_size,
        "train_tokens": len(train_ids),
        "validation_tokens": len(val_ids),
        "seed": seed,
        "train_seconds": round(time.perf_counter() - t0, 1),
        "torch_threads": torch.get_num_threads(),
    }
    (out / "model_card.json").write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(card, indent=2))
    return card


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=None, help="default: 2000 (shipped), 800 (draft)")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--preset", choices=["shipped", "draft"], default="shipped")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    steps = args.steps or (800 if args.preset == "draft" else 2000)
    if args.preset == "draft":
        train(
            PRESETS["draft"],
            steps,
            args.batch_size,
            args.lr,
            args.seed,
            args.out or ASSETS / "draft",
            tokenizer_from=ASSETS / "tokenizer.json",
        )
    else:
        train(PRESETS["shipped"], steps, args.batch_size, args.lr, args.seed, args.out or ASSETS)


if __name__ == "__main__":
    main()
