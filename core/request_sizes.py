"""Typed request sizes for the calculators: the memory page's request lengths (positions each
request holds, "4096, 4096") and the batching page's token budgets (tokens each may generate).
Whole numbers in the digits 0-9 only, each refusal saying which entry and why.
"""

from __future__ import annotations

import re

from core.text import quoted

MAX_REQUESTS = 10_000
# A trillion positions, far past any context window; at 30 digits the memory page's byte counts no
# longer fit their boxes and its chart's axis read 1e+35.
MAX_POSITIONS = 10**12


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
    out = []
    for p in parts:
        clean = p.replace("_", "")
        if clean[:1] in "-−" and clean[1:].isascii() and clean[1:].isdecimal():
            raise ValueError(f"{quoted(p, 20)} is negative: a request holds at least 1 position")
        if not (clean.isascii() and clean.isdecimal()):
            raise ValueError(f"{quoted(p, 20)} is not a whole number of positions (digits 0-9)")
        if len(clean) > 13 or int(clean) > MAX_POSITIONS:  # the length test first: int() of 5,000 digits is slow
            raise ValueError(
                f"{quoted(p, 20)} is more positions than any context window: this calculator takes up to "
                f"{MAX_POSITIONS:,} per request"
            )
        if len(clean) > 1 and clean.startswith("0"):  # "4,096" split into 4 and 096: a thousands separator
            raise ValueError(
                f"{quoted(p, 20)} starts with 0: commas and spaces separate requests, so write one length "
                "without a thousands separator (4096, not 4,096)"
            )
        if int(clean) < 1:
            raise ValueError("every request needs at least 1 position")
        out.append(int(clean))
    return out


def parse_budgets(text: str, max_tokens: int) -> list[int]:
    """Token budgets from text like "12, 20, 6" (tokens each request may generate), for the
    batching page: the words are about tokens to generate, not cache positions.

    Raises ``ValueError`` for an empty list, a non-integer, a negative budget, a budget below 1 or
    above ``max_tokens`` (the context window), or one with a leading zero (what "4,096" leaves after
    its comma)."""
    parts = [p for p in re.split(r"[,\s;]+", text or "") if p]
    if not parts:
        raise ValueError("give one token budget per prompt, e.g. 12, 20")
    out = []
    for i, p in enumerate(parts, 1):
        clean = p.replace("_", "")
        if clean[:1] in "-−" and clean[1:].isascii() and clean[1:].isdecimal():
            raise ValueError(f"budget {i} ({quoted(p, 20)}) is negative: every request must generate at least 1 token")
        if not (clean.isascii() and clean.isdecimal()):
            raise ValueError(f"budget {i} ({quoted(p, 20)}) is not a whole number of tokens (digits 0-9)")
        # The length first: int() of a 5,000-digit string is refused by Python with a message about
        # sys.set_int_max_str_digits, and any budget past 20 digits is past every context window.
        if len(clean) > 20 or int(clean) > max_tokens:
            raise ValueError(
                f"budget {i} ({quoted(p, 20)}) is more tokens than the context window holds ({max_tokens})"
            )
        if len(clean) > 1 and clean.startswith("0"):  # "4,096" split into 4 and 096: a thousands separator
            raise ValueError(
                f"budget {i} ({quoted(p, 20)}) starts with 0: commas and spaces separate budgets, so write "
                "each without a thousands separator (4096, not 4,096)"
            )
        if int(clean) < 1:
            raise ValueError(f"budget {i} is {int(clean)}: every request must generate at least 1 token")
        out.append(int(clean))
    return out
