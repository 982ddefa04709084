"""Checked exercises: parts with units and tolerances, named feedback for known mistakes, the
catalogue of Ch. 30 §30.8 exercises 1–6 and Ch. 19's worked questions.

An exercise is built by a generator from an integer seed (seed 0 = the chapter's own numbers;
any other seed = fresh numbers with the same structure), so a teacher can put ``?ex=ch30-3&
numbers=12`` in the address and the whole class gets the same numbers. Every answer and every
wrong answer a known mistake produces is computed by ``core`` (cost, latency, quant, worked),
never typed in as a string. The generators live in ``core.practice.bank``.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

from core.practice import answer_lists, answers, slips
from core.practice.exercise_text import (
    NOTATION_EXAMPLES,
    NOTATIONS,
    PLACEHOLDERS,
    examples_in,
    format_value,
    notation_placeholder,
)
from core.practice.exercise_types import Exercise, Feedback, Mistake, Part, Tolerance
from core.typed_numbers import amounts, normalize, quote

EXACT = Tolerance()  # a part's default: the right value only


def part(key, label, kind, answer, unit="", tolerance=EXACT, mistakes=(), options=(), placeholder="") -> Part:
    """A ``Part`` whose mistakes are cleaned up: a mistake that gives the right answer (it can,
    for some generated numbers) is dropped; mistakes that give the same value are merged into
    one, their messages joined, because the student's number cannot tell them apart."""
    merged: list[Mistake] = []
    for m in mistakes:
        if kind != "choice" and _close(kind, m.value, answer, tolerance):
            continue
        same = next((i for i, o in enumerate(merged) if _equal(kind, o.value, m.value)), None)
        if same is None:
            merged.append(m)
        else:
            o = merged[same]
            merged[same] = Mistake(o.value, o.name, f"{o.message} (Or: {m.message[:1].lower()}{m.message[1:]})")
    if not placeholder and kind != "bytes":
        placeholder = PLACEHOLDERS.get(kind, "")
    elif not placeholder:
        placeholder = "e.g. 512 MiB or 536870912" if unit == "B" else f"e.g. 512 (= 512 {unit}) or 1.5 GiB"
    p = Part(key, label, kind, answer, unit, tolerance, tuple(merged), tuple(options), placeholder)
    if any(_gives_away(p, e) for e in examples_in(placeholder)):  # generated numbers can meet an example
        p = replace(p, placeholder=notation_placeholder(kind, unit))
    return p


def notation_caption(ex: Exercise) -> str:
    """The practice page's line on how to type answers; its examples leave out any that is right
    in one of ``ex``'s boxes (512 MiB is an answer of some instances)."""
    graded = [p for p in ex.parts if p.kind not in ("choice", "explain")]
    shown = [e for e in NOTATION_EXAMPLES if not any(_gives_away(p, e) for p in graded)]
    examples = ", ".join(f"`{e}`" for e in shown)
    return (
        f"Type answers with units ({examples}) and press Check. New numbers gives a fresh instance; its address "
        "gives the whole class the same numbers."
    )


def _gives_away(p: Part, example: str) -> bool:
    """Whether ``example``, typed into ``p``'s box, would be marked right."""
    try:
        return _close(p.kind, _read(p, example), p.answer, p.tolerance)
    except ValueError:
        return False


def _unreadable(p: Part, typed: str, message: str) -> Feedback:
    """The reader's message for unreadable input, unless it suggests this part's answer while the
    student did not type it (a fixed example such as `512 MiB`, or 12 when nothing numeric was
    typed): then how to write it, without a number. A student who typed the right number in a
    notation the box cannot read ("<b>100</b> ms") is shown how to write it."""
    # The first few numbers of an answer-sized text only: a 10,000-character paste of numbers took 1.6 s here.
    short = len(typed) <= answers.MAX_CHARS
    # The student's own numbers as the one reader reads them ("1.234,5 MB" → 1234.5, "8’192" → 8192).
    own = set(amounts(typed)) if short else set()
    if any(_gives_away(p, n) for n in own):
        return Feedback("unreadable", message)
    # An example that only re-spells the student's own numbers ("768 Mb" → `768 MiB`) gives nothing away, so
    # the reader's own advice stands.
    for example in re.findall(r"`([^`]+)`", message)[1:]:  # the first is the typed text
        shown = amounts(example)
        if shown and set(shown) <= own:
            continue
        if _gives_away(p, example):
            return Feedback("unreadable", f"Couldn't read {quote(typed)}: type {NOTATIONS[p.kind]}.")
    return Feedback("unreadable", message)


def _equal(kind, a, b) -> bool:
    if kind == "choice":
        return a == b
    return _close(kind, a, b, Tolerance(rel=1e-9))


def _close(kind, typed, right, tol: Tolerance) -> bool:
    if isinstance(right, tuple) or isinstance(typed, tuple):
        if not (isinstance(right, tuple) and isinstance(typed, tuple)) or len(typed) != len(right):
            return False
        return all(tol.accepts(float(t), float(r)) for t, r in zip(typed, right, strict=True))
    if isinstance(typed, str) or isinstance(right, str):
        return False
    return tol.accepts(float(typed), float(right))


MISSING_WORDS = ("missing", "none", "n/a", "na", "undefined", "not defined", "no tpot", "null", "—", "-", "nothing")


def _read(p: Part, text: str):
    if p.kind == "bytes":
        return answers.parse_bytes(text, p.unit or "B")
    if p.kind == "time":
        return answers.parse_time_ms(text, p.unit or "ms")
    if p.kind == "percent":
        return answers.parse_percent(text)
    if p.kind == "number":
        return answers.parse_number(text, units=(p.unit,) if p.unit else ())
    if p.kind == "int_list":
        return answer_lists.parse_int_list(text)
    if p.kind == "number_list":
        return answer_lists.parse_number_list(text)
    if p.kind == "time_list":
        return answer_lists.parse_number_list(text, answers.parse_time_ms)
    raise ValueError(f"unknown part kind {p.kind!r}")


def _words(text: str) -> str:
    return " ".join(str(text).strip().lower().replace("’", "'").strip(".!").split())


def check(p: Part, text: str | None) -> Feedback:
    """Check one typed answer. Never raises on anything typed: unreadable input comes back as
    ``Feedback("unreadable", <how to write it>)``."""
    if text is None or not str(text).strip():
        return Feedback("empty", "Type an answer first.")
    if p.kind == "explain":
        return Feedback("noted", "Compare yours with the model answer (explanations are not graded).")
    if p.kind == "choice":
        w = _words(text)
        w = w[4:] if w.startswith("the ") else w
        if w in p.answer:
            return Feedback("right", "Right.")
        for m in p.mistakes:
            if isinstance(m.value, tuple) and w in m.value:
                return Feedback("mistake", m.message, m.name)
        try:
            value = answers.parse_number(text)
        except ValueError:
            return Feedback("wrong", "Not quite: look at the hint.")
        for m in p.mistakes:
            if isinstance(m.value, int | float) and math.isclose(value, m.value, abs_tol=1e-9):
                return Feedback("mistake", m.message, m.name)
        return Feedback("wrong", "Not quite: look at the hint.")
    try:
        value = _read(p, text)
    except ValueError as err:
        return _unreadable(p, text, str(err)[:1].upper() + str(err)[1:] + ".")
    if _close(p.kind, value, p.answer, p.tolerance):
        return Feedback("right", f"Right: {format_answer(p)}.")
    # Whole-number answers are exact, but their named mistakes (x / s unrounded, scores × 1/√d) are
    # decimals a student types to two places: matched to ±0.005.
    near = Tolerance(abs=0.005) if p.kind == "int_list" else p.tolerance
    for m in p.mistakes:
        if _close(p.kind, value, m.value, near):
            return Feedback("mistake", m.message, m.name)
    if named := slips.slip(p, text):  # the right number in the wrong unit (0.75 GB for 0.75 GiB; 55 s for 55 ms)
        return named
    if p.kind == "bytes" and p.unit != "B" and not re.search(r"[A-Za-z]", normalize(text).replace("e", "")):
        if _close("bytes", answers.parse_bytes(text, "B"), p.answer, p.tolerance):
            return Feedback(
                "mistake",
                f"That is the right number of bytes, but a bare number in this box means "
                f"{p.unit}: add the unit ({quote(text.strip() + ' B')}) or give {p.unit}.",
                f"bytes in a {p.unit} box",
            )
    if isinstance(p.answer, tuple):
        if len(value) != len(p.answer):
            said = "".join(f" {n[:1].upper()}{n[1:]}." for n in answer_lists.notes(text)[:2])  # "1,500" was one
            return Feedback("wrong", f"Give {len(p.answer)} numbers, one per value; you gave {len(value)}.{said}")
        off = [i for i, (t, r) in enumerate(zip(value, p.answer, strict=True), 1) if not p.tolerance.accepts(t, r)]
        sign = [i for i in off if value[i - 1] < 0 <= p.answer[i - 1] and p.kind == "time_list"]
        if sign:  # as for one number: the sign is the slip, not the size
            return Feedback("wrong", f"Not quite: number {sign[0]} is negative, and a time cannot be; check the sign.")
        verb = "is" if len(off) == 1 else "are"
        if p.kind == "int_list" and (frac := [i for i, t in enumerate(value, 1) if t != int(t)]):
            return Feedback("wrong", f"Not quite: each value here is a whole number, and number {frac[0]} is not.")
        return Feedback("wrong", f"Not quite: {len(off)} of the {len(value)} numbers {verb} off.")
    if value < 0 <= p.answer and p.kind in ("bytes", "time"):
        # "Too small" would send a student hunting for a bigger number; the sign is the slip.
        what = "a time" if p.kind == "time" else "a size in bytes"
        return Feedback("wrong", f"Not quite: {what} cannot be negative; check the sign.")
    direction = "too large" if value > p.answer else "too small"
    return Feedback("wrong", f"Not quite: that is {direction} ({p.tolerance.describe(p.unit)} counts as right).")


def format_answer(p: Part) -> str:
    """The answer as the handout shows it; a percentage with as many significant digits as its
    tolerance needs (3 at least: 11.8 % for 11.7647 % was outside ±0.02 points; now 11.76 %)."""
    if p.kind == "explain":
        return "see the model answer"
    if p.kind == "percent":
        digits = next(d for d in range(3, 18) if p.tolerance.accepts(float(f"{p.answer:.{d}g}"), p.answer))
        return format_value(p.kind, p.answer, p.unit, digits)
    return format_value(p.kind, p.answer, p.unit)
