"""What is wrong in a lesson file, and where: each schema violation as a ``Problem`` with the line, stop
and field it concerns, in the teacher's words (split from ``core.lesson.stops``)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import jsonschema

from core.lesson.pages import PAGES


@dataclass(frozen=True)
class Problem:
    """One thing wrong in a lesson file: where (``line``, ``column`` for TOML syntax, the
    ``stop`` number counted from 1, the ``field`` path inside it) and what."""

    line: int | None
    field: str | None
    message: str
    stop: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        where = [
            f"line {self.line}" if self.line else "",
            f"column {self.column}" if self.column else "",
            f"stop {self.stop}" if self.stop else "",
            f"field `{self.field}`" if self.field else "",
        ]
        where = ", ".join(w for w in where if w)
        return f"{where}: {self.message}" if where else self.message


def _where(path: list) -> tuple[int | None, str | None]:
    """(stop number from 1, field path inside it) for a jsonschema path."""
    if len(path) >= 2 and path[0] == "stops" and isinstance(path[1], int):
        return path[1] + 1, ".".join(str(p) for p in path[2:]) or None
    return None, ".".join(str(p) for p in path) or None


LIMITS = {
    "maximum": "is more than the maximum, {v}",
    "minimum": "is less than the minimum, {v}",
    "exclusiveMinimum": "must be more than {v}",
    "multipleOf": "is not a multiple of {v}",
    "maxLength": "is longer than {v} characters",
    "minLength": "is empty",
    "maxItems": "has more than {v} entries",
    "minItems": "needs at least {v} entry",
    "pattern": "holds only spaces",
    "steps": "is not on the slider's steps of {v}",
}


def _on_steps(validator, step, instance, schema):
    """The ``steps`` keyword: a number a whole multiple of ``step`` (to 1e-9, as 0.3 / 0.1 is
    2.9999999999999996; JSON Schema's ``multipleOf`` refuses 0.3 for that reason)."""
    if isinstance(instance, int | float) and not isinstance(instance, bool) and math.isfinite(instance):
        if abs(instance / step - round(instance / step)) > 1e-9:
            yield jsonschema.ValidationError(f"{instance!r} is not a multiple of {step}")


# JSON Schema counts 3.0 as an integer and NaN as a number within any bounds (every comparison with it
# is false): a lesson with `step = 3.0` or `temperature = nan` passed and crashed its page. Whole numbers
# are ints here, and numbers finite.
STRICT_VALIDATOR = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    validators={"steps": _on_steps},
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many(
        {
            "integer": lambda _, x: isinstance(x, int) and not isinstance(x, bool),
            "number": lambda _, x: isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x),
        }
    ),
)


def problem_from(text: str, data: dict, e: jsonschema.ValidationError) -> Problem:
    path = list(e.absolute_path)
    inst = e.instance
    if e.validator == "required":
        missing = re.search(r"'(.+?)' is a required property", e.message)
        name = missing[1] if missing else "?"
        stop, field = _where(path + [name])
        return Problem(line_of(text, path), field, f"missing field `{name}`", stop)
    if e.validator == "additionalProperties":
        allowed = set(e.schema.get("properties", {}))
        extra = sorted(k for k in inst if k not in allowed)
        stop, field = _where(path + extra[:1])
        line = line_of(text, path + extra[:1])
        if path[-1:] == ["settings"]:
            page = data["stops"][path[1]].get("page")
            known = ", ".join(PAGES[page].settings) or "no settings"
            return Problem(line, field, f"unknown setting `{extra[0]}` (page `{page}` takes: {known})", stop)
        return Problem(line, field, f"unknown field `{extra[0]}` (known: {', '.join(sorted(allowed))})", stop)
    stop, field = _where(path)
    line = line_of(text, path)
    shown = repr(inst) if len(repr(inst)) <= 40 else repr(inst)[:39] + "…"
    if isinstance(inst, list):  # a count, not a dump of the list: "41 entries has more than 40 entries"
        shown = f"{len(inst)} {'entry' if len(inst) == 1 else 'entries'}:"
        if e.validator == "maxItems":
            return Problem(line, field, f"{shown} at most {e.validator_value}", stop)
    elif isinstance(inst, str) and e.validator == "pattern":
        shown = "the text"
    if e.validator == "enum":
        options = e.validator_value
        listed = ", ".join(map(repr, options[:12])) + (", …" if len(options) > 12 else "")
        return Problem(line, field, f"{shown} is not one of: {listed}", stop)
    if e.validator == "type":
        return Problem(line, field, f"{shown} is not {_article(e.validator_value)}", stop)
    if e.validator == "anyOf":
        return Problem(line, field, f"{shown} is not allowed here ({_short_schema(e.schema)})", stop)
    if e.validator in LIMITS:
        return Problem(line, field, f"{shown} {LIMITS[e.validator].format(v=e.validator_value)}", stop)
    return Problem(line, field, e.message, stop)


def _article(t) -> str:
    return {
        "integer": "a whole number",
        "number": "a number",
        "string": "text",
        "boolean": "true or false",
        "object": "a table",
        "array": "a list",
    }.get(t, str(t))


def _short_schema(schema: dict) -> str:
    parts = []
    for s in schema.get("anyOf", []):
        if "const" in s:
            parts.append(repr(s["const"]))
        elif s.get("type") == "integer":
            parts.append(f"a whole number {s.get('minimum')} … {s.get('maximum')}")
    return " or ".join(parts)


def _code_lines(text: str) -> list[tuple[int, str]]:
    """(line number, text) of lines outside multi-line strings, so a speaker note that
    contains "[[stops]]" or "step =" is never mistaken for structure."""
    out, inside = [], None
    for i, line in enumerate(text.splitlines(), 1):
        if inside:
            if line.count(inside) % 2 == 1:
                inside = None
            continue
        out.append((i, line))
        for q in ('"""', "'''"):
            if line.count(q) % 2 == 1:
                inside = q
                break
    return out


def _quotable(name) -> str:
    """A key as a pattern, bare or quoted (TOML allows ``"page" = …``)."""
    return rf"[\"']?{re.escape(str(name))}[\"']?"


def _key_re(name: str) -> re.Pattern:
    return re.compile(rf"^\s*(?:settings\s*\.\s*)?{_quotable(name)}\s*=")


def line_of(text: str, path: list) -> int | None:
    """Best-effort line where the object or field at ``path`` is written."""
    lines = _code_lines(text)
    headers = [(i, ln.strip()) for i, ln in lines if ln.lstrip().startswith("[")]
    if not path:
        return 1
    if path[0] != "stops" or len(path) == 1:
        hit = next((i for i, ln in lines if _key_re(path[0]).match(ln)), None)
        return hit or next((i for i, h in headers if re.match(r"\[\[\s*stops\s*\]\]", h)), 1)
    starts = [i for i, h in headers if re.match(r"\[\[\s*stops\s*\]\]", h)]
    k = path[1] if isinstance(path[1], int) else 0
    if k >= len(starts):
        return next((i for i, ln in lines if _key_re("stops").match(ln)), None)
    begin = starts[k]
    end = next((i for i, h in headers if i > begin and not re.match(r"\[\s*stops\.", h)), 10**9)
    region = [(i, ln) for i, ln in lines if begin <= i < end]
    if len(path) == 2:
        return begin
    field = path[2]
    table = next((i for i, ln in region if re.match(rf"\s*\[\s*stops\.{re.escape(str(field))}\s*\]", ln)), None)
    written = next((i for i, ln in region if re.match(rf"\s*{_quotable(field)}\s*[=.]", ln)), None)
    if len(path) == 3:
        return written or table or begin
    sub = path[3]
    if table:
        after = [(i, ln) for i, ln in region if i > table]
        nxt = next((i for i, ln in after if ln.lstrip().startswith("[")), 10**9)
        hit = next((i for i, ln in after if i < nxt and _key_re(sub).match(ln)), None)
        if hit:
            return hit
    dotted = next((i for i, ln in region if re.match(rf"\s*{_quotable(field)}\s*\.\s*{_quotable(sub)}\s*=", ln)), None)
    return dotted or table or written or begin
