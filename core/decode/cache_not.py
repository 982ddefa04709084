"""What the KV cache is not (Ch. 30 §30.4, Ch. 19 "Two speeds, one model"), shown with the real model.

The chapter's claims: retained K/V are valid only for the same inputs, weights, positions and
attention rule ("different weights, adapters, tokenizer IDs, positions or attention rules can also
invalidate reuse"); a chat application's stored messages are text records, not the KV cache; an
answer cache stores a previous answer under a reuse rule, the KV cache stores layer-specific numbers
and no permission or policy truth; reuse speeds generation without updating the weights.

Each check here prefills the same text once as the reference and once with one thing changed, and
compares the keys and values each layer stores, position by position: reuse is safe only where they
are equal. Everything is computed; nothing is a canned answer.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
from dataclasses import dataclass

import torch

from core.decode.generate import SamplingConfig, generate_cached, prefill
from core.decode.kv_cache import KVCache
from core.model.layout import fuse_projections
from core.model.model import GPT
from core.model.tokenizer import encode, token_text
from core.quant.model_weights import quantize_weights
from core.text import format_bytes

ADAPTER_RANK = 2  # a LoRA-style low-rank update (Hu et al., 2021) on every key and value projection
ADAPTER_SCALE = 0.05


@dataclass(frozen=True)
class ReuseCheck:
    """One changed condition against the reference prefill of the same text.

    ``max_key_diff`` / ``max_value_diff``: the largest |difference| between the stored keys (values)
    of the two runs over every layer, KV head and compared position (the positions both runs hold);
    ``first_layer_diff``: the first layer whose keys or values differ (None: none differ);
    ``first_position_diff``: the first position whose K/V differ in any layer (None: none);
    ``compared``: how many positions were compared (a different tokenization has other positions)."""

    condition: str
    change: str
    max_key_diff: float
    max_value_diff: float
    first_layer_diff: int | None
    first_position_diff: int | None
    compared: int

    @property
    def reusable(self) -> bool:
        """The reference cache could stand in for this run's: every stored number equal."""
        return self.first_position_diff is None


def _kv(model: GPT, ids: list[int], offset: int = 0) -> KVCache:
    """The cache after prefilling ``ids`` (at absolute positions ``offset ..``)."""
    cache = KVCache(model.cfg, dtype=model.dtype)
    cache.offset = offset  # RoPE positions start at ``offset``, as after a longer prefix
    prefill(model, ids, cache)
    return cache


def _compare(ref: KVCache, other: KVCache, condition: str, change: str) -> ReuseCheck:
    n = min(ref.pos, other.pos)
    dk = [(ref.keys(layer)[..., :n, :] - other.keys(layer)[..., :n, :]).abs() for layer in range(ref.cfg.n_layer)]
    dv = [(ref.values(layer)[..., :n, :] - other.values(layer)[..., :n, :]).abs() for layer in range(ref.cfg.n_layer)]
    # (B, n_kv_head, n, head_dim) per layer → which layers and positions differ at all
    differs = [(k > 0).any() or (v > 0).any() for k, v in zip(dk, dv, strict=True)]
    by_pos = torch.zeros(n, dtype=torch.bool)
    for k, v in zip(dk, dv, strict=True):
        by_pos |= (k > 0).any(dim=(0, 1, 3)) | (v > 0).any(dim=(0, 1, 3))  # (n,)
    first_pos = int(by_pos.nonzero()[0]) if bool(by_pos.any()) else None
    first_layer = next((i for i, d in enumerate(differs) if d), None)
    return ReuseCheck(
        condition,
        change,
        float(max(float(d.max()) for d in dk)),
        float(max(float(d.max()) for d in dv)),
        first_layer,
        first_pos,
        n,
    )


def _windowed(model: GPT, window: int) -> GPT:
    """The same weights under another attention rule: a sliding window of ``window`` positions."""
    other = copy.copy(model)  # shares the (read-only) parameters; only the config differs
    other.cfg = dataclasses.replace(model.cfg, sliding_window=window)
    return other


@torch.no_grad()
def _adapted(model: GPT, seed: int = 0) -> GPT:
    """A copy with a small low-rank adapter added to every key and value projection."""
    other = copy.deepcopy(model)
    gen = torch.Generator().manual_seed(seed)
    for block in other.layers:
        for proj in (block.self_attn.k_proj, block.self_attn.v_proj):
            out_f, in_f = proj.weight.shape
            a = torch.randn(out_f, ADAPTER_RANK, generator=gen, dtype=proj.weight.dtype)
            b = torch.randn(ADAPTER_RANK, in_f, generator=gen, dtype=proj.weight.dtype)
            proj.weight += ADAPTER_SCALE * (a @ b) / in_f**0.5  # (out, in)
    if model.layers and model.layers[0].self_attn.fused_qkv is not None:
        fuse_projections(other)  # the fused copy the decode path reads must follow the new weights
    return other


def reuse_checks(model: GPT, tok, text: str, edited: str, window: int = 4, offset: int = 7) -> list[ReuseCheck]:
    """Prefill ``text`` as the reference, then once per changed condition, and compare the caches.

    Conditions: nothing changed; the prompt edited to ``edited`` (Ch. 30's 600 → 750 yuan); the same
    text as another tokenizer's IDs (here: one token per character, so other IDs at other positions);
    the same IDs at positions shifted by ``offset`` (as after a longer prefix); another attention rule
    (a sliding window of ``window``); 4-bit weights; a low-rank adapter. Raises ``ValueError`` for an
    empty text or one past the context window."""
    ids = encode(tok, text)
    if not text.strip():
        raise ValueError("the text is empty (or only spaces): type a few words first")
    if not edited.strip():
        raise ValueError("the edited text is empty (or only spaces): type the text with one change")
    chars = [i for ch in text for i in encode(tok, ch)]  # the same text, split into single characters
    ref = _kv(model, ids)
    rows = [
        ("nothing", "the same text, IDs, positions, rule and weights", _kv(model, ids)),
        (
            "the prompt edited",
            f"{len(encode(tok, edited))} tokens of the edited prompt",
            _kv(model, encode(tok, edited)),
        ),
        ("tokenizer IDs", f"the same text as {len(chars)} one-character tokens, not {len(ids)}", _kv(model, chars)),
        ("positions", f"the same IDs starting at position {offset}, not 0", _kv(model, ids, offset)),
        ("attention rule", f"a sliding window of {window} positions", _kv(_windowed(model, window), ids)),
        ("weights or precision", "weights rounded to 4 bits in groups of 32", _kv(quantize_weights(model, 4, 32), ids)),
        ("an adapter", f"a rank-{ADAPTER_RANK} adapter on the key and value projections", _kv(_adapted(model), ids)),
    ]
    return [_compare(ref, other, condition, change) for condition, change, other in rows]


def weights_digest(model: GPT) -> str:
    """SHA-256 of every parameter's bytes, in name order: equal before and after generating means
    no learning happened during the conversation."""
    h = hashlib.sha256()
    for name, p in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(p.detach().contiguous().cpu().numpy().tobytes())
    return h.hexdigest()


@dataclass(frozen=True)
class ChatTurn:
    """A chat transcript continued: the stored messages are text that must be prefilled again.

    ``transcript_tokens``: positions the next request prefills from the stored text;
    ``reply``: what the model generated; ``digest_before`` / ``digest_after``: the weights' SHA-256."""

    transcript_tokens: int
    reply: str
    digest_before: str
    digest_after: str


def continue_chat(model: GPT, tok, transcript: str, new_tokens: int = 8) -> ChatTurn:
    """Continue a stored transcript: tokenize the text record, prefill it, decode ``new_tokens``
    greedily; report the prefill size and the weights' digest before and after."""
    ids = encode(tok, transcript)
    if not transcript.strip():
        raise ValueError("the transcript is empty (or only spaces)")
    before = weights_digest(model)
    gen = generate_cached(model, ids, new_tokens, SamplingConfig())
    reply = "".join(token_text(tok, t) for t in gen.tokens)
    return ChatTurn(len(ids), reply, before, weights_digest(model))


def answer_cache_vs_kv_cache(turn: ChatTurn, kv_bytes: int) -> list[dict]:
    """The answer cache and the KV cache side by side for one continued transcript (Ch. 30 §30.4):
    what each stores, its reuse rule, its size here (the reply's UTF-8 bytes; ``kv_bytes`` of K/V for
    the transcript and reply), and that neither holds permission or current policy."""
    rows = (
        ("what it stores", "a previous answer string", "each layer's keys and values"),
        (
            "reused when",
            "its reuse rule matches (e.g. the same question)",
            "the same token IDs, positions, weights, rule",
        ),
        ("size here", f"{len(turn.reply.encode()):,} B of text", f"{format_bytes(kv_bytes)} of numbers"),
        ("holds permission or current policy?", "no: it repeats what was said", "no: numbers, not facts or rights"),
    )
    return [{"": what, "answer cache": answer, "KV cache": kv} for what, answer, kv in rows]
