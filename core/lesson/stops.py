"""A guided lesson as data: ordered stops, each a page of the app with that page's settings, a
speaker note and the question to ask. Lessons are TOML files (``assets/lessons/*.toml``, or a
teacher's upload) validated against a JSON Schema built from ``core.lesson.pages.PAGES`` — the
one mapping from lesson page names to the app's page scripts, titles and typed settings.

A malformed file raises ``LessonError`` naming the line and the field: TOML syntax errors carry
tomllib's line and column; schema errors carry the field path and the line where that stop or
field is written (found by scanning the text, since tomllib keeps no positions).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass

from core.lesson.pages import PAGES, lesson_schema
from core.lesson.problems import STRICT_VALIDATOR, Problem, line_of, problem_from
from core.model.config import PRESETS
from core.model.shipped import ASSETS, load_shipped_tokenizer
from core.model.tokenizer import encode
from core.practice.bank.latency import CH30_1
from core.practice.catalogue import make as make_exercise
from core.text import plural, quoted

FIFTEEN_MINUTES = "fifteen-minutes"


SHIPPED_DIR = ASSETS / "lessons"
PRACTICE_DEFAULTS = {"ex": CH30_1, "numbers": 0}  # the Practice page's exercise and numbers when a stop leaves them
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

    def typed(self):
        """The stop's settings as its page's typed settings (``core.lesson.pages.PageSpec.settings_type``)."""
        return PAGES[self.page].make(self.settings)

    def question_now(self, now: dict) -> str:
        """The question to ask with the page as it is now (``now``: the Practice page's settings on screen, {"ex",
        "numbers"}). A Practice stop whose exercise the class changed ("New numbers", another exercise) asks the
        exercise on screen, its numbers included; the file's question quoted the stop's own numbers."""
        if self.page != "practice":
            return self.question
        stop = {**PRACTICE_DEFAULTS, **self.settings}
        now = {k: now.get(k, v) for k, v in stop.items()}
        if now == stop:
            return self.question
        return make_exercise(now["ex"], now["numbers"]).question.replace("**", "")


@dataclass(frozen=True)
class Lesson:
    title: str
    description: str
    minutes: float | None
    stops: tuple[Stop, ...]


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


MAX_KEY_PARTS = 8  # a lesson's deepest key is stops.<field>.<field>: three parts; past eight is not a lesson
# A line's table header ("[a.b]", "[[stops]]": no comma, so not an array of numbers) or its key before "=".
_KEY_START = re.compile(r"^[ \t]*(\[\[?[^\]\n,]*\]|[^=\n\"'\[]+=)", re.MULTILINE)


def _too_deep(text: str) -> Problem | None:
    """A table header or dotted key of more than ``MAX_KEY_PARTS`` parts, found by its dots before TOML is parsed:
    a 190 kB header of 95,000 parts cost seconds of parsing and validation before it was refused."""
    for m in _KEY_START.finditer(text):
        if m[1].count(".") >= MAX_KEY_PARTS:
            line = text.count("\n", 0, m.start(1)) + 1
            parts = m[1].count(".") + 1
            return Problem(line, None, f"a key of {parts:,} dotted parts: a lesson's keys have at most 3")
    return None


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
    if (deep := _too_deep(text)) is not None:
        raise LessonError([deep], name)
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
    problems = [problem_from(text, data, e) for e in errors if e.validator not in ("allOf", "if")]
    problems = problems or _prompt_problems(text, data)
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


def _prompt_problems(text: str, data: dict) -> list[Problem]:
    """A decode stop's prompt that the shipped model cannot prefill, with the steps the stop replays after it:
    more tokens (the shipped tokenizer's) than its context window holds. The schema only bounds characters,
    so such a file used to be refused only when the class arrived at the stop ("Prefill refused")."""
    window, problems = PRESETS["shipped"].block_size, []
    for i, stop in enumerate(data["stops"]):
        settings = stop.get("settings", {})
        if stop["page"] != "decode" or "prompt" not in settings:
            continue
        n, steps = len(encode(load_shipped_tokenizer(), settings["prompt"])), settings.get("step", 0)
        if n + steps <= window:
            continue
        need = f"is {plural(n, 'token')}" + (f" and the stop replays {plural(steps, 'step')} after it" if steps else "")
        message = (
            f"the prompt {need}, but the shipped model's context window holds {window:,} positions: "
            f"remove at least {plural(n + steps - window, 'token')}" + (" or steps" if steps else "")
        )
        path = ["stops", i, "settings", "prompt"]
        problems.append(Problem(line_of(text, path), "settings.prompt", message, i + 1))
    return problems


def shipped_lessons() -> list[str]:
    """Names of the lessons shipped in ``assets/lessons/`` (without .toml)."""
    return sorted(p.stem for p in SHIPPED_DIR.glob("*.toml"))


def load_shipped(name: str = FIFTEEN_MINUTES) -> Lesson:
    """A shipped lesson by name (only names from ``shipped_lessons``: never a typed path)."""
    if name not in shipped_lessons():
        raise LessonError(
            [Problem(None, None, f"no shipped lesson {quoted(name)}; there are: {', '.join(shipped_lessons())}")]
        )
    return parse_lesson((SHIPPED_DIR / f"{name}.toml").read_bytes(), f"{name}.toml")


# ---- naming the field and finding its line --------------------------------------------------
