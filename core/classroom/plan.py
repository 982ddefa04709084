"""The teacher's plan: what a class follows, a typed, versioned dataclass (issues 41 and 49).

The teacher's console publishes a ``Plan`` to the class store (``core.classroom.store``) after every
action; each student's page (and the projector's display) reads it and works out what to do to show
the same thing with its *own* model and cache (``follow_actions``): nothing is shared but the plan.
A plan holds no path a student's session would open (a page is one of the app's own scripts, checked
against the list the app gives) and no right answer before the teacher reveals it.

As stored it is JSON (``Plan.to_json``) carrying ``"schema": SCHEMA``; ``Plan.from_json`` reads it
back and refuses anything else with a ValueError naming the field ("plan.request.top_k: …").
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields

from core.classroom import rules
from core.classroom.fields_json import (
    fail,
    want_choice,
    want_flag,
    want_items,
    want_number,
    want_object,
    want_text,
    want_whole,
)
from core.decode.settings import FLOAT_WEIGHTS
from core.lesson.pages import PAGES
from core.lesson.problems import STRICT_VALIDATOR

SCHEMA = 1  # the plan's JSON carries {"schema": 1, ...}; another schema is refused
MEAN_HEAD = "mean"  # a plan's head when the teacher's stage shows the mean over heads
MODES = ("follow", "paused", "released")
STRATEGIES = ("greedy", "sample")
DTYPES = ("float32", "float64")
WEIGHT_BITS = (FLOAT_WEIGHTS, 8, 4, 3, 2)  # float weights, or weight-only quantization


@dataclass(frozen=True)
class Request:
    """The teacher's decode request: what a follower needs to prefill it itself. ``strategy`` "greedy" or
    "sample"; ``dtype`` "float32" or "float64"; ``bits`` ``FLOAT_WEIGHTS`` (0) or 8/4/3/2 (weight-only
    quantization); ``model`` a checkpoint name the server offers, None for the shipped model; ``past_end``:
    the teacher steps on past the end token."""

    uid: str
    prompt: str
    strategy: str
    temperature: float
    top_k: int
    seed: int
    dtype: str
    bits: int
    model: str | None
    past_end: bool = False

    @classmethod
    def from_json(cls, data, where: str = "plan.request") -> Request:
        """A Request from its JSON object; ValueError naming the field otherwise."""
        d = want_object(where, data)
        missing = [f.name for f in fields(cls) if f.name != "past_end" and f.name not in d]
        if missing:
            raise ValueError(f"{where}.{missing[0]}: missing")
        return cls(
            uid=want_text(f"{where}.uid", d["uid"]),
            prompt=want_text(f"{where}.prompt", d["prompt"]),
            strategy=want_text(f"{where}.strategy", d["strategy"], STRATEGIES),
            temperature=want_number(f"{where}.temperature", d["temperature"]),
            top_k=want_whole(f"{where}.top_k", d["top_k"]),
            seed=want_whole(f"{where}.seed", d["seed"]),
            dtype=want_text(f"{where}.dtype", d["dtype"], DTYPES),
            bits=want_choice(f"{where}.bits", d["bits"], WEIGHT_BITS),
            model=want_text(f"{where}.model", d["model"], optional=True),
            past_end=want_flag(f"{where}.past_end", d.get("past_end", False)),
        )

    def to_json(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Question:
    """The question on screen to the class: a predict-first step (``kind`` "token", "positions", …) or a
    posed exercise part ("practice"). ``round`` 1, 2, … (peer instruction's vote again). ``answer`` (an
    option index), ``explain`` and the model's ``shares`` only once ``revealed``: a browser never gets them
    early. ``misses``: a posed exercise part's named mistake per option ("" for the right one)."""

    id: str
    kind: str
    text: str
    options: tuple[str, ...]
    round: int = 1
    revealed: bool = False
    answer: int | None = None
    explain: str = ""
    shares: tuple[float, ...] = ()
    misses: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, data, where: str = "plan.question") -> Question:
        """A Question from its JSON object; ValueError naming the field otherwise (an answer before the
        reveal, or one that is not an option, included)."""
        d = want_object(where, data)
        for name in ("id", "kind", "text", "options"):
            if name not in d:
                raise ValueError(f"{where}.{name}: missing")
        q = cls(
            id=want_text(f"{where}.id", d["id"]),
            kind=want_text(f"{where}.kind", d["kind"]),
            text=want_text(f"{where}.text", d["text"]),
            options=want_items(f"{where}.options", d["options"], want_text),
            round=want_whole(f"{where}.round", d.get("round", 1)),
            revealed=want_flag(f"{where}.revealed", d.get("revealed", False)),
            answer=want_whole(f"{where}.answer", d.get("answer"), optional=True),
            explain=want_text(f"{where}.explain", d.get("explain", "")),
            shares=want_items(f"{where}.shares", d.get("shares", []), want_number),
            misses=want_items(f"{where}.misses", d.get("misses", []), want_text),
        )
        try:
            rules.check_question(q.id, q.round)
            rules.check_options(len(q.options))
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        if q.answer is not None and (not q.revealed or q.answer >= len(q.options)):
            raise fail(f"{where}.answer", "an option's index, and only once revealed", q.answer)
        return q

    def to_json(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        return {**d, "options": list(self.options), "shares": list(self.shares), "misses": list(self.misses)}


@dataclass(frozen=True)
class Plan:
    """What a class follows. ``mode`` one of ``MODES``; ``recall`` bumped by "bring back"; ``page`` an app
    page script ("app_pages/decode.py": followers check it against the app's list); ``lesson`` a shipped
    lesson's name and ``stop`` its stop on screen, from 0; ``stop_revealed`` the teacher revealed this
    stop's answer; ``request`` the decode request and ``step`` its decode steps taken; ``settings`` the
    settings of the teacher's page, any page but the decode page ({setting: value} of ``core.lesson.pages``:
    the ruler's scale, the memory page's preset, the Practice page's exercise and numbers, …); ``question``
    on screen to the class; ``join_shown`` the display shows the join code and its QR code; ``layer`` and
    ``head`` the attention the teacher's stage shows (a head index, or ``"mean"`` over heads; None: the
    follower's own), which the display shows too."""

    mode: str = "follow"
    recall: int = 0
    page: str | None = None
    lesson: str | None = None
    stop: int | None = None
    stop_revealed: bool = False
    request: Request | None = None
    step: int = 0
    settings: dict | None = None
    question: Question | None = None
    join_shown: bool = False
    layer: int | None = None
    head: int | str | None = None

    def to_json(self) -> dict:
        """Plain JSON types, with ``"schema": SCHEMA``."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["request"] = None if self.request is None else self.request.to_json()
        d["question"] = None if self.question is None else self.question.to_json()
        d["settings"] = None if self.settings is None else dict(self.settings)
        return {"schema": SCHEMA, **d}

    @classmethod
    def from_json(cls, data) -> Plan:
        """The plan a JSON object holds: ``{}`` is ``Plan()`` (no publish yet); unknown keys are ignored.
        ValueError (a plain message naming the field) for a wrong type, an unknown mode or another schema."""
        d = want_object("plan", data)
        if not d:
            return cls()
        if d.get("schema") != SCHEMA:
            raise fail("plan.schema", f"{SCHEMA} (this app's plan schema)", d.get("schema"))
        request, question = d.get("request"), d.get("question")
        return cls(
            mode=want_text("plan.mode", d.get("mode", "follow"), MODES),
            recall=want_whole("plan.recall", d.get("recall", 0)),
            page=want_text("plan.page", d.get("page"), optional=True),
            lesson=want_text("plan.lesson", d.get("lesson"), optional=True),
            stop=want_whole("plan.stop", d.get("stop"), optional=True),
            stop_revealed=want_flag("plan.stop_revealed", d.get("stop_revealed", False)),
            request=None if request is None else Request.from_json(request),
            step=want_whole("plan.step", d.get("step", 0)),
            settings=_settings(d.get("settings"), d.get("page")),
            question=None if question is None else Question.from_json(question),
            join_shown=want_flag("plan.join_shown", d.get("join_shown", False)),
            layer=want_whole("plan.layer", d.get("layer"), optional=True),
            head=_head(d.get("head")),
        )


def _settings(value, page) -> dict | None:
    """A plan's page settings: None, or {setting: value} of the plan's page (``core.lesson.pages``), each value
    valid against that setting's schema (a store is never trusted to hold what the console wrote)."""
    if value is None:
        return None
    d = want_object("plan.settings", value)
    spec = next((s for s in PAGES.values() if s.script == page), None)
    if spec is None:
        raise fail("plan.settings", "settings of one of the app's pages (plan.page)", page)
    for name, v in d.items():
        if name not in spec.settings:
            raise fail(f"plan.settings.{name}", f"a setting of {spec.title}", name)
        if not STRICT_VALIDATOR(spec.settings[name]).is_valid(v):
            raise fail(f"plan.settings.{name}", "a value its page allows", v)
    return d


def page_settings(page: str | None, settings) -> dict | None:
    """What a plan carries of typed page ``settings`` (``core.lesson.pages.PageSpec.settings_type``) of the page
    script ``page``: the settings its schema allows ({setting: value}); None for no settings. A value a lesson
    could not set either (the memory page's typed terms' "Custom" preset) is left out: followers keep their own."""
    spec = next((s for s in PAGES.values() if s.script == page), None)
    if settings is None or spec is None:
        return None
    values = {k: v for k, v in asdict(settings).items() if v is not None and k in spec.settings}
    out = {k: v for k, v in values.items() if STRICT_VALIDATOR(spec.settings[k]).is_valid(v)}
    return out or None


def _head(value) -> int | str | None:
    """A plan's head: None, a head index, or "mean" (the mean over heads)."""
    if value is None or value == MEAN_HEAD:
        return value
    return want_whole("plan.head", value)


def plan_text(plan: Plan) -> str:
    """The plan as a store keeps it: compact JSON of ``plan.to_json()``, checked by reading it back
    (``Plan.from_json``). ValueError for anything but a valid ``Plan`` of at most ``PLAN_MAX_BYTES``."""
    if not isinstance(plan, Plan):
        raise ValueError(f"a plan is a core.classroom.plan.Plan, got {type(plan).__name__}")
    try:
        text = json.dumps(plan.to_json(), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise ValueError(f"a plan must be plain JSON: {err}") from None
    Plan.from_json(json.loads(text))  # every field of the right type, as a reader will need it
    if len(text.encode()) > rules.PLAN_MAX_BYTES:
        raise ValueError(f"a plan is at most {rules.PLAN_MAX_BYTES // 1024} kB as JSON, got {len(text.encode())} bytes")
    return text


def question_id(request_uid: str, step: int) -> str:
    """The id under which a class's answers to the question before decode step ``step`` (1, 2, …) of
    request ``request_uid`` are stored: the same for every student who follows that request."""
    return f"{request_uid}:{step}"


def question_entry(question, qid: str, round_: int, revealed: bool) -> Question:
    """A ``core.decode.predict.Question`` as the plan carries it: the right answer, the reason and the
    model's shares only once ``revealed`` (a student's browser never receives them before)."""
    shown = {"answer": question.answer, "explain": question.explain, "shares": tuple(question.shares)}
    return Question(
        id=qid,
        kind=question.kind,
        text=question.text,
        options=tuple(question.options),
        round=round_,
        revealed=revealed,
        **(shown if revealed else {}),
    )


@dataclass(frozen=True)
class Follow:
    """What a student's session does to show the plan. ``page``: switch to this script (None: stay);
    ``lesson``: (name, stop) to start or move to (None: nothing); ``restart``: prefill the plan's
    request afresh and replay ``steps`` steps; else ``steps`` more steps of the request it holds."""

    page: str | None = None
    lesson: tuple[str, int] | None = None
    restart: bool = False
    steps: int = 0


def follow_actions(plan: Plan, pages: set[str], page_now: str, lesson_now, request_uid, steps_now) -> Follow:
    """What a following student's session must do to show ``plan``.

    ``pages``: the app's page scripts (a plan naming any other page is not followed there);
    ``page_now``: the script on screen; ``lesson_now``: (name, stop) running or None; ``request_uid``:
    the teacher request the student's stage holds (None: none); ``steps_now``: its steps taken.
    A student never steps backwards: a stage ahead of the plan is prefilled again and replayed."""
    lesson = (plan.lesson, plan.stop or 0) if plan.lesson else None
    restart, steps = False, 0
    if plan.request is not None:
        if request_uid != plan.request.uid or steps_now is None or steps_now > plan.step:
            restart, steps = True, plan.step
        else:
            steps = plan.step - steps_now
    return Follow(
        page=plan.page if plan.page in pages and plan.page != page_now and lesson is None else None,
        lesson=lesson if lesson != lesson_now else None,
        restart=restart,
        steps=steps,
    )


def counts_line(answered: int, students: int) -> str:
    """The projector's live line: "12 of 40 answered" (never who)."""
    return f"{answered} of {students} answered" if students else "No students have joined yet"
