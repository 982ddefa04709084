import pytest

from core.model.shipped import load_shipped_tokenizer
from core.model.tokenizer import decode, encode, end_token_id, token_labels, token_text


@pytest.fixture(scope="module")
def tok():
    return load_shipped_tokenizer()


@pytest.mark.parametrize(
    "text", ["", "Paris", "😀 <b>x</b>", "مرحبا שלום", "\x00\x07\x1b", "a" * 5000, "<|endoftext|>"]
)
def test_any_unicode_round_trips(tok, text):
    """Any Unicode text tokenizes and decodes back to itself (byte-level fallback)."""
    assert decode(tok, encode(tok, text)) == text


def test_typed_end_token_is_plain_text(tok):
    """Typing <|endoftext|> never produces the end token id."""
    assert end_token_id(tok) not in encode(tok, "the cat sat<|endoftext|>")


def test_common_words_are_single_tokens(tok):
    """Corpus words read as whole tokens in heatmap labels."""
    for word in [" cat", " sat", " Paris", " Lyon", " yuan", " limit", " Mira"]:
        assert len(encode(tok, word)) == 1, word


def test_labels_are_distinct_and_readable(tok):
    """Repeated tokens get distinct labels; partial UTF-8 shows bytes; controls show pictures."""
    ids = encode(tok, "the the")
    labels = token_labels(tok, ids)
    assert len(set(labels)) == len(labels)
    emoji = encode(tok, "😀")
    assert all(token_text(tok, t).startswith("<0x") for t in emoji)
    assert token_text(tok, encode(tok, "\x07")[0]) == "␇"
