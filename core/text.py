"""Small text helpers shared by core and the pages: sentences, plurals, exact decimals, visible text.

No streamlit. Numbers that may be huge are formatted from exact integers or fractions, never
through a float (a float keeps ~16 significant digits: a 40-digit byte count would print a
wrong tail).
"""

from __future__ import annotations

import re
import unicodedata
from fractions import Fraction


def sentence(text) -> str:
    """``text`` as one sentence: first letter capitalised, ending with a full stop.

    "the prompt is empty" → "The prompt is empty."; text already ending in ".", "!", "?" or
    "…" keeps its ending. Messages in ``core`` are written lower-case without a stop so they
    can be embedded ("Prefill refused: …"); this turns one into a message on its own."""
    s = str(text).strip()
    if not s:
        return s
    s = s[0].upper() + s[1:]
    return s if s.endswith((".", "!", "?", "…")) else s + "."


_AUTOLINK = re.compile(r"(?i)https?\\:|ftp\\:|mailto\\:|www\\\.|\\@")


def markdown_literal(text) -> str:
    """``text`` for a markdown context (``st.markdown``, ``st.error``, ``st.table`` cells), shown
    literally: every ASCII punctuation character backslash-escaped (CommonMark's escapes), so
    ``**md**``, ``[l](x)``, ``<b>``, ``$x$`` and streamlit's ``:red[…]`` read as typed, and a bare
    address (``http://…``, ``www.…``, ``name@host``) is not made a link. For text that came from
    a user or a file (a GGUF header's strings)."""
    escaped = "".join("\\" + c if c.isascii() and not c.isalnum() and not c.isspace() else c for c in str(text))
    # Escapes do not stop GitHub-flavoured markdown from linking a bare address (http://…, www.…,
    # name@host): a word joiner (U+2060, invisible) between its letters does.
    # (before an escaped "@", not after its backslash: "\\" + U+2060 would show the backslash).
    return _AUTOLINK.sub(lambda m: _defuse(m.group(0)), escaped)


def _defuse(token: str) -> str:
    return "\u2060" + token if token.startswith("\\") else token[0] + "\u2060" + token[1:]


# Unicode's bidirectional controls (UAX #9: embeddings, overrides, isolates, marks): typed into a
# prompt, one of them reverses or reorders every character drawn after it on the same line.
BIDI_CONTROLS = {*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C}


def bidi_visible(text: str) -> str:
    """``text`` with each bidirectional control character shown as its code point (``[U+202E]``)
    instead of acting on the text drawn after it; everything else unchanged."""
    return "".join(f"[U+{ord(c):04X}]" if ord(c) in BIDI_CONTROLS else c for c in text)


def plural(n: int, singular: str, plural_form: str | None = None) -> str:
    """``"1 value"``, ``"2 values"``, ``"1,024 bytes"``: the count with thousands separators and
    the right form of the noun (``plural_form`` defaults to ``singular + "s"``)."""
    word = singular if n == 1 else (plural_form or singular + "s")
    return f"{n:,} {word}"


def exact_decimal(value: int | Fraction, digits: int = 2) -> str:
    """``value`` with ``digits`` decimals and thousands separators, rounded half away from zero,
    computed exactly (``exact_decimal(Fraction(10**40, 2**30))`` prints every digit right)."""
    v = Fraction(value)
    scaled = abs(v) * 10**digits
    whole = scaled.numerator // scaled.denominator
    if 2 * (scaled - whole) >= 1:
        whole += 1
    sign = "-" if v < 0 and whole else ""
    head, tail = divmod(whole, 10**digits)
    return f"{sign}{head:,}" + (f".{tail:0{digits}d}" if digits else "")


VISIBLE = {"\n": "⏎", "\t": "⇥", "\r": "␍"}


def visible(text: str) -> str:
    """Text for a one-line table cell: line breaks, tabs and carriage returns shown as ⏎ ⇥ ␍, so
    a cell holding only a newline is not blank (a table cell shows no line break)."""
    return "".join(VISIBLE.get(c, c) for c in text)


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 112th."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def big_count(n: int, max_digits: int = 15) -> str:
    """A whole number for a metric: ``1,234,567`` with separators up to ``max_digits`` digits,
    past that ``≈ 1.235 × 10²⁶`` (4 significant digits), which fits a metric's width where 26
    digits and 8 commas would be cut off. Exact values go in the help or a caption."""
    if len(str(abs(n))) <= max_digits:
        return f"{n:,}"
    mantissa, exponent = f"{n:.3e}".split("e")
    return f"≈ {mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


# Joiners and selectors that emoji sequences are made of (👩‍💻, ❤️): kept, not shown as code points.
_KEEP_FORMAT = {0x200D, 0xFE0E, 0xFE0F}


_SHOWN_AS_CODE = ("Cc", "Cf", "Cs", "Zl", "Zp")  # control, format, surrogate, line and paragraph separators


def quoted(value, limit: int = 40) -> str:
    """A value a user typed (or a file holds) quoted in a message: text as ``'…'`` exactly as
    typed — a backslash stays one backslash, unlike ``repr`` — cut to ``limit`` characters with
    ``…`` inside the closing quote; control, format and bidirectional characters (a new line,
    U+202E) and lone surrogates (``"\ud800"`` in JSON: no UTF-8 can carry them, so a message
    holding one could not be sent to the browser at all) as their code points ``[U+202E]``, so
    none acts on the message. Other values (numbers,
    lists from JSON) as ``repr``, cut the same way."""
    if not isinstance(value, str):
        text = repr(value)
        return text if len(text) <= limit else text[: limit - 1] + "…"
    cut = value if len(value) <= limit else value[: limit - 1] + "…"
    shown = "".join(
        f"[U+{ord(c):04X}]" if ord(c) not in _KEEP_FORMAT and unicodedata.category(c) in _SHOWN_AS_CODE else c
        for c in cut
    )
    return f"'{shown}'"


def show_spaces(text: str) -> str:
    """Token text with its leading and trailing spaces made visible as '␣' (two tokens " yuan" and
    "yuan" must not look the same)."""
    core = text.strip(" ")
    if not core:
        return "␣" * len(text)
    lead, trail = len(text) - len(text.lstrip(" ")), len(text) - len(text.rstrip(" "))
    return "␣" * lead + core + "␣" * trail


# ---- byte counts in units ---------------------------------------------------------------------

BINARY = (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))
DECIMAL = (("GB", 10**9), ("MB", 10**6), ("kB", 10**3))


def byte_count(n_bytes) -> str:
    """ "2,048 bytes", or one decimal for a fractional count of packed sub-byte values: "1,024.5 bytes"."""
    whole = Fraction(n_bytes).denominator == 1
    return f"{exact_decimal(n_bytes, 0 if whole else 1)} {'byte' if n_bytes == 1 else 'bytes'}"


def format_bytes(n_bytes: int, binary: bool = True, unit: str | None = None) -> str:
    """``n_bytes`` in the largest binary (KiB = 1,024 B) or decimal (kB = 1,000 B) unit ≥ 1, two
    decimals, computed exactly: a 40-digit count prints 40 right digits (a float keeps ~16).
    ``unit`` ("MiB", "GB" …) forces one unit: "4,352.00 MiB", as llama.cpp logs its KV cache."""
    if unit is not None:
        return f"{exact_decimal(Fraction(n_bytes) / dict(BINARY + DECIMAL)[unit])} {unit}"
    for unit, size in BINARY if binary else DECIMAL:
        if n_bytes >= size:
            return f"{exact_decimal(Fraction(n_bytes) / size)} {unit}"
    return f"{exact_decimal(n_bytes, 0 if Fraction(n_bytes).denominator == 1 else 1)} B"
