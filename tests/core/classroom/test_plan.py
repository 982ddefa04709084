"""The teacher's plan and what a following student does with it (core/classroom/plan.py)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from core.classroom.plan import (
    SCHEMA,
    Follow,
    Plan,
    Question,
    Request,
    counts_line,
    follow_actions,
    page_settings,
    plan_text,
    question_entry,
    question_id,
)
from core.decode import predict

PAGES = {"app_pages/decode.py", "app_pages/memory.py"}
REQUEST = Request("abc", "User: hi", "greedy", 0.8, 20, 0, "float32", 0, None)


def plan(**over) -> Plan:
    return Plan(**{"page": "app_pages/decode.py", "request": REQUEST, "step": 5, **over})


def test_a_new_student_prefills_the_request_and_replays_the_teachers_steps():
    todo = follow_actions(plan(), PAGES, "app_pages/decode.py", None, None, None)
    assert todo == Follow(page=None, lesson=None, restart=True, steps=5)


def test_a_student_two_steps_behind_takes_two_steps_without_prefilling_again():
    assert follow_actions(plan(), PAGES, "app_pages/decode.py", None, "abc", 3) == Follow(steps=2)


def test_a_student_ahead_of_the_teacher_is_prefilled_again_never_stepped_backwards():
    # the teacher pressed Prefill again on the same prompt: fewer steps than the student holds
    assert follow_actions(plan(step=1), PAGES, "app_pages/decode.py", None, "abc", 4) == Follow(restart=True, steps=1)


def test_a_new_request_of_the_teacher_restarts_the_student():
    todo = follow_actions(
        plan(request=dataclasses.replace(REQUEST, uid="def"), step=0), PAGES, "app_pages/decode.py", None, "abc", 7
    )
    assert todo == Follow(restart=True, steps=0)


def test_the_teachers_page_is_followed_only_if_it_is_one_of_the_apps_pages():
    assert (
        follow_actions(plan(request=None), PAGES, "app_pages/memory.py", None, None, None).page == "app_pages/decode.py"
    )
    hostile = plan(request=None, page="../../etc/passwd")
    assert follow_actions(hostile, PAGES, "app_pages/memory.py", None, None, None).page is None


def test_a_lesson_stop_is_followed_and_its_page_left_to_the_lesson():
    todo = follow_actions(
        plan(request=None, lesson="fifteen-minutes", stop=3), PAGES, "app_pages/memory.py", None, None, None
    )
    assert todo.lesson == ("fifteen-minutes", 3) and todo.page is None
    same = follow_actions(
        plan(request=None, lesson="fifteen-minutes", stop=3), PAGES, "x", ("fifteen-minutes", 3), None, None
    )
    assert same.lesson is None


QUESTION = predict.Question(
    "token", "Which token?", (" Lyon", " Mira", "."), 1, "It chose ␣Mira.", shares=(0.1, 0.85, 0.05)
)


def test_the_right_answer_travels_only_after_the_reveal():
    """Before the reveal the plan's question carries no answer, reason or shares (not even in its JSON);
    after it, all three as the predict-first question has them."""
    open_ = question_entry(QUESTION, question_id("abc", 3), 1, revealed=False)
    assert open_ == Question("abc:3", "token", "Which token?", (" Lyon", " Mira", "."), 1, False)
    assert "Mira." not in json.dumps(Plan(question=open_).to_json())  # not even inside the explanation
    shown = question_entry(QUESTION, "abc:3", 2, revealed=True)
    assert (shown.answer, shown.round, shown.shares, shown.explain) == (1, 2, (0.1, 0.85, 0.05), "It chose ␣Mira.")


@pytest.mark.parametrize(
    ("answered", "students", "said"), [(12, 40, "12 of 40 answered"), (0, 0, "No students have joined yet")]
)
def test_the_projectors_count_line(answered, students, said):
    assert counts_line(answered, students) == said


FULL = Plan(
    mode="paused",
    recall=2,
    page="app_pages/quantize.py",
    lesson="fifteen-minutes",
    stop=3,
    stop_revealed=True,
    request=Request("abc", "Ünï <b>x</b> 🙂", "sample", 0.7, 40, 7, "float64", 4, "qwen2-0.5b", past_end=True),
    step=12,
    settings={"preset": "Ch. 30: the outlier 8", "scale": 0.5, "bits": 3, "clip": False},
    question=Question(
        "practice:ch30-3:5:bytes",
        "practice",
        "How big?",
        ("384 MiB", "768 MiB"),
        2,
        True,
        1,
        "768 MiB.",
        (),
        ("GB", ""),
    ),
    join_shown=True,
)


def test_a_plan_survives_its_json_field_for_field():
    """Every field set away from its default comes back equal through to_json → json text → from_json,
    and the JSON carries the schema and only plain JSON types."""
    data = json.loads(json.dumps(FULL.to_json(), allow_nan=False))
    assert data["schema"] == SCHEMA == 1 and data["settings"] == FULL.settings
    assert data["question"]["options"] == ["384 MiB", "768 MiB"] and data["request"]["bits"] == 4
    assert Plan.from_json(data) == FULL
    assert Plan.from_json({}) == Plan() and Plan.from_json(Plan().to_json()) == Plan()


def test_unknown_keys_are_ignored():
    """A key this app does not know (a newer field) is left out; the rest is read."""
    assert Plan.from_json({**FULL.to_json(), "laser": True}) == FULL


_DELETE = object()  # a value for _with: the field left out


def _with(path: str, value) -> dict:
    """FULL's JSON with the field at dotted ``path`` set to ``value`` (``_DELETE``: left out)."""
    data = FULL.to_json()
    *parents, last = path.split(".")
    target = data
    for name in parents:
        target = target[name]
    if value is _DELETE:
        del target[last]
    else:
        target[last] = value
    return data


@pytest.mark.parametrize(
    ("path", "value", "named"),
    [
        ("schema", 2, "plan.schema"),
        ("schema", _DELETE, "plan.schema"),
        ("mode", "dance", "plan.mode"),
        ("recall", -1, "plan.recall"),
        ("recall", True, "plan.recall"),
        ("page", 3, "plan.page"),
        ("stop", "3", "plan.stop"),
        ("stop_revealed", "yes", "plan.stop_revealed"),
        ("step", 1.5, "plan.step"),
        ("settings", ["ch30-3"], "plan.settings"),
        ("settings", {"scale": -1}, "plan.settings.scale"),
        ("settings", {"bits": 9}, "plan.settings.bits"),
        ("settings", {"colour": "red"}, "plan.settings.colour"),
        ("join_shown", 1, "plan.join_shown"),
        ("request", "abc", "plan.request"),
        ("request.top_k", "20", "plan.request.top_k"),
        ("request.temperature", "hot", "plan.request.temperature"),
        ("request.strategy", "beam", "plan.request.strategy"),
        ("request.dtype", "bfloat16", "plan.request.dtype"),
        ("request.bits", 5, "plan.request.bits"),
        ("request.model", 7, "plan.request.model"),
        ("request.uid", _DELETE, "plan.request.uid"),
        ("question.options", "a,b", "plan.question.options"),
        ("question.options", ["a", 2], "plan.question.options[1]"),
        ("question.options", [], "plan.question"),
        ("question.id", "", "plan.question"),
        ("question.answer", 2, "plan.question.answer"),
        ("question.shares", [0.5, None], "plan.question.shares[1]"),
        ("question.revealed", "true", "plan.question.revealed"),
    ],
)
def test_from_json_refuses_a_wrong_field_and_names_it(path, value, named):
    """A wrong type, an unknown mode or choice, a missing field or another schema: a ValueError whose
    message starts with the field's name."""
    with pytest.raises(ValueError) as refused:
        Plan.from_json(_with(path, value))
    assert str(refused.value).startswith(f"{named}:"), str(refused.value)


def test_an_answer_before_the_reveal_is_refused():
    """A question that carries its answer while not revealed is no plan: the browser would get it early."""
    early = {**FULL.question.to_json(), "revealed": False}
    with pytest.raises(ValueError, match=r"^plan\.question\.answer: .*only once revealed"):
        Plan.from_json({**FULL.to_json(), "question": early})


def test_from_json_refuses_what_is_not_an_object():
    """A list, text or None where the plan's object belongs: a ValueError naming the plan."""
    for bad in ([], "plan", None, 3):
        with pytest.raises(ValueError, match=r"^plan: expected an object"):
            Plan.from_json(bad)


def test_a_plan_carries_only_settings_a_lesson_could_set():
    """The console's page settings travel as {setting: value} its page's schema allows: the ruler's scale and
    bits; not the memory page's "Custom (typed terms)" preset (no lesson can name it: followers keep their own),
    not a setting left None, and nothing at all for a page without settings or a script that is not a page."""
    from core.lesson.pages import PAGES

    ruler = PAGES["quantize"].make({"scale": 0.25, "bits": 3, "values": None})
    assert page_settings("app_pages/quantize.py", ruler) == {"scale": 0.25, "bits": 3}
    memory = PAGES["memory"].make({"preset": "Custom (typed terms)"})
    assert page_settings("app_pages/memory.py", memory) is None
    assert page_settings("app_pages/nowhere.py", ruler) is None and page_settings("app_pages/weights.py", None) is None
    plan = Plan(page="app_pages/quantize.py", settings=page_settings("app_pages/quantize.py", ruler))
    assert Plan.from_json(json.loads(plan_text(plan))) == plan
