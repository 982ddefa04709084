"""Typed request sizes for the calculators: the memory page's request lengths (positions each
request holds, "4096, 4096") and the batching page's token budgets (tokens each may generate).
Whole numbers, each refusal saying which entry and why. Digits of other scripts ("٤٠٩٦", "４０９６") read
as 0-9, as the exercises' answer boxes read them.
"""

from __future__ import annotations

import re

from core.text import quoted
from core.typed_numbers import ascii_digits

MAX_REQUESTS = 10_000
# A trillion positions, far past any context window; at 30 digits the memory page's byte counts no
# longer fit their boxes and its chart's axis read 1e+35.
MAX_POSITIONS = 10**12


def _whole(part: str, name: str, unit: str, cap: int, past_cap: str, least: str, separated: str) -> int:
    """``part`` as a whole number from 1 to ``cap``, else ``ValueError`` naming it as ``name``: negative,
    not a whole number (as ``unit``), past ``cap`` (``past_cap`` says why), a leading zero (what
    "4,096" leaves after its comma: ``separated`` says what commas separate) or 0 (``least``)."""
    clean = ascii_digits(part.replace("_", ""))
    if clean[:1] in "-−" and clean[1:].isascii() and clean[1:].isdecimal():
        raise ValueError(f"{name} is negative: {least}")
    if not (clean.isascii() and clean.isdecimal()):
        raise ValueError(f"{name} is not a whole number of {unit}")
    # The length first: int() of a 5,000-digit string is slow, and Python refuses it with a message
    # about sys.set_int_max_str_digits.
    if len(clean) > len(str(cap)) or int(clean) > cap:
        raise ValueError(f"{name} is {past_cap}")
    if len(clean) > 1 and clean.startswith("0"):  # "4,096" split into 4 and 096: a thousands separator
        raise ValueError(
            f"{name} starts with 0: commas and spaces separate {separated} without a thousands separator "
            "(4096, not 4,096)"
        )
    if int(clean) < 1:
        raise ValueError(f"{name} is 0: {least}")
    return int(clean)


def parse_lengths(text: str) -> list[int]:
    """Request lengths from text like "4096, 4096" or "8 10" (positions per request).

    Raises ``ValueError`` for an empty list, a non-integer, zero or negative length, a length
    with a leading zero (what "4,096" leaves after its comma), a length over ``MAX_POSITIONS``
    or more than ``MAX_REQUESTS`` requests. Lengths up to ``MAX_POSITIONS`` stay exact integers.
    """
    parts = [p for p in re.split(r"[,\s;]+", text or "") if p]
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
    parts = [p for p in re.split(r"[,\s;]+", text or "") if p]
    if not parts:
        raise ValueError("give one token budget per prompt, e.g. 12, 20")
    past = f"more tokens than the context window holds ({max_tokens})"
    least, separated = "every request must generate at least 1 token", "budgets, so write each"
    return [
        _whole(p, f"budget {i} ({quoted(p, 20)})", "tokens", max_tokens, past, least, separated)
        for i, p in enumerate(parts, 1)
    ]
