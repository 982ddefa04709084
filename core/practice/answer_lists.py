"""Reading typed lists of numbers: "3, -1, 7, 2", "[3, -1, 7, 2]", "50 ms, 0.06 s", "0,3; 0,7".

Items are split and their numbers read by ``core.typed_numbers`` (the one rule for every box: items are
separated by ";", by ", " or by spaces; "1,500" is one number, and said so; "1,5" names both of its readings,
1.5 or 1 and 5, instead of picking one). A list separated by semicolons reads a comma inside an item as a
decimal comma ("0,3; 0,7"): there it has one reading. Entries with units ("50 ms") are read by
``core.practice.answers``. Every reader raises ``ValueError`` with a message for the student.
"""

from __future__ import annotations

import re

from core.practice.answers import _checked, parse_time_ms
from core.typed_numbers import (
    MINUS_SIGNS,
    Refused,
    quote,
    read_number,
    space_grouping_notes,
    split_items,
    split_number_unit,
)

LIST_EXAMPLE = "4, -2, 0, 6"  # examples in messages are never an exercise's answer


def _entries(text: str) -> list[tuple[str, bool]]:
    """List entries, each with whether it is read as a list item (``in_list``: a comma in it has two readings).
    Split at semicolons if there are any (then a comma inside an entry is a decimal comma: "0,3; 0,7"), else
    by ``core.typed_numbers.split_items``; a unit stays with its number ("40 ms 45 ms" is two entries)."""
    s = normalize_list(text)
    if ";" in s:
        return [(p.strip(), False) for p in s.split(";") if p.strip()]
    s = re.sub(r"(?<=[\d.])\s+(?=[A-Za-zµμ%])", "\x00", s)  # "50 ms" stays one entry (NUL: not a separator)
    return [(p.replace("\x00", " "), True) for p in split_items(s)]


def normalize_list(text: str) -> str:
    s = str(text).strip()
    for sign in MINUS_SIGNS:
        s = s.replace(sign, "-")
    s = s[:-1] if s.endswith(".") and not s.endswith("..") and re.search(r"\d\.\d*\.$|[A-Za-z%]\.$", s) else s
    return s[1:-1] if len(s) >= 2 and s[0] + s[-1] in ("[]", "()", "{}") else s


def notes(text: str) -> list[str]:
    """How the list reader took separators a person may have meant otherwise: "1,500" read as one number,
    "8 192" as two items. Shown beside a wrong count ("Give 2 numbers; you gave 1")."""
    out = []
    for entry, in_list in _entries(str(text or "")):
        try:
            if in_list and re.fullmatch(r"[-+]?[\d.,]+", entry) and (note := read_number(entry, in_list=True)[1]):
                out.append(note)
        except ValueError:
            continue
    return out + space_grouping_notes(text)


def _refused(text: str, what: str, i: int, entry: str, in_list: bool) -> None:
    """Raise the reader's own refusal of entry ``i`` (ambiguous or malformed), naming it; None if it has none."""
    try:
        split_number_unit(entry, in_list=in_list)
    except Refused as err:
        which = f"entry {i}: " if entry.strip() != str(text).strip() else ""  # a one-entry text is its own entry
        raise ValueError(f"couldn't read {quote(text)} as {what}: {which}{err}") from None
    except ValueError:
        return


def parse_int_list(text: str) -> tuple[float, ...]:
    """Numbers for an answer of whole numbers: "3, -1, 7, 2", "3 −1 7 2", "[3, -1, 7, 2]" or "1,000; 2". A
    decimal entry ("1.5", "0.71") is read as it is, not refused: it is a wrong answer the checker
    can name (forgot to round, applied 1/√d), not unreadable. Raises ``ValueError`` naming the
    first entry that is not a number."""
    text = _checked(text, "whole numbers separated by commas", LIST_EXAMPLE)
    out = []
    for i, (p, in_list) in enumerate(_entries(text), 1):
        _refused(text, "whole numbers", i, p, in_list)
        try:
            number, unit = split_number_unit(p, in_list=in_list)
        except ValueError:
            number, unit = None, "?"
        if unit:
            raise ValueError(
                f"couldn't read {quote(text)} as whole numbers: entry {i} ({quote(p)}) is not a number; "
                f"try {quote(LIST_EXAMPLE)}"
            )
        out.append(int(number) if number.is_integer() else number)
    if not out:
        raise ValueError(f"couldn't read {quote(text)} as whole numbers: try {quote(LIST_EXAMPLE)}")
    return tuple(out)


def parse_number_list(text: str, each=None) -> tuple[float, ...]:
    """Numbers from "0.08, 0.61, 0.08, 0.22" (commas, semicolons or spaces). ``each`` reads one
    entry (default: a plain number; ``parse_time_ms`` for "50 ms, 60 ms"). Raises ``ValueError``
    naming the first unreadable entry, with the reader's reason where it has one ("1,5": both readings)."""
    times = each is parse_time_ms
    text = _checked(
        text, f"{'times' if times else 'numbers'} separated by commas", "20, 35" if times else "0.1, 0.7, 0.2"
    )
    entries = _entries(text)
    if times and entries:  # "0.05, 0.06 s": a unit written once, after the last entry, is every bare entry's
        last = _unit(*entries[-1])
        entries = [(f"{e} {last}" if last and _unit(e, il) == "" else e, il) for e, il in entries]
    out = []
    for i, (p, in_list) in enumerate(entries, 1):
        _refused(text, "a list", i, p, in_list)
        try:
            out.append(each(p) if each else _plain(p, in_list))
        except ValueError:
            raise ValueError(
                f"couldn't read {quote(text)} as a list: entry {i} ({quote(p)}) is not "
                f"{'a time' if times else 'a number'}; "
                f"try {quote('20, 35' if each else '0.1, 0.7, 0.2')}"
            ) from None
    if not out:
        raise ValueError(f"couldn't read {quote(text)} as a list of numbers")
    return tuple(out)


def _plain(p: str, in_list: bool) -> float:
    """One entry of a list of plain numbers; a percentage ("8.3%", shares typed as percent) is its
    fraction, 0.083."""
    number, unit = split_number_unit(p, in_list=in_list)
    if unit.lower() in ("%", "percent"):
        return number / 100
    if unit:
        raise ValueError("unit")
    return number


def _unit(entry: str, in_list: bool) -> str | None:
    """The unit written on ``entry`` ("" if none), None if it does not read."""
    try:
        return split_number_unit(entry, in_list=in_list)[1]
    except ValueError:
        return None
