"""Reading the number in a typed answer: "805,306,368", "3 × 2^28", "−1", "1e6", "10^9".

The unit-specific readers (bytes, times, percentages, counts) are in ``core.practice.answers``; this module
is what they share: turning typographic forms into ASCII (``typography``, ``normalize``), the number part of an
answer read by the one rule below (``split_number_unit``: ``read_number`` for a plain number, ``pint`` and never
Python's ``eval`` for an expression), quoting typed text in messages (``quote``) and re-spelling the student's own
amount for a hint (``guess``, ``spell``, ``amounts``: never a different amount).
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from decimal import Decimal

PLAIN_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_NUMBER = re.compile(r"^(?P<num>[-+]?[0-9.(][-+*/^()0-9.eE ]*?)\s*(?P<unit>[A-Za-zµμ%×][A-Za-zµμ%/ -]*)?$")
BEYOND_FLOAT = "is beyond the largest number the computer can store (±1.8 × 10³⁰⁸)"


class TooLarge(ValueError):
    """A typed number (or expression: ``10^309``, ``1e200 * 1e200``) past the largest float."""


def quote(text: str, limit: int = 40) -> str:
    """``text`` as a Markdown code span, cut to ``limit`` characters, so it shows literally
    (a backtick inside cannot end the span: the fence is one backtick longer than any run)."""
    # Control and invisible format characters (a zero-width space, NUL) would hide in the message or
    # break the line: each is shown as its code point, [U+200B], as the ruler's messages do.
    text = "".join(
        ch if ch.isprintable() or ch in "\u200d\ufe0f" else (f"[U+{ord(ch):04X}]" if ch not in "\n\r\t" else " ")
        for ch in str(text)
    )
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    if not text:
        return "(empty)"  # an empty code span is not one: it would show two backticks
    fence = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


@functools.lru_cache(maxsize=1)
def ureg():
    """One shared pint registry (loading it takes ~0.7 s; it is only read afterwards)."""
    import pint

    return pint.UnitRegistry()


@functools.lru_cache(maxsize=256)
def unit_of(name: str):
    """pint's unit for a name (cached: the same few units are typed all day)."""
    return ureg().parse_units(name)


# The minus sign, en dash, figure dash, small and fullwidth hyphen-minus: all typed for "minus".
MINUS_SIGNS = ("−", "–", "‒", "﹣", "－")


def ascii_digits(text: str) -> str:
    """Decimal digits of any script as 0-9 ("١٠٠", "１００" → "100"); every other character kept."""
    return "".join(str(unicodedata.decimal(c)) if c.isdecimal() and not c.isascii() else c for c in str(text))


def normalize(text: str) -> str:
    """Typographic forms to ASCII and thousands separators out: "805,306,368 B" → "805306368 B",
    "−1" → "-1", "3 × 2^28" → "3 * 2^28". A comma not followed by exactly three digits is kept
    (so "1,5 GiB" is not 15 GiB). For finding numbers in a text; a typed amount is read by
    ``split_number_unit`` / ``read_number``."""
    s = typography(text)
    # 805,306,368 · 805_306_368 · 805 306 368, but not "0,055": a decimal comma, not 55.
    s = re.sub(r"(?<=\d)(?<!(?<![\d.])0)[,_ ](?=\d{3}(?!\d))", "", s)
    s = re.sub(r"(?<=\d)(?<!(?<![\d.])0)[,_ ](?=\d{3}(?!\d))", "", s)  # a second pass for runs of groups
    return s


def typography(text: str) -> str:
    """Typographic forms to ASCII, separators kept: digits of any script as 0-9, dashes typed for minus as "-",
    no-break and narrow spaces as " ", "·" and "×" between numbers as "*", a closing full stop dropped."""
    s = str(text).strip()
    s = ascii_digits(s)  # ١٠٠, １００
    for a, b in (*((m, "-") for m in MINUS_SIGNS), ("\u00a0", " "), ("\u202f", " "), ("\u2009", " "), ("·", "*")):
        s = s.replace(a, b)
    s = re.sub(r"(?<=[A-Za-z%µμ])\.$", "", s)  # "100 ms." ends a sentence
    s = re.sub(r"(\d\.\d+)\.$", r"\1", s)  # and so does "0.125."
    # 3 × 2^28, 3x2^28; but not "0x300", which is hexadecimal (768), not 0 × 300: left unreadable.
    s = re.sub(r"(?<=\d)(?!(?<=(?<![\d.])0)[xX][0-9a-fA-F])\s*[×x]\s*(?=\d)", " * ", s)
    return s


def _number(expr: str) -> float:
    """Evaluate a plain-number expression ("805306368", "0.75", "3*2**28", "1e6", "10^9").

    pint parses it (no Python eval). At most one power, with an exponent of at most three
    digits, so a typed "9^9^9" cannot stall the server (pint raises a whole number to a power
    exactly: 9^999 has 954 digits, 9^99999 would take seconds). "10^400" is ``TooLarge``, as
    "1e400" is (a hint "try `10`" would mislead), and so is a number past 1 raised to a longer
    positive power."""
    if PLAIN_NUMBER.fullmatch(expr):  # the common case, without the expression parser
        value = float(expr)
        if not math.isfinite(value):
            raise TooLarge(expr)
        return value
    # pint's tokenizer misreads a whole number with leading zeros ("10^05" came out 5, "2*05" 0):
    # drop them first ("0.5" and "100" are untouched).
    expr = re.sub(r"(?<![\d.])0+(?=\d)", "", expr)
    powers = re.findall(r"(?:\*\*|\^)\s*\(?\s*([-+]?\d+(?:\.\d*)?)", expr)
    if len(re.findall(r"\*\*|\^", expr)) > 1:
        raise ValueError("too many powers")
    if any(len(p.lstrip("+-").split(".")[0]) > 3 for p in powers):
        power = re.fullmatch(r"([-+]?\d*\.?\d+)\s*(?:\*\*|\^)\s*\(?\s*(\+?\d+)\s*\)?", expr)
        if power and abs(float(power[1])) > 1:
            raise TooLarge(expr)  # a number past 1 raised to a power of 1,000 or more
        raise ValueError("a power of at most three digits")
    if re.search(r"\d\s+[\d.]", expr):  # "50 100": two numbers, not one (pint would multiply them)
        raise ValueError("two numbers")
    if re.search(r"\.\d*\.", expr):  # "1.610.612.736": dots as thousands separators, not 1.61
        raise ValueError("two decimal points")
    value = ureg().parse_expression(expr)
    if hasattr(value, "units"):
        if not value.dimensionless or value.units != ureg().dimensionless:
            raise ValueError("not a plain number")
        value = value.magnitude
    value = float(value)
    if not math.isfinite(value):
        raise TooLarge(expr)
    return value


def split_number_unit(text: str, *, in_list: bool = False) -> tuple[float, str]:
    """(number, unit text) from one answer such as "0.75 GiB", "8’192 MiB", "1.234,5 MB" or "3*2^28 B"; unit
    "" if none. A plain number is read by ``read_number`` (the one rule: thousands separators, decimal commas,
    other scripts' digits), with spaces grouping thousands too ("805 306 368": one answer, one number); an
    expression ("3 × 2^28") by pint, never Python's eval. ``in_list``: the text is one item of a list ("1,5"
    then has two readings and is refused naming both). Raises ``TooLarge`` past the largest float and
    ``ValueError`` (a short reason; ``Refused`` when the reader says why) if the number cannot be read."""
    m = _AMOUNT.match(typography(text))
    if not m:
        raise ValueError("no number")
    num, unit = m["num"].strip(), (m["unit"] or "").strip()
    if _EXPRESSION.search(num):
        try:
            return _number(normalize(num)), unit
        except (TooLarge, OverflowError):
            raise TooLarge(f"{quote(num)} {BEYOND_FLOAT}") from None
        except Exception as err:  # pint raises many kinds (syntax, undefined names, zero division …)
            raise ValueError(str(err) or "no number") from None
    return _plain_amount(num, in_list), unit


# A multiplier typed apart from its unit, or with no unit: "1.5k B", "2M B", "4G B", "1Ki B", "2M", "1.5 k". SI
# prefixes are powers of 1,000 and IEC ones of 1,024 (IEC 80000-13: Ki, Mi, Gi, Ti). Upper-case "K" is a thousand
# in a count ("10K requests"); before a byte unit a reader refuses it as ambiguous (Windows' 1,024 or SI's 1,000?).
# Joined to the unit ("1.5 kB", "2 MiB") a prefix is the unit's own, read by pint.
PREFIXES = {"k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
            "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}  # fmt: skip
_PREFIX = re.compile(r"(Ki|Mi|Gi|Ti|k|K|M|G|T)(?:\s+(\S.*))?")


def split_prefix(unit: str) -> tuple[str | None, str]:
    """A multiplier written apart from the unit, and the unit after it: "k B" → ("k", "B"), "M" → ("M", ""),
    "Ki B" → ("Ki", "B"); (None, ``unit``) for anything else ("kB", "MiB", "ms" are units of their own)."""
    m = _PREFIX.fullmatch(unit.strip())
    return (m[1], (m[2] or "").strip()) if m else (None, unit)


def prefixed_amount(text: str, *, in_list: bool = False) -> tuple[float, str, str | None, float]:
    """``split_number_unit`` with a multiplier written apart from the unit read into the number (``PREFIXES``):
    "1.5k B" → (1500.0, "B", "k", 1.5), "2M" → (2000000.0, "", "M", 2.0), "1Ki B" → (1024.0, "B", "Ki", 1.0),
    "768 MiB" → (768.0, "MiB", None, 768.0): the amount, the unit left, the prefix (None if none) and the number as
    typed. Raises as ``split_number_unit`` does, and ``TooLarge`` when the product passes the largest float."""
    number, unit = split_number_unit(text, in_list=in_list)
    prefix, rest = split_prefix(unit)
    if prefix is None:
        return number, unit, None, number
    value = number * PREFIXES[prefix]
    if not math.isfinite(value):
        raise TooLarge(f"{quote(text)} {BEYOND_FLOAT}")
    return value, rest, prefix, number


class Refused(ValueError):
    """A typed number the one reader refuses, with its reason ("`1,2.5` mixes “,” and “.” …", or both
    readings of an ambiguous text): the message is meant to be shown."""


# The number part of an answer: digits with their separators, or an expression; then a unit of letters.
_AMOUNT = re.compile(
    r"^(?P<num>[-+]?[0-9.(][-+*/^()0-9.,eE '’_\u00a0\u202f\u2009]*?)\s*(?P<unit>[A-Za-zµμ%×][A-Za-zµμ%/ -]*)?$"
)
_EXPRESSION = re.compile(r"[*/^()]|(?<![eE])(?<=.)[-+]")


def _plain_amount(num: str, in_list: bool) -> float:
    """A plain typed number ("8 192", "8,192", "1.234,5") as a float, by ``read_number``."""
    num = num[:-1] if num.endswith(".") and num[-2:-1].isdigit() else num  # "1,000,000." ends a sentence
    if " " in num:  # "805 306 368": spaces group thousands in one answer; "50 10" is two numbers
        if not _grouped(num.split(".")[0].split(",")[0], " "):
            raise Refused(f"{quote(num)} is two numbers, or a space that does not group thousands by three")
        num = num.replace(" ", "")
    try:
        value = float(read_number(num, in_list=in_list)[0])
    except ValueError as err:
        raise Refused(str(err)) from None
    if math.isnan(value):
        raise ValueError("no number")
    if not math.isfinite(value):
        raise TooLarge(f"{quote(num)} {BEYOND_FLOAT}")
    return value


def spell(value) -> str:
    """A number spelled so that it reads back as exactly itself: 805306368, 1234.5, 1e-07 (never rounded to
    a different amount, as "%g" would: 1234.567 is not 1234.57)."""
    if isinstance(value, Decimal):
        out = format(value.normalize(), "f") if abs(value) < 10**15 else str(value.normalize())
        return "0" if out in ("-0", "") else out
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


_TOKEN = re.compile(r"[-+]?\d(?:[\d.,'’_]|\s(?=\d{3}(?!\d)))*(?:[eE][-+]?\d+)?")


def amounts(text: str) -> list[str]:
    """Every number in a text that the one reader reads, each spelled by ``spell`` ("1.234,5 MB" → ["1234.5"];
    "8’192 MiB" → ["8192"]); a number the reader refuses (ambiguous, malformed) is left out."""
    out = []
    for token in _TOKEN.findall(typography(text))[:8]:
        try:
            out.append(spell(Decimal(spell(_plain_amount(token.strip().rstrip(".,"), False)))))
        except ValueError:
            continue
    return out


def guess(text: str) -> str | None:
    """The student's own amount, re-spelled so a box reads it (digits 0-9: "٣" suggests 3; a decimal comma as a
    point: "1.234,5 MB" suggests 1234.5, never 1.234; a hexadecimal "0x300" its value, 768; a multiplier apart from
    the unit with it: "2M foo" suggests 2000000, never 2): the number part of
    the answer if it reads, else the first number found anywhere ("<b>100</b> ms": 100). None when no typed
    number can be read (a refused "1,2.5"): a hint then offers no number rather than a different one."""
    plain = typography(text)
    if hexadecimal := re.match(r"\s*0[xX]([0-9a-fA-F]+)", plain):  # "0x300" suggests its value, 768
        return str(int(hexadecimal.group(1)[:12], 16))
    try:
        return spell(prefixed_amount(text)[0])  # "2M foo" suggests 2000000, never 2
    except Refused:
        return None
    except ValueError:
        pass
    tokens = _TOKEN.findall(plain)
    if not tokens:
        return None
    try:
        return spell(_plain_amount(tokens[0].strip().rstrip(".,"), False))
    except ValueError:
        return None


# ---- the one reader of typed numbers and lists (KV lengths, budgets, times, the ruler, Practice) ------------
#
# The rule, everywhere a person types a number:
# - Digits of any script read as 0-9 ("٤٠٩٦", "４０９６"); "−" and other dashes typed for minus read as "-".
# - Thousands: a comma, apostrophe ("8’192", "8'192"), underscore or thin/no-break space directly between digits
#   groups them when every group after the first has exactly three digits: "8,192" is 8192 in every box. Commas
#   in the Indian grouping (groups of two, then three: "80,53,06,368") group them too.
#   Dots group thousands only when there are two or more ("1.234.567") or a decimal comma follows ("1.234,5").
# - Decimals: a dot ("0.75"); a comma when it cannot be a thousands separator ("0,75", "1.234,5").
# - Lists: items are separated by ";", by a comma followed by a space ("150, 190") or by spaces ("8 10").
#   A comma between two digits separates items only when the text cannot be one number ("0.34,0.5"); when it
#   groups thousands it is one number ("150,190" is 150190, and the list reader says so); "1,5" in a list is
#   refused with both readings (1.5, or 1 and 5). In a list of whole numbers "8.192" is refused with both
#   readings (8.192 is not whole; 8192 if the dot groups thousands). Other commas separate ("0.34,-0.12").

_GROUP_MARKS = ",'’_\u202f\u00a0\u2009"
_LIST_SPLIT = re.compile(r"\s*;\s*|,\s+|\s+|(?<!\d),|,(?!\d)")


def _plain(text: str) -> str:
    s = ascii_digits(str(text)).strip()
    for m in MINUS_SIGNS:
        s = s.replace(m, "-")
    return s


def _grouped(digits: str, mark: str) -> bool:
    """``digits`` split at ``mark`` is a thousands grouping: 1-3 digits, then groups of exactly 3; or, with
    commas, the Indian (en-IN) grouping of lakhs and crores: 1-2 digits, groups of 2, a last group of 3
    ("80,53,06,368" is 805,306,368)."""
    first, *rest = digits.split(mark)
    first = first.lstrip("+-")
    # "0,055" is a decimal comma (0.055), never 55: a grouped number does not start with 0.
    if not (rest and first.isdigit() and first[0] != "0" and all(g.isdigit() for g in rest)):
        return False
    western = len(first) <= 3 and all(len(g) == 3 for g in rest)
    indian = mark == "," and len(first) <= 2 and len(rest[-1]) == 3 and all(len(g) == 2 for g in rest[:-1])
    return western or indian


def read_number(text: str, *, in_list: bool = False, whole: bool = False) -> tuple[Decimal, str]:
    """One typed number as an exact ``Decimal`` and a note ("" or how a separator was read), by the rule
    above; ``in_list``: the text is one item of a list; ``whole``: only whole numbers make sense here.
    Raises ``ValueError`` saying why, and naming both readings where the text has two."""
    s = _plain(text)
    for mark in "'’_\u202f\u00a0\u2009":
        if mark in s:
            if not _grouped(s.split(".")[0].split(",")[0] if mark != "," else s, mark):
                raise ValueError(f"{quote(text)}: a {mark!r} between digits must group them by three (8’192)")
            s = s.replace(mark, "")
    note = ""
    if "," in s and "." in s:
        dec, grp = (",", ".") if s.rfind(",") > s.rfind(".") else (".", ",")
        int_part = s.rsplit(dec, 1)[0]
        if not _grouped(int_part, grp):
            raise ValueError(f"{quote(text)} mixes “,” and “.” without grouping thousands by three")
        s = int_part.replace(grp, "") + "." + s.rsplit(dec, 1)[1]
    elif "," in s:
        if _grouped(s.split("e")[0].split("E")[0], ","):
            value = s.replace(",", "")
            if in_list:
                note = f"{quote(text)} reads as one number, {value}: to separate items write “;” or “, ”"
            s = value
        elif s.count(",") == 1 and in_list:
            a, b = s.split(",")
            raise ValueError(
                f"{quote(text)} reads as {a}.{b} (a decimal comma) or as two items, {a} and {b}: write {a}.{b}, "
                "or separate items with “;” or “, ”"
            )
        elif s.count(",") == 1:
            s = s.replace(",", ".")  # a decimal comma: "0,75"
        else:
            raise ValueError(f"{quote(text)}: commas between digits must group thousands by three (8,192)")
    elif s.count(".") > 1:
        if not _grouped(s, "."):
            raise ValueError(f"{quote(text)} has two decimal points")
        s = s.replace(".", "")
    elif whole and re.fullmatch(r"[-+]?\d{1,3}\.\d{3}", s):
        raise ValueError(
            f"{quote(text)} reads as {s} (not a whole number) or, with the dot grouping thousands, as "
            f"{s.replace('.', '')}: write {s.replace('.', '')} or {int(s.replace('.', '')):,}"
        )
    if not (PLAIN_NUMBER.fullmatch(s) or re.fullmatch(r"[-+]?(inf|infinity|nan)", s, re.IGNORECASE)):
        raise ValueError(f"{quote(text)} is not a number")
    return Decimal(s), note  # "inf" and "nan" too: the callers say why they cannot be used


def split_items(text: str) -> list[str]:
    """A typed list's items, split at ";", at a comma followed by a space or not between two digits, at
    spaces, and at a comma between digits where the item cannot be one number ("0.34,0.5"; the rule above)."""
    out = []
    for part in (p for p in _LIST_SPLIT.split(str(text or "").strip()) if p):
        pieces = part.split(",")
        if len(pieces) > 1 and _unreadable(part) and not any(_unreadable(p) for p in pieces):
            out.extend(pieces)
        else:
            out.append(part)
    return out


def _unreadable(part: str) -> bool:
    try:
        read_number(part, in_list=True)
    except ValueError as err:
        return "reads as" not in str(err)  # two readings is not "unreadable": it is refused with both
    return False


def space_grouping_notes(text: str) -> list[str]:
    """Notes for "8 192" in a list: read as two items (8 and 192), which a person may have meant as 8,192."""
    out = []
    for m in re.finditer(r"(?<![\d.,])(\d{1,3}) (\d{3})(?![\d.,])", ascii_digits(str(text or ""))):
        out.append(
            f"“{m[1]} {m[2]}” reads as two items, {m[1]} and {m[2]}; for {int(m[1] + m[2]):,} write {m[1]}{m[2]} "
            f"or {m[1]},{m[2]}"
        )
    return out
