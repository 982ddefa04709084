"""Reading typed lists of numbers: "3, -1, 7, 2", "[3, -1, 7, 2]", "50 ms, 0.06 s".

Each entry is read by ``core.practice.answers`` (its units, separators and messages); this module only splits the list
and names the first entry it cannot read. Every reader raises ``ValueError`` with a message for the student.
"""

from __future__ import annotations

import re

from core.practice.answers import _checked, parse_time_ms
from core.typed_numbers import MINUS_SIGNS, quote, split_number_unit

LIST_EXAMPLE = "4, -2, 0, 6"  # examples in messages are never an exercise's answer


def _entries(text: str) -> list[str]:
    """List entries: split on commas/semicolons if there are any, else on white space before a number
    ("40 ms 45 ms" is two entries, "120 ms" one: a unit stays with its number)."""
    s = normalize_list(text)
    if ";" in s:  # semicolons separate: a comma between them is a decimal comma ("0,3; 0,7"), read or refused per entry
        parts = s.split(";")
    else:
        parts = re.split(r",", s) if "," in s else re.split(r"\s+(?=[-+]?[\d.])", s)
    return [p.strip() for p in parts if p.strip()]


def normalize_list(text: str) -> str:
    s = str(text).strip()
    for sign in MINUS_SIGNS:
        s = s.replace(sign, "-")
    s = s[:-1] if s.endswith(".") and not s.endswith("..") and re.search(r"\d\.\d*\.$|[A-Za-z%]\.$", s) else s
    return s[1:-1] if len(s) >= 2 and s[0] + s[-1] in ("[]", "()", "{}") else s


def parse_int_list(text: str) -> tuple[float, ...]:
    """Numbers for an answer of whole numbers: "3, -1, 7, 2", "3 −1 7 2" or "[3, -1, 7, 2]". A
    decimal entry ("1.5", "0.71") is read as it is, not refused: it is a wrong answer the checker
    can name (forgot to round, applied 1/√d), not unreadable. Raises ``ValueError`` naming the
    first entry that is not a number."""
    text = _checked(text, "whole numbers separated by commas", LIST_EXAMPLE)
    out = []
    for i, p in enumerate(_entries(text), 1):
        if not re.fullmatch(r"[-+]?(\d+(\.\d*)?|\.\d+)", p):
            raise ValueError(
                f"couldn't read {quote(text)} as whole numbers: entry {i} ({quote(p)}) is not a number; "
                f"try {quote(LIST_EXAMPLE)}"
            )
        out.append(int(p.split(".")[0]) if re.fullmatch(r"[-+]?\d+(\.0*)?", p) else float(p))
    if not out:
        raise ValueError(f"couldn't read {quote(text)} as whole numbers: try {quote(LIST_EXAMPLE)}")
    return tuple(out)


def parse_number_list(text: str, each=None) -> tuple[float, ...]:
    """Numbers from "0.08, 0.61, 0.08, 0.22" (commas, semicolons or spaces). ``each`` reads one
    entry (default: a plain number; ``parse_time_ms`` for "50 ms, 60 ms"). Raises ``ValueError``
    naming the first unreadable entry."""
    times = each is parse_time_ms
    text = _checked(
        text, f"{'times' if times else 'numbers'} separated by commas", "20, 35" if times else "0.1, 0.7, 0.2"
    )
    read = each or (lambda p: _plain(p))
    entries = _entries(text)
    if times and entries:  # "0.05, 0.06 s": a unit written once, after the last entry, is every bare entry's
        last = split_number_unit(entries[-1])[1] if _reads(entries[-1]) else ""
        entries = [f"{e} {last}" if last and _reads(e) and not split_number_unit(e)[1] else e for e in entries]
    out = []
    for i, p in enumerate(entries, 1):
        try:
            out.append(read(p))
        except ValueError:
            raise ValueError(
                f"couldn't read {quote(text)} as a list: entry {i} ({quote(p)}) is not "
                f"{'a time' if each is parse_time_ms else 'a number'}; "
                f"try {quote('20, 35' if each else '0.1, 0.7, 0.2')}"
            ) from None
    if not out:
        raise ValueError(f"couldn't read {quote(text)} as a list of numbers")
    return tuple(out)


def _plain(p: str) -> float:
    """One entry of a list of plain numbers; a percentage ("8.3%", shares typed as percent) is its
    fraction, 0.083."""
    number, unit = split_number_unit(p)
    if unit.lower() in ("%", "percent"):
        return number / 100
    if unit:
        raise ValueError("unit")
    return number


def _reads(entry: str) -> bool:
    try:
        split_number_unit(entry)
    except ValueError:
        return False
    return True
