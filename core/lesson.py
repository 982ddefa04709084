"""A guided lesson as data: ordered stops, each a page of the app with that page's settings, a
speaker note and the question to ask. Lessons are TOML files (``assets/lessons/*.toml``, or a
teacher's upload) validated against a JSON Schema built from ``core.lesson_pages.PAGES`` — the
one mapping from lesson page names to the app's page scripts, titles and session-state keys.

A malformed file raises ``LessonError`` naming the line and the field: TOML syntax errors carry
tomllib's line and column; schema errors carry the field path and the line where that stop or
field is written (found by scanning the text, since tomllib keeps no positions).
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import jsonschema

from core import ruler, state
from core.lesson_pages import PAGES, lesson_schema
from core.text import quoted

SHIPPED_DIR = Path(__file__).resolve().parents[1] / "assets" / "lessons"
MAX_BYTES = 200_000


@dataclass(frozen=True)
class Stop:
    """One stop: ``page`` (a key of ``PAGES``), its ``settings`` ({setting: value}), the
    teacher's one-paragraph ``note``, the ``question`` to ask, and ``handout`` text for students
    (the question when not given)."""

    title: str
    page: str
    settings: dict
    note: str
    question: str
    handout: str
    minutes: float | None = None

    @property
    def script(self) -> str:
        return PAGES[self.page].script

    def state_updates(self) -> dict:
        """{session-state key: value} that put the page in this stop's settings."""
        out = {PAGES[self.page].settings[k].key: v for k, v in self.settings.items()}
        if self.page == "quantize" and "preset" in self.settings:
            # The ruler page loads a preset in its selectbox callback (lessons/quantize.py
            # load_preset); a lesson sets the same values directly, through the same helper.
            out.update(state.quant_preset_state(*ruler.PRESETS[self.settings["preset"]]))
        return out


@dataclass(frozen=True)
class Lesson:
    title: str
    description: str
    minutes: float | None
    stops: tuple[Stop, ...]


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


class LessonError(ValueError):
    """A lesson file that cannot be used; ``problems`` lists every ``Problem`` found."""

    def __init__(self, problems: list[Problem], name: str = "the lesson file"):
        self.problems = problems
        shown = "; ".join(str(p) for p in problems[:3])
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        super().__init__(f"{name}: {shown}{more}")


def parse_lesson(text: str | bytes, name: str = "the lesson file") -> Lesson:
    """Read and validate a lesson (TOML). Raises ``LessonError`` naming line and field; a file
    nested deeper than Python's recursion limit, or with an integer of more than 4,300 digits,
    gets a ``LessonError`` too (tomllib raises ``RecursionError`` / ``ValueError`` for those)."""
    try:
        return _parse_lesson(text, name)
    except RecursionError:
        deep = Problem(None, None, "nested far too deeply for a lesson (a lesson nests 3 levels)")
        raise LessonError([deep], name) from None
    except ValueError as err:
        if isinstance(err, LessonError) or "integer string conversion" not in str(err):
            raise
        raise LessonError([Problem(None, None, "a number with more than 4,300 digits")], name) from None


def _parse_lesson(text: str | bytes, name: str) -> Lesson:
    if isinstance(text, bytes):
        if len(text) > MAX_BYTES:
            raise LessonError(
                [Problem(None, None, f"{len(text):,} bytes is too large for a lesson (limit 200 kB)")], name
            )
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise LessonError([Problem(None, None, "not UTF-8 text: a lesson is a TOML text file")], name) from None
    if len(text) > MAX_BYTES:
        raise LessonError([Problem(None, None, "too large for a lesson (limit 200 kB)")], name)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(err))
        msg = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(err))
        line = int(m[1]) if m else None
        key = (
            re.match(r"\s*([\w.\"'-]+)\s*=", text.splitlines()[line - 1])
            if line and line <= len(text.splitlines())
            else None
        )
        field = key[1].strip("\"'") if key else None
        problem = Problem(line, field, f"TOML syntax: {msg[:1].lower()}{msg[1:]}", column=int(m[2]) if m else None)
        raise LessonError([problem], name) from None
    validator = STRICT_VALIDATOR(lesson_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    problems = [_problem(text, data, e) for e in errors if e.validator not in ("allOf", "if")]
    if problems:
        raise LessonError(sorted(dict.fromkeys(problems), key=lambda p: p.line or 0), name)
    stops = tuple(
        Stop(
            s["title"],
            s["page"],
            dict(s.get("settings", {})),
            s["note"].strip(),
            s["question"].strip(),
            s.get("handout", s["question"]).strip(),
            s.get("minutes"),
        )
        for s in data["stops"]
    )
    return Lesson(data["title"], data.get("description", "").strip(), data.get("minutes"), stops)


def shipped_lessons() -> list[str]:
    """Names of the lessons shipped in ``assets/lessons/`` (without .toml)."""
    return sorted(p.stem for p in SHIPPED_DIR.glob("*.toml"))


def load_shipped(name: str = "fifteen-minutes") -> Lesson:
    """A shipped lesson by name (only names from ``shipped_lessons``: never a typed path)."""
    if name not in shipped_lessons():
        raise LessonError(
            [Problem(None, None, f"no shipped lesson {quoted(name)}; there are: {', '.join(shipped_lessons())}")]
        )
    return parse_lesson((SHIPPED_DIR / f"{name}.toml").read_bytes(), f"{name}.toml")


# ---- naming the field and finding its line --------------------------------------------------


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
}


# JSON Schema counts 3.0 as an integer and NaN as a number within any bounds (every comparison with it
# is false): a lesson with `step = 3.0` or `temperature = nan` passed and crashed its page. Whole numbers
# are ints here, and numbers finite.
STRICT_VALIDATOR = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many(
        {
            "integer": lambda _, x: isinstance(x, int) and not isinstance(x, bool),
            "number": lambda _, x: isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x),
        }
    ),
)


def _problem(text: str, data: dict, e: jsonschema.ValidationError) -> Problem:
    path = list(e.absolute_path)
    inst = e.instance
    if e.validator == "required":
        missing = re.search(r"'(.+?)' is a required property", e.message)
        name = missing[1] if missing else "?"
        stop, field = _where(path + [name])
        return Problem(_line_of(text, path), field, f"missing field `{name}`", stop)
    if e.validator == "additionalProperties":
        allowed = set(e.schema.get("properties", {}))
        extra = sorted(k for k in inst if k not in allowed)
        stop, field = _where(path + extra[:1])
        line = _line_of(text, path + extra[:1])
        if path[-1:] == ["settings"]:
            page = data["stops"][path[1]].get("page")
            known = ", ".join(PAGES[page].settings) or "no settings"
            return Problem(line, field, f"unknown setting `{extra[0]}` (page `{page}` takes: {known})", stop)
        return Problem(line, field, f"unknown field `{extra[0]}` (known: {', '.join(sorted(allowed))})", stop)
    stop, field = _where(path)
    line = _line_of(text, path)
    shown = repr(inst) if len(repr(inst)) <= 40 else repr(inst)[:39] + "…"
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


def _key_re(name: str) -> re.Pattern:
    return re.compile(rf"^\s*(?:settings\s*\.\s*)?[\"']?{re.escape(str(name))}[\"']?\s*=")


def _line_of(text: str, path: list) -> int | None:
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
    written = next((i for i, ln in region if re.match(rf"\s*{re.escape(str(field))}\s*[=.]", ln)), None)
    if len(path) == 3:
        return written or table or begin
    sub = path[3]
    if table:
        after = [(i, ln) for i, ln in region if i > table]
        nxt = next((i for i, ln in after if ln.lstrip().startswith("[")), 10**9)
        hit = next((i for i, ln in after if i < nxt and _key_re(sub).match(ln)), None)
        if hit:
            return hit
    dotted = next(
        (i for i, ln in region if re.match(rf"\s*{re.escape(str(field))}\s*\.\s*{re.escape(str(sub))}\s*=", ln)), None
    )
    return dotted or table or written or begin
