"""Reading typed answers: bytes, times, percentages, counts and lists of numbers.

Units go through ``pint`` (its registry knows kB = 1,000 B, KiB = 1,024 B, MB = 10⁶ B,
MiB = 2²⁰ B, B = byte). The number part is read by ``core.typed_numbers`` (the one reader of every box:
thousands separators ``805,306,368`` / ``8’192``, decimal commas ``0,75``, other scripts' digits, ``−1``, ``×``);
what pint cannot settle for a classroom is handled here: the ambiguous ``KB`` (Windows' 1,024 or SI's 1,000?),
refused with both spellings, and bits written ``Mb``.

Every reader raises ``ValueError`` with a message meant for the student, quoting what they
typed as a Markdown code span (``quote``), e.g. "couldn't read `12 foo` as bytes: try
`12 KiB` or `12288`". Nothing else escapes: no traceback reaches a page. The number part of an
answer is read by ``core.typed_numbers``.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

from core.typed_numbers import (
    BEYOND_FLOAT,
    PLAIN_NUMBER,
    Refused,
    TooLarge,
    guess,
    normalize,
    prefixed_amount,
    quote,
    spell,
    split_number_unit,
    unit_of,
    ureg,
)

MAX_CHARS = 120  # an answer, not an essay; also bounds what pint is asked to evaluate
# What an answer box takes: more than MAX_CHARS, so an over-long paste arrives and gets a message (a box
# limited to MAX_CHARS dropped it without a word), still bounded for the server.
MAX_TYPED = 10_000
BYTES_EXAMPLES = "try `512 MiB` or `536870912`"

# Lower-case spellings students type for byte units, mapped to pint's names. "kb"/"KB" is left out
# on purpose: it is ambiguous, and the message asks for kB or KiB instead.
_BYTE_ALIASES = {
    "b": "B",
    "byte": "B",
    "bytes": "B",
    "kib": "KiB",
    "mib": "MiB",
    "gib": "GiB",
    "tib": "TiB",
    "mb": "MB",
    "gb": "GB",
    "tb": "TB",
    "kilobyte": "kB",
    "kilobytes": "kB",
    "megabyte": "MB",
    "megabytes": "MB",
    "gigabyte": "GB",
    "gigabytes": "GB",
    "terabyte": "TB",
    "terabytes": "TB",
    "kibibyte": "KiB",
    "kibibytes": "KiB",
    "mebibyte": "MiB",
    "mebibytes": "MiB",
    "gibibyte": "GiB",
    "gibibytes": "GiB",
}
_BYTE_NAMES = ("KiB", "MiB", "GiB", "TiB", "kB", "MB", "GB", "TB", "B")  # longest first: "MiByte" is MiB
_PREFIX_BYTES = {
    "k": "kB",
    "K": "kB",
    "M": "MB",
    "G": "GB",
    "T": "TB",
    "Ki": "KiB",
    "Mi": "MiB",
    "Gi": "GiB",
    "Ti": "TiB",
}
# Looked up in lower case: in a time box "S" is seconds (not siemens) and "MS" or "Ms" milliseconds.
_TIME_ALIASES = {"msec": "ms", "millisecond": "ms", "milliseconds": "ms", "sec": "s", "secs": "s", "seconds": "s"}
_TIME_ALIASES |= {u: u for u in ("ms", "s", "us", "µs", "μs", "min")}
_PERCENT = {"%", "percent", "per cent", "pct"}
_RATIO = {"x", "×", "times", "fold", "-fold"}
# A rate box says "tokens/s": its other spellings ("25 tok/s", "25/s", "25 tokens per second") are the
# same unit, not an unknown one.
_PER_SECOND = {"tokens/s", "token/s", "tok/s", "t/s", "tokens/sec", "tok/sec", "/sec", "tps"} | {
    f"{word}per {s}" for word in ("", "tokens ", "token ", "tok ") for s in ("s", "sec", "second")
}
# Counts written with a word: "100 million" (not "M" or "B": those are units of bytes here).
_SCALE_WORDS = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}


def _checked(text: str, what: str, example: str) -> str:
    """``text`` as a string, or ``ValueError`` naming what to type: nothing typed, more than
    ``MAX_CHARS`` characters, or a number past the largest a float holds (``1e309`` would
    otherwise be "unreadable" with a hint built from its leading 1)."""
    if text is None or not str(text).strip():
        raise ValueError(f"type {what} first, e.g. {quote(example)}")
    if len(str(text).strip()) > MAX_CHARS:
        raise ValueError(f"that is {len(str(text).strip()):,} characters; type {what} here, e.g. {quote(example)}")
    for number in PLAIN_NUMBER.finditer(normalize(text)):
        if math.isinf(float(number.group())):
            raise ValueError(f"{quote(number.group())} {BEYOND_FLOAT}; type {what}, e.g. {quote(example)}")
    return str(text)


def parse_bytes(text: str, default_unit: str = "B") -> float:
    """Bytes from "768 MiB", "805306368", "805,306,368 B", "0.75 GiB", "805.3 MB", "3 × 2^28 B".

    A bare number is read in ``default_unit`` (bytes unless the question asks for e.g. MiB).
    Binary prefixes are powers of 1,024, decimal ones of 1,000 (pint's registry); ``b``-less
    bit units (``Mbit``) are converted at 8 bits per byte. Raises ``ValueError`` naming the
    typed text and two notations that would work."""
    text = _checked(text, "an amount of memory", f"512 {default_unit}" if default_unit != "B" else "512 MiB")
    if "=" in text:  # the handout's whole answer pasted: "768 MiB = 805,306,368 bytes"
        return _equal_sides(text, default_unit)
    try:
        # "1.5k B", "2M B", "1Ki B": a multiplier apart from the unit is read into the number (1,500; 2,000,000;
        # 1,024), never dropped; "1.5k" alone is 1,500 of the default unit.
        number, unit, prefix, as_typed = prefixed_amount(text)
    except TooLarge:
        raise
    except Refused as err:  # the reader says why ("1,2.5" mixes separators) and offers no other amount
        raise ValueError(f"couldn't read {quote(text)} as bytes: {err}; {BYTES_EXAMPLES}") from None
    except ValueError:
        raise ValueError(f"couldn't read {quote(text)} as bytes: {BYTES_EXAMPLES}") from None
    if prefix == "K" and (not unit or _BYTE_ALIASES.get(unit.lower(), unit) == "B"):
        k = spell(as_typed)
        raise ValueError(
            f"{quote(text)}: a capital K is ambiguous for bytes: write {quote(f'{k} kB')} (1,000 bytes each) "
            f"or {quote(f'{k} KiB')} (1,024 bytes each)"
        )
    shown = spell(number)  # the student's own amount, exactly: 805306368, 1234.5 (never rounded to another)
    if prefix is not None and _typed_byte_unit(text) is None and default_unit == "B":  # "2M foo": 2 MB, not 2 KiB
        hint = f"try {quote(f'{spell(as_typed)} {_PREFIX_BYTES[prefix]}')} or {quote(shown)}"
    elif default_unit == "B":  # a bare number here is bytes
        typed = _typed_byte_unit(text) or "KiB"  # the hint keeps a unit the student wrote ("768 MiB/s": MiB)
        per_unit = ureg().Quantity(1, typed).to("byte").magnitude
        hint = f"try {quote(f'{shown} {typed}')} or {quote(spell(number * per_unit))}"
    else:
        hint = f"try {quote(f'{shown} {default_unit}')} or {quote(shown)} (a bare number is in {default_unit})"
    if unit.lower() in {"kb", "kbyte", "kbytes"} and unit != "kB":
        raise ValueError(
            f"{quote(unit)} is ambiguous: write {quote(f'{shown} kB')} (1,000 bytes each) "
            f"or {quote(f'{shown} KiB')} (1,024 bytes each)"
        )
    if unit == "b" or re.fullmatch(r"[KMGT]i?b", unit):  # IEC/IEEE: b is a bit ("Mib" mebibits), B a byte
        bits = f"{quote(unit)} is bits in the standard notation (b a bit, B a byte)"
        raise ValueError(f"{bits}: {_bits_hint(shown, unit)}")
    name = _BYTE_ALIASES.get(unit.lower(), unit) if unit else default_unit
    try:
        u = unit_of(name)
        # One unit, to the first power, whose base (prefix stripped) is byte or bit: pint 0.25
        # makes information dimensionless, so the dimension alone cannot tell bytes from %.
        ((unit_name, power),) = (1 * u).unit_items()
        is_info = power == 1 and ureg().parse_unit_name(unit_name)[0][1] in {"byte", "bit"}
    except Exception:
        is_info = False
    if not is_info:
        raise ValueError(f"couldn't read {quote(text)} as bytes: {hint}")
    n_bytes = float((number * u).to("byte").magnitude)
    if not math.isfinite(n_bytes):
        raise ValueError(f"{quote(text)} is more bytes than a float can hold: {BYTES_EXAMPLES}")
    return n_bytes


def _equal_sides(text: str, default_unit: str) -> float:
    """One amount written several ways ("805,306,368 bytes (768 MiB = 805.31 MB)"): its first side,
    when every side reads and they agree within 1 % (the conversions are rounded to 3–5 digits)."""
    sides = [side for side in re.split(r"[=()]", text) if side.strip()]
    if not sides:  # "=", "(=)": nothing to read
        raise ValueError(f"couldn't read {quote(text)} as bytes: {BYTES_EXAMPLES}")
    values = [parse_bytes(side, default_unit) for side in sides]
    if max(values) - min(values) > 0.01 * max(abs(v) for v in values):
        raise ValueError(f"the sides of {quote(text)} are different amounts: give one, e.g. {quote(sides[0].strip())}")
    return values[0]


def parse_time_ms(text: str, default_unit: str = "ms") -> float:
    """Milliseconds from "150", "150 ms", "0.15 s", "150000 µs". A bare number is in
    ``default_unit``. Raises ``ValueError`` naming the typed text and notations that work."""
    text = _checked(text, "a time", "120 ms")
    try:
        number, unit, _, _ = prefixed_amount(text)  # "1.5k ms" is 1,500 ms
        u = unit_of(_TIME_ALIASES.get(unit.lower(), unit) if unit else default_unit)
        if u.dimensionality != ureg().second.dimensionality:
            raise ValueError("not a time")
        return float((number * u).to("millisecond").magnitude)
    except TooLarge:
        raise
    except Refused as err:
        raise ValueError(f"couldn't read {quote(text)} as a time: {err}; try e.g. `120 ms` or `0.12 s`") from None
    except Exception:
        raise ValueError(f"couldn't read {quote(text)} as a time: {_time_hint(text)}") from None


def _time_hint(text: str) -> str:
    """ "try `0.21 s` or `210 ms`": the leading number in the time unit the student typed (ms if none)."""
    n = guess(text)
    if n is None:  # no amount of the student's to re-spell: no number rather than a different one
        return "try e.g. `120 ms` or `0.12 s`"
    words = (_TIME_ALIASES.get(w.lower(), w) for w in re.findall(r"[A-Za-zµμ]+", normalize(text)))
    unit = next((w for w in words if w in _MS_PER), "ms")
    ms = Decimal(n) * _MS_PER[unit]  # exact: 1234.567 ms is 1.234567 s, not 1.23457 s
    other = f"{spell(ms / 1000)} s" if unit == "ms" else f"{spell(ms)} ms"
    return f"try {quote(f'{n} {unit}')} or {quote(other)}"


_MS_PER = {"ms": Decimal(1), "s": Decimal(1000), "µs": Decimal("0.001"), "us": Decimal("0.001"), "min": Decimal(60000)}


def _bits_hint(shown: str, unit: str) -> str:
    """How to write ``shown`` ``unit`` (a bit unit: b, Kb, Mb, Mib …) as bytes, both ways a decimal
    prefix may have meant ("768 Mb" in a MiB box: 768 MiB, not only 768 MB), or as bits."""
    prefix = unit[:-1]
    if not prefix:
        forms = [f"{shown} B"]
    elif prefix.endswith("i"):
        forms = [f"{shown} {prefix}B"]
    else:
        forms = [f"{shown} {prefix}iB", f"{shown} {'k' if prefix == 'K' else prefix}B"]
    each = {f: ureg().Quantity(1, f.split()[1]).to("byte").magnitude for f in forms}
    named = [quote(f) if each[f] == 1 else f"{quote(f)} ({each[f]:,.0f} bytes each)" for f in forms]
    return f"for bytes write {' or '.join(named)}; for bits {quote(f'{shown} {prefix}bit')}"


def _typed_byte_unit(text: str) -> str | None:
    """The first byte unit written in ``text`` ("768 MiByte" → MiB), or None."""
    for word in re.findall(r"[A-Za-z]+", normalize(text)):
        name = _BYTE_ALIASES.get(word.lower(), word)
        if unit := next((u for u in _BYTE_NAMES if name.startswith(u)), None):
            return unit
    return None


def parse_percent(text: str) -> float:
    """A percentage from "4.35 %", "4.35%", "4.35 percent" or a bare "4.35" (the field says %).
    Returns percent (4.35, not 0.0435). Raises ``ValueError`` otherwise."""
    text = _checked(text, "a percentage", "2.5 %")
    try:
        number, unit = split_number_unit(text)
    except TooLarge:
        raise
    except Refused as err:
        raise ValueError(f"couldn't read {quote(text)} as a percentage: {err}; try e.g. `2.5 %`") from None
    except ValueError:
        number, unit = None, None
    if number is None or (unit and unit.lower() not in _PERCENT):
        own = guess(text)
        raise ValueError(f"couldn't read {quote(text)} as a percentage: try {quote(f'{own or 2.5} %')}")
    return number


def parse_number(text: str, units: tuple[str, ...] = ()) -> float:
    """A plain number or count: "1000000", "1,000,000", "1e6", "10^6", "100 million", "100x",
    "100 ×"; a unit in ``units`` may follow (e.g. "25 tokens/s", also as "25 tok/s", "25/s" or
    "25 tokens per second"). Raises ``ValueError`` for any other unit or no number."""
    text = _checked(text, "a number", "42").replace("-fold", " fold")  # "100-fold": not 100 minus a unit
    wanted = {u.lower() for u in units}
    if "tokens/s" in wanted:  # "25/s": a slash straight after the number read as a fraction
        text = re.sub(r"(?<=\d)\s*/\s*s(ec(ond)?)?\s*$", " per second", text)
    try:
        number, unit, _, _ = prefixed_amount(text)  # "2M" is 2,000,000; "1.5k tokens/s" 1,500
    except TooLarge:
        raise
    except Refused as err:
        raise ValueError(f"couldn't read {quote(text)} as a number: {err}; try e.g. {quote('1,000,000')}") from None
    except ValueError:
        number, unit = None, None
    unit = " ".join((unit or "").lower().replace(" / ", "/").split())
    if unit in _SCALE_WORDS and number is not None:
        number, unit = number * _SCALE_WORDS[unit], ""
    allowed = _RATIO | wanted
    if "tokens/s" in wanted:
        allowed |= _PER_SECOND
    if number is None or (unit and unit not in allowed):
        own = guess(text)
        raise ValueError(
            f"couldn't read {quote(text)} as a number: try {quote(own)} or {quote('1,000,000')}"
            if own
            else f"couldn't read {quote(text)} as a number: try e.g. {quote('1,000,000')}"
        )
    return number
