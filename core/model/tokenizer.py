"""Byte-level BPE tokenizer (Hugging Face ``tokenizers``): any Unicode text tokenizes.

Common corpus words are single tokens, so heatmap labels read as words; anything else
falls back to bytes (an emoji may become several tokens). The helpers also serve a loaded
checkpoint's ``tokenizer.json`` (``core.checkpoints.load``): GPT-2/Llama-3-style byte-level BPE and
SentencePiece-style metaspace tokenizers (``▁word``, ``<0x0A>`` byte fallback) alike.
"""

from __future__ import annotations

import re
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from core.model.corpus import END


def train_tokenizer(texts, vocab_size: int) -> Tokenizer:
    """Train a byte-level BPE of ``vocab_size`` tokens (``END`` is id 0) on ``texts``."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[END],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    return tok


def load_tokenizer(path: str | Path) -> Tokenizer:
    """Load a tokenizer from its JSON file (never pickle).

    Special-token text typed by a user (``<|endoftext|>``) is encoded as ordinary text, so a
    prompt can never smuggle in an end token."""
    tok = Tokenizer.from_file(str(path))
    tok.encode_special_tokens = True
    return tok


def encode(tok: Tokenizer, text: str) -> list[int]:
    """Token ids of ``text``; any Unicode string works (byte-level fallback)."""
    return tok.encode(text).ids


def decode(tok: Tokenizer, ids) -> str:
    return tok.decode(list(ids), skip_special_tokens=False)


def end_token_id(tok: Tokenizer) -> int | None:
    """The end-of-text token id: a loaded checkpoint's own (``core.checkpoints.load.load`` records
    its ``eos_token_id`` from config.json on the tokenizer), else ``END``'s id; None if the
    vocabulary has no such token."""
    eos = getattr(tok, "eos_token_id", None)
    return eos if eos is not None else tok.token_to_id(END)


def _byte_level_table() -> dict[str, int]:
    """The byte-level BPE alphabet (GPT-2's bytes_to_unicode) inverted: character → byte."""
    printable = (
        list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars, n = list(printable), 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(printable, chars, strict=True)}


_BYTES = _byte_level_table()
METASPACE = "\u2581"  # "▁", SentencePiece's word-start marker
_BYTE_FALLBACK = re.compile(r"<0x[0-9A-Fa-f]{2}>")
_VISIBLE = {"\n": "⏎", "\t": "⇥", "\r": "␍", "\x0b": "␋", "\x0c": "␌", "\x7f": "␡"}


def token_text(tok: Tokenizer, token_id: int) -> str:
    """Readable text of one token: surrounding spaces kept, newline '⏎', tab '⇥', other control
    characters as their Unicode control pictures (␀ … ␟). A token holding only part of a
    multi-byte character shows its bytes, e.g. ``<0xF0 0x9F>``. Never markup: callers escape
    it for their renderer."""
    text = tok.decode([int(token_id)], skip_special_tokens=False)
    raw = tok.id_to_token(int(token_id)) or ""
    if "\ufffd" in text:
        if _BYTE_FALLBACK.fullmatch(raw):  # SentencePiece byte fallback: already "<0xE2>"
            return raw.upper().replace("0X", "0x")
        if raw and all(c in _BYTES for c in raw):
            return "<" + " ".join(f"0x{_BYTES[c]:02X}" for c in raw) + ">"
    if raw.startswith(METASPACE) and not text.startswith(" "):
        # SentencePiece-style (metaspace) decoders drop the space of a word-initial "▁" when it
        # starts the decoded text, and a lone token always does: put the space back.
        text = " " + text
    return "".join(_VISIBLE.get(c, chr(0x2400 + ord(c)) if ord(c) < 0x20 else c) for c in text)


def token_labels(tok: Tokenizer, ids) -> list[str]:
    """One label per position, ``"pos: text"``, so repeated tokens stay distinct."""
    return [f"{i}: {token_text(tok, t).strip() or '␣'}" for i, t in enumerate(ids)]
