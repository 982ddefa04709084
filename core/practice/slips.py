"""Unit slips, named at every scale: the right number written in the wrong unit.

"0.75 GB" for 768 MiB (= 0.75 GiB), "768 MB", "786432 kB", "55 s" for 55 ms, "55 µs", a bare "0.1" in a box
whose bare numbers are ms when 0.1 s is meant: the student's number is right, the unit is its binary/decimal
twin (KiB/kB, MiB/MB, GiB/GB, TiB/TB) or its neighbour 1,000× away (s/ms/µs). Found from what was typed, so every
bytes or time box names them, whatever its exercise lists as known mistakes; the name reads as the bank's
(``core.practice.bank.unit_mixups``: "GiB read as GB") so the tally counts one slip under one name.
"""

from __future__ import annotations

from decimal import Decimal

from core.practice import answer_lists, answers
from core.practice.exercise_types import Feedback, Part
from core.typed_numbers import quote, spell, split_number_unit, ureg

_TWIN = {"KiB": "kB", "MiB": "MB", "GiB": "GB", "TiB": "TB"}
_TWIN |= {v: k for k, v in _TWIN.items()}
_BYTES = {
    "KiB": "2¹⁰ = 1,024",
    "MiB": "2²⁰ = 1,048,576",
    "GiB": "2³⁰ = 1,073,741,824",
    "TiB": "2⁴⁰ = 1,099,511,627,776",
    "kB": "10³ = 1,000",
    "MB": "10⁶ = 1,000,000",
    "GB": "10⁹ = 1,000,000,000",
    "TB": "10¹² = 1,000,000,000,000",
}
_MS = {"s": Decimal(1000), "ms": Decimal(1), "µs": Decimal("0.001")}
_NEIGHBOURS = {"s": ("ms",), "ms": ("s", "µs"), "µs": ("ms",)}


def slip(p: Part, typed: str) -> Feedback | None:
    """The unit slip ``typed`` makes in ``p``'s box, as a named mistake, or None."""
    if p.kind == "bytes":
        return _byte_slip(p, typed)
    if p.kind == "time":
        return _time_slip(p, typed)
    if p.kind == "time_list":
        return _time_list_slip(p, typed)
    return None


def _byte_slip(p: Part, typed: str) -> Feedback | None:
    try:
        number, unit = split_number_unit(typed)
    except ValueError:
        return None
    name = answers._BYTE_ALIASES.get(unit.lower(), unit)
    twin = _TWIN.get(name)
    if not twin or not number or not p.tolerance.accepts(number * _per(twin), p.answer):
        return None
    n = spell(number)
    return Feedback(
        "mistake",
        f"{quote(typed.strip())} instead of {quote(f'{n} {twin}')}: the number is right, the unit is not "
        f"(1 {name} = {_BYTES[name]} bytes, 1 {twin} = {_BYTES[twin]} bytes).",
        f"{twin} read as {name}",
    )


def _per(unit: str) -> float:
    return float(ureg().Quantity(1, unit).to("byte").magnitude)


def _time_unit(unit: str) -> str | None:
    """A typed time unit as s, ms or µs ("" for none), None for any other."""
    name = answers._TIME_ALIASES.get(unit.lower(), unit) if unit else ""
    return {"us": "µs", "μs": "µs"}.get(name, name) if name in ("", *_MS, "us", "μs") else None


def _time_slip(p: Part, typed: str) -> Feedback | None:
    try:
        number, unit = split_number_unit(typed)
    except ValueError:
        return None
    name, box = _time_unit(unit), p.unit or "ms"
    if name is None or not number:
        return None
    for other in _NEIGHBOURS.get(name or box, ()):
        if name == "" and other != "s":  # a bare number in a ms box meant as seconds, not as µs
            continue
        if p.tolerance.accepts(float(Decimal(spell(number)) * _MS[other]), p.answer):
            n = spell(number)
            why = (
                "the number is right, the unit is not (1 s = 1,000 ms = 1,000,000 µs)"
                if name
                else f"a bare number in this box is {box}; the number is right: add the unit, {quote(f'{n} {other}')}"
            )
            return Feedback(
                "mistake",
                f"{n} {name or box} instead of {n} {other}: {why}.",
                f"{name or box} instead of {other}",
            )
    return None


def _time_list_slip(p: Part, typed: str) -> Feedback | None:
    """The same slip in every entry of a list of times ("50 s, 60 s" for 50 and 60 ms)."""
    try:
        values = answer_lists.parse_number_list(typed, answers.parse_time_ms)
    except ValueError:
        return None
    entries = answer_lists._entries(typed)
    last = answer_lists._unit(*entries[-1]) or ""  # a unit written once, after the last entry, is every bare one's
    units = {_time_unit(answer_lists._unit(e, il) or last) for e, il in entries}
    if len(units) != 1 or None in units or len(values) != len(p.answer):
        return None
    (name,), box = units, p.unit or "ms"
    for other in _NEIGHBOURS.get(name or box, ()):
        if name == "" and other != "s":
            continue
        factor = float(_MS[other] / _MS[name or box])
        if all(p.tolerance.accepts(v * factor, a) for v, a in zip(values, p.answer, strict=True)):
            said = f"is in {name}" if name else f"is in {box} (a bare number in this box is {box})"
            return Feedback(
                "mistake",
                f"{quote(typed.strip())} {said}: the numbers are right in {other}, the unit is not "
                "(1 s = 1,000 ms = 1,000,000 µs).",
                f"{name or box} instead of {other}",
            )
    return None
