"""Byte-level BPE tokenizer (Hugging Face ``tokenizers``): any Unicode text tokenizes.

Common corpus words are single tokens, so heatmap labels read as words; anything else
falls back to bytes (an emoji may become several tokens).
"""

from __future__ import annotations

from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from core.corpus import END


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
    """Load a tokenizer from its JSON file (never pickle)."""
    return Tokenizer.from_file(str(path))


def encode(tok: Tokenizer, text: str) -> list[int]:
    """Token ids of ``text``; any Unicode string works (byte-level fallback)."""
    return tok.encode(text).ids


def decode(tok: Tokenizer, ids) -> str:
    return tok.decode(list(ids), skip_special_tokens=False)


def end_token_id(tok: Tokenizer) -> int:
    return tok.token_to_id(END)


def token_text(tok: Tokenizer, token_id: int) -> str:
    """Readable text of one token: surrounding spaces kept, newline as '⏎', tab as '⇥'.

    A token holding part of a multi-byte character decodes to '�'; the raw text is never
    markup (callers escape it for their renderer).
    """
    text = tok.decode([int(token_id)], skip_special_tokens=False)
    return text.replace("\n", "⏎").replace("\t", "⇥").replace("\r", "␍")


def token_labels(tok: Tokenizer, ids) -> list[str]:
    """One label per position, ``"pos: text"``, so repeated tokens stay distinct."""
    return [f"{i}: {token_text(tok, t).strip() or '␣'}" for i, t in enumerate(ids)]
