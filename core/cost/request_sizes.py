"""Typed request sizes for the calculators: the memory page's request lengths (positions each
request holds, "4096, 4096") and the batching page's token budgets (tokens each may generate).
Whole numbers read by ``core.typed_numbers`` (its rule: "8,192" is 8192; items are separated by ";",
", " or spaces; digits of other scripts read as 0-9), each refusal saying which entry and why.
"""

from __future__ import annotations

import re
from decimal import Decimal

from core.text import quoted
from core.typed_numbers import PREFIXES, ascii_digits, read_number, space_grouping_notes, split_items

# "8k" = 8,000 and "8Ki" = 8,192 positions (core.typed_numbers.PREFIXES); "8K" is both in use (a thousand, or
# 1,024 as context windows are written), so it is refused naming the two.
_MULTIPLIED = re.compile(r"(?P<n>\d+(?:\.\d+)?)\s*(?P<p>Ki|Mi|Gi|k|K|M|G)")

MAX_REQUESTS = 10_000
# A trillion positions, far past any context window; at 30 digits the memory page's byte counts no
# longer fit their boxes and its chart's axis read 1e+35.
MAX_POSITIONS = 10**12


def _whole(part: str, name: str, unit: str, cap: int, past_cap: str, least: str, separated: str) -> int:
    """``part`` as a whole number from 1 to ``cap`` (read by ``core.typed_numbers.read_number``: "8,192" is
    8192), else ``ValueError`` naming it as ``name``: negative, not a whole number (as ``unit``), past
    ``cap`` (``past_cap`` says why), a leading zero (what "4 096" leaves after its space: ``separated``
    says what spaces separate), 0 (``least``), or a text with two readings (both named)."""
    clean = ascii_digits(part)
    if clean[:1] in "-−" and clean[1:].isascii() and clean[1:].replace(",", "").isdecimal():
        raise ValueError(f"{name} is negative: {least}")
    # The length first: Decimal of a 5,000-digit string is fine, but the page cannot show it.
    digits = clean.replace(",", "").replace("’", "").replace("'", "").replace("_", "")
    if digits.isascii() and digits.isdecimal() and len(digits) > len(str(cap)):
        raise ValueError(f"{name} is {past_cap}")
    if len(clean) > 1 and clean.startswith("0") and clean.isdecimal():  # "4 096" split into 4 and 096
        raise ValueError(f"{name} starts with 0: spaces separate {separated} (4096 or 4,096, not 4 096)")
    try:
        value = _multiplied(part)
        if value is None:
            value, _ = read_number(part, in_list=True, whole=True)
    except ValueError as err:
        if "reads as" in str(err):  # two readings, both named (the text is quoted in it)
            raise
        raise ValueError(f"{name} is not a whole number of {unit}") from None
    if not value.is_finite() or value != value.to_integral_value():
        raise ValueError(f"{name} is not a whole number of {unit}")
    if value < 0:
        raise ValueError(f"{name} is negative: {least}")
    if value > cap:
        raise ValueError(f"{name} is {past_cap}")
    if value < 1:
        raise ValueError(f"{name} is 0: {least}")
    return int(value)


def _multiplied(part: str) -> Decimal | None:
    """A count written with a multiplier ("8k" → 8000, "8Ki" → 8192, "1.5k" → 1500), None without one; a capital
    K is refused with both readings ("8K" → 8,000 or 8,192)."""
    m = _MULTIPLIED.fullmatch(ascii_digits(part).strip())
    if m is None:
        return None
    n = Decimal(m["n"])
    if m["p"] == "K":
        thousand, kibi = (n * 1000).normalize(), (n * 1024).normalize()
        raise ValueError(
            f"{quoted(part, 20)} reads as {thousand:,f} (K a thousand) or {kibi:,f} (K = 1,024, as context windows are "
            f"written): write {m['n']}k or {m['n']}Ki"
        )
    return n * PREFIXES[m["p"]]


def list_notes(text: str) -> list[str]:
    """How the typed list was read where a person may have meant otherwise ("1,500" is one number; "8 192"
    is two), for the page to show beside the result (``core.typed_numbers``'s rule)."""
    notes = []
    for part in split_items(text):
        try:
            notes.append(read_number(part, in_list=True)[1])
        except ValueError:
            pass
    return [n for n in notes if n] + space_grouping_notes(text)


def parse_lengths(text: str) -> list[int]:
    """Request lengths from text like "4096, 4096" or "8 10" (positions per request).

    Raises ``ValueError`` for an empty list, a non-integer, zero or negative length, a length
    with a leading zero (what "4 096" leaves after its space), a text with two readings, a length over ``MAX_POSITIONS``
    or more than ``MAX_REQUESTS`` requests. Lengths up to ``MAX_POSITIONS`` stay exact integers.
    """
    parts = split_items(text)
    if not parts:
        raise ValueError("give at least one request length, e.g. 4096")
    if len(parts) > MAX_REQUESTS:
        raise ValueError(f"{len(parts):,} requests is more than this calculator takes ({MAX_REQUESTS:,})")
    past = f"more positions than any context window: this calculator takes up to {MAX_POSITIONS:,} per request"
    least, separated = "a request holds at least 1 position", "requests, so write one length"
    return [_whole(p, quoted(p, 20), "positions", MAX_POSITIONS, past, least, separated) for p in parts]


def parse_budgets(text: str, max_tokens: int) -> list[int]:
    """Token budgets from text like "12, 20, 6" (tokens each request may generate), for the
    batching page: the words are about tokens to generate, not cache positions.

    Raises ``ValueError`` for an empty list, a non-integer, a negative budget, a budget below 1 or
    above ``max_tokens`` (the context window), or one with a leading zero (what "4,096" leaves after
    its comma)."""
    parts = split_items(text)
    if not parts:
        raise ValueError("give one token budget per prompt, e.g. 12, 20")
    past = f"more tokens than the context window holds ({max_tokens})"
    least, separated = "every request must generate at least 1 token", "budgets, so write each"
    return [
        _whole(p, f"budget {i} ({quoted(p, 20)})", "tokens", max_tokens, past, least, separated)
        for i, p in enumerate(parts, 1)
    ]
