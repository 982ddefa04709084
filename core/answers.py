"""Reading typed answers: bytes, times, percentages, counts and lists of numbers.

Units go through ``pint`` (its registry knows kB = 1,000 B, KiB = 1,024 B, MB = 10⁶ B,
MiB = 2²⁰ B, B = byte). What pint cannot settle for a classroom is handled here, before
it: thousands separators (``805,306,368``), the typographic minus (``−1``), ``×``, and the
ambiguous ``KB`` (Windows' 1,024 or SI's 1,000?), which is refused with both spellings.

Every reader raises ``ValueError`` with a message meant for the student, quoting what they
typed as a Markdown code span (``quote``), e.g. "couldn't read `12 foo` as bytes: try
`12 KiB` or `12288`". Nothing else escapes: no traceback reaches a page.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata

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
# Looked up in lower case: in a time box "S" is seconds (not siemens) and "MS" or "Ms" milliseconds.
_TIME_ALIASES = {"msec": "ms", "millisecond": "ms", "milliseconds": "ms", "sec": "s", "secs": "s", "seconds": "s"}
_TIME_ALIASES |= {u: u for u in ("ms", "s", "us", "µs", "μs", "min")}
_PERCENT = {"%", "percent", "per cent", "pct"}
_RATIO = {"x", "×", "times", "fold", "-fold"}
_PLAIN = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
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
def _units(name: str):
    """pint's unit for a name (cached: the same few units are typed all day)."""
    return ureg().parse_units(name)


# The minus sign, en dash, figure dash, small and fullwidth hyphen-minus: all typed for "minus".
MINUS_SIGNS = ("−", "–", "‒", "﹣", "－")


def normalize(text: str) -> str:
    """Typographic forms to ASCII and thousands separators out: "805,306,368 B" → "805306368 B",
    "−1" → "-1", "3 × 2^28" → "3 * 2^28". A comma not followed by exactly three digits is kept
    (so "1,5 GiB" stays unreadable instead of becoming 15 GiB)."""
    s = str(text).strip()
    s = "".join(str(unicodedata.decimal(c)) if c.isdecimal() and not c.isascii() else c for c in s)  # ١٠٠, １００
    for a, b in (*((m, "-") for m in MINUS_SIGNS), ("\u00a0", " "), ("\u202f", " "), ("\u2009", " "), ("·", "*")):
        s = s.replace(a, b)
    s = re.sub(r"(?<=[A-Za-z%µμ])\.$", "", s)  # "100 ms." ends a sentence
    s = re.sub(r"(\d\.\d+)\.$", r"\1", s)  # and so does "0.125."
    # 3 × 2^28, 3x2^28; but not "0x300", which is hexadecimal (768), not 0 × 300: left unreadable.
    s = re.sub(r"(?<=\d)(?!(?<=(?<![\d.])0)[xX][0-9a-fA-F])\s*[×x]\s*(?=\d)", " * ", s)
    # 805,306,368 · 805_306_368 · 805 306 368, but not "0,055": a decimal comma (left unreadable), not 55.
    s = re.sub(r"(?<=\d)(?<!(?<![\d.])0)[,_ ](?=\d{3}(?!\d))", "", s)
    s = re.sub(r"(?<=\d)(?<!(?<![\d.])0)[,_ ](?=\d{3}(?!\d))", "", s)  # a second pass for runs of groups
    return s


def _number(expr: str) -> float:
    """Evaluate a plain-number expression ("805306368", "0.75", "3*2**28", "1e6", "10^9").

    pint parses it (no Python eval). At most one power, with an exponent of at most two
    digits, so a typed "9^9^9" cannot stall the server."""
    if _PLAIN.fullmatch(expr):  # the common case, without the expression parser
        value = float(expr)
        if not math.isfinite(value):
            raise TooLarge(expr)
        return value
    powers = re.findall(r"(?:\*\*|\^)\s*\(?\s*([-+]?\d+(?:\.\d*)?)", expr)
    if len(re.findall(r"\*\*|\^", expr)) > 1 or any(len(p.lstrip("+-").split(".")[0]) > 2 for p in powers):
        raise ValueError("too many powers")
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


def split_number_unit(text: str) -> tuple[float, str]:
    """(number, unit text) from one answer such as "0.75 GiB" or "3*2^28 B"; unit "" if none.
    Raises ``ValueError`` (a short reason) if the number part cannot be evaluated."""
    m = _NUMBER.match(normalize(text))
    if not m:
        raise ValueError("no number")
    try:
        return _number(m["num"].strip()), (m["unit"] or "").strip()
    except (TooLarge, OverflowError):
        raise TooLarge(f"{quote(m['num'].strip())} {BEYOND_FLOAT}") from None
    except Exception as err:  # pint raises many kinds (syntax, undefined names, zero division …)
        raise ValueError(str(err) or "no number") from None


def _checked(text: str, what: str, example: str) -> str:
    """``text`` as a string, or ``ValueError`` naming what to type: nothing typed, more than
    ``MAX_CHARS`` characters, or a number past the largest a float holds (``1e309`` would
    otherwise be "unreadable" with a hint built from its leading 1)."""
    if text is None or not str(text).strip():
        raise ValueError(f"type {what} first, e.g. {quote(example)}")
    if len(str(text).strip()) > MAX_CHARS:
        raise ValueError(f"that is {len(str(text).strip()):,} characters; type {what} here, e.g. {quote(example)}")
    for number in _PLAIN.finditer(normalize(text)):
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
        number, unit = split_number_unit(text)
    except TooLarge:
        raise
    except ValueError:
        if re.search(r"\d,\d", normalize(text)):  # a decimal comma ("0,5 GiB"): the same with a point
            unit = _typed_byte_unit(text) or "B"
            raise ValueError(f"couldn't read {quote(text)} as bytes: try {quote(f'{_guess(text)} {unit}')}") from None
        raise ValueError(f"couldn't read {quote(text)} as bytes: {BYTES_EXAMPLES}") from None
    shown = f"{number:.0f}" if number.is_integer() and abs(number) < 1e15 else f"{number:g}"  # 805306368, not 8.05e+08
    typed = _typed_byte_unit(text) or "KiB"  # the hint keeps a unit the student wrote ("768 MiB/s": MiB)
    per_unit = ureg().Quantity(1, typed).to("byte").magnitude
    hint = (
        f"try {quote(f'{shown} {typed}')} or {quote(f'{number * per_unit:.0f}')}"
        if default_unit == "B"  # a bare number here is bytes
        else f"try {quote(f'{shown} {default_unit}')} or {quote(shown)} (a bare number is in {default_unit})"
    )
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
        u = _units(name)
        # One unit, to the first power, whose base (prefix stripped) is byte or bit: pint 0.25
        # makes information dimensionless, so the dimension alone cannot tell bytes from %.
        ((unit_name, power),) = u._units.items()
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
        number, unit = split_number_unit(text)
        u = _units(_TIME_ALIASES.get(unit.lower(), unit) if unit else default_unit)
        if u.dimensionality != ureg().second.dimensionality:
            raise ValueError("not a time")
        return float((number * u).to("millisecond").magnitude)
    except TooLarge:
        raise
    except Exception:
        raise ValueError(f"couldn't read {quote(text)} as a time: {_time_hint(text)}") from None


def _time_hint(text: str) -> str:
    """ "try `0.21 s` or `210 ms`": the leading number in the time unit the student typed (ms if none)."""
    n = _guess(text)
    words = (_TIME_ALIASES.get(w.lower(), w) for w in re.findall(r"[A-Za-zµμ]+", normalize(text)))
    unit = next((w for w in words if w in ("ms", "s", "µs", "us", "min")), "ms")
    ms = ureg().Quantity(float(n), unit).to("ms").magnitude
    other = f"{ms / 1000:g} s" if unit == "ms" else f"{ms:g} ms"
    return f"try {quote(f'{n} {unit}')} or {quote(other)}"


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
    except ValueError:
        number, unit = None, None
    if number is None or (unit and unit.lower() not in _PERCENT):
        raise ValueError(f"couldn't read {quote(text)} as a percentage: try {quote(f'{_guess(text)} %')}")
    return number


def parse_number(text: str, units: tuple[str, ...] = ()) -> float:
    """A plain number or count: "1000000", "1,000,000", "1e6", "10^6", "100x", "100 ×"; a unit
    in ``units`` may follow (e.g. "25 tokens/s"). Raises ``ValueError`` for any other unit or
    no number."""
    text = _checked(text, "a number", "42").replace("-fold", " fold")  # "100-fold": not 100 minus a unit
    try:
        number, unit = split_number_unit(text)
    except TooLarge:
        raise
    except ValueError:
        number, unit = None, None
    allowed = _RATIO | {u.lower() for u in units}
    if number is None or (unit and unit.lower() not in allowed):
        raise ValueError(f"couldn't read {quote(text)} as a number: try {quote(_guess(text))} or {quote('1,000,000')}")
    return number


def _guess(text: str) -> str:
    """The first number in what was typed, in the digits 0-9 (for a suggestion the readers accept:
    "٣" suggests "3 ms", not "٣ ms"; a hexadecimal "0x300" its decimal value, 768), or 12."""
    ascii_digits = re.sub(r"(?<=\d),(?=\d)", ".", normalize(text))  # a decimal comma left by normalize: "0,1" → 0.1
    if hexadecimal := re.match(r"\s*0[xX]([0-9a-fA-F]+)", ascii_digits):  # "0x300" suggests its value, 768
        return str(int(hexadecimal.group(1)[:12], 16))
    m = re.search(r"[-+]?[0-9]+(?:\.[0-9]+)?", ascii_digits)  # "<b>100</b> ms", "~100 ms": 100
    return m.group(0) if m else "12"
