"""The teacher's plan: what a class follows, as a plain JSON-able dict (issue 41).

The teacher's session publishes it to the class store (``core.classroom.store``) after every action;
each student's session reads it and works out what to do to show the same thing with its *own*
model and cache (``follow_actions``): nothing is shared but the plan. A plan holds no path a
student's session would open (a page is one of the app's own scripts, checked against the list the
app gives) and no right answer before the teacher reveals it.

Plan fields: ``mode`` ("follow", "paused", "released"), ``recall`` (bumped by "bring back"),
``page`` (the teacher's page script), ``lesson``/``stop`` (a shipped lesson's name and the stop on
screen, from 0, or None), ``request`` (the decode request's prompt and settings, or None), ``step``
(its decode steps taken) and ``question`` (the predict-first question on screen, or None).
"""

from __future__ import annotations

from dataclasses import dataclass

MODES = ("follow", "paused", "released")
REQUEST_FIELDS = ("uid", "prompt", "strategy", "temperature", "top_k", "seed", "dtype", "bits", "model")


def question_id(request_uid: str, step: int) -> str:
    """The id under which a class's answers to the question before decode step ``step`` (1, 2, …) of
    request ``request_uid`` are stored: the same for every student who follows that request."""
    return f"{request_uid}:{step}"


def question_entry(question, qid: str, round_: int, revealed: bool) -> dict:
    """A ``core.decode.predict.Question`` as the plan carries it: the right answer and the reason
    only once ``revealed`` (a student's browser never receives them before)."""
    entry = {
        "id": qid,
        "kind": question.kind,
        "text": question.text,
        "options": list(question.options),
        "round": round_,
        "revealed": revealed,
    }
    if revealed:
        entry.update(answer=question.answer, explain=question.explain, shares=list(question.shares))
    return entry


@dataclass(frozen=True)
class Follow:
    """What a student's session does to show the plan. ``page``: switch to this script (None: stay);
    ``lesson``: (name, stop) to start or move to (None: nothing); ``restart``: prefill the plan's
    request afresh and replay ``steps`` steps; else ``steps`` more steps of the request it holds."""

    page: str | None = None
    lesson: tuple[str, int] | None = None
    restart: bool = False
    steps: int = 0


def follow_actions(plan: dict, pages: set[str], page_now: str, lesson_now, request_uid, steps_now) -> Follow:
    """What a following student's session must do to show ``plan``.

    ``pages``: the app's page scripts (a plan naming any other page is not followed there);
    ``page_now``: the script on screen; ``lesson_now``: (name, stop) running or None; ``request_uid``:
    the teacher request the student's stage holds (None: none); ``steps_now``: its steps taken.
    A student never steps backwards: a stage ahead of the plan is prefilled again and replayed."""
    page = plan.get("page")
    lesson = (plan["lesson"], int(plan.get("stop") or 0)) if plan.get("lesson") else None
    request, step = plan.get("request"), int(plan.get("step") or 0)
    restart, steps = False, 0
    if request is not None:
        if request_uid != request["uid"] or steps_now is None or steps_now > step:
            restart, steps = True, step
        else:
            steps = step - steps_now
    return Follow(
        page=page if page in pages and page != page_now and lesson is None else None,
        lesson=lesson if lesson != lesson_now else None,
        restart=restart,
        steps=steps,
    )


def counts_line(answered: int, students: int) -> str:
    """The projector's live line: "12 of 40 answered" (never who)."""
    return f"{answered} of {students} answered" if students else "No students have joined yet"
