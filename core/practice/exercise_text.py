"""How an exercise shows a number: the page's and the handout's text for answers of each kind
(``core.practice.exercise_types.KINDS``), with binary and decimal byte units and real minus signs.

What they write for a part's answer (the handout's "right answer"), typed back into its box, is marked right by
``core.practice.exercises.check`` (for sizes both the whole line and its first form; the rounded conversions alone are
for reading), and the readers take a hyphen for the minus sign too.
"""

from __future__ import annotations

import re

from core.practice import answer_lists
from core.text import BINARY, DECIMAL, format_bytes


def format_value(kind: str, value, unit: str = "", digits: int = 3) -> str:
    """A value as the page and the handout show it: bytes in bytes with binary and decimal
    units, times in ms, percentages with % (``digits`` significant digits), lists with a real minus sign."""
    if kind == "bytes":
        v = float(value)
        whole = f"{round(v):,} bytes" if abs(v - round(v)) < 1e-6 else f"{v:,.1f} bytes"
        size = dict(BINARY + DECIMAL).get(unit)
        if size:  # the box asked for this unit: lead with it
            return f"{v / size:,.4g} {unit} = {whole}"
        return f"{whole} ({bytes_text(v)} = {bytes_text(v, binary=False)})" if v >= 1024 else whole
    if kind == "time":
        return minus(f"{value:g} ms")
    if kind == "percent":
        return minus(f"{value:.{digits}g} %")
    if kind in ("int_list", "number_list", "time_list"):
        fmt = (lambda x: f"{x:g}") if kind == "int_list" else _decimal
        text = ", ".join(minus(fmt(x)) for x in value)
        return text + (" ms" if kind == "time_list" else "")
    if kind == "choice":
        return str(value[0])
    if kind == "number":
        text = f"{value:,.6g}" if abs(value) < 1e6 else f"{value:,.0f}"
        return minus(text + (f" {unit}" if unit and unit != "×" else unit))
    return str(value)


def _decimal(x: float) -> str:
    """Up to four decimals, no trailing zeros: 0.0826, 0.3, 1, 0 (for 5.9e-06)."""
    text = f"{x:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def minus(text: str) -> str:
    """A hyphen before a digit (not inside a word such as "4-bit") to the real minus sign, for
    display; the readers accept both."""
    return re.sub(r"(?<![\w.])-(?=\d)", "−", str(text))


def bytes_text(n_bytes: float, binary: bool = True) -> str:
    """``format_bytes`` without trailing zeros: "768 MiB", "805.31 MB", "4.5 MiB"."""
    text = format_bytes(round(n_bytes), binary)
    return re.sub(r"\.(\d*?)0+ ", lambda m: f".{m[1]} " if m[1] else " ", text)


# What an empty box shows. Examples of notation: an exercise whose generated answer equals one gets
# its kind's NOTATIONS instead (core.practice.exercises.part).
PLACEHOLDERS = {
    "time": "e.g. 120 or 0.12 s",
    "time_list": "e.g. 20, 35",
    "percent": "e.g. 2.5 %",
    "number": "e.g. 42",
    "int_list": f"e.g. {answer_lists.LIST_EXAMPLE}",
    "number_list": "e.g. 0.1, 0.7, 0.2",
}


# How to write each kind, without a number (that could be the answer).
NOTATIONS = {
    "bytes": "a number with a unit (B, KiB, MiB, GiB, kB, MB or GB)",
    "time": "a number with ms or s",
    "percent": "a number with %",
    "number": "a number in digits",
    "int_list": "whole numbers separated by commas",
    "number_list": "numbers separated by commas",
    "time_list": "times separated by commas, with ms or s",
}


def examples_in(placeholder: str) -> list[str]:
    """The examples a placeholder gives: "e.g. 512 (= 512 MiB) or 1.5 GiB" → ["512", "1.5 GiB"]."""
    text = re.sub(r"\s*\([^)]*\)", "", placeholder.removeprefix("e.g. "))
    return [e.strip() for e in text.split(" or ") if e.strip()]


def notation_placeholder(kind: str, unit: str = "") -> str:
    """A box's placeholder without a number: for a part whose answer met the usual example."""
    if kind == "bytes":
        return f"in {unit}, or with a unit" if unit and unit != "B" else "in bytes, or with a unit"
    return {"time": "in ms, or with s", "percent": "in %", "number": "a number in digits"}.get(kind, NOTATIONS[kind])


# The practice page's line on notation shows these, less any that is right in one of the exercise's boxes.
NOTATION_EXAMPLES = ("512 MiB", "536870912", "1.5 GiB", "120 ms", "0.12 s", "2.5 %", "4, -2, 0, 6")
