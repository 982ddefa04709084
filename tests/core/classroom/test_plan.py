"""The teacher's plan and what a following student does with it (core/classroom/plan.py)."""

from __future__ import annotations

import json

import pytest

from core.classroom.plan import Follow, counts_line, follow_actions, question_entry, question_id
from core.decode.predict import Question

PAGES = {"app_pages/decode.py", "app_pages/memory.py"}
REQUEST = {"uid": "abc", "prompt": "User: hi", "strategy": "greedy", "temperature": 0.8, "top_k": 20, "seed": 0}


def plan(**over) -> dict:
    base = {
        "mode": "follow",
        "page": "app_pages/decode.py",
        "lesson": None,
        "stop": None,
        "request": REQUEST,
        "step": 5,
    }
    return {**base, **over}


def test_a_new_student_prefills_the_request_and_replays_the_teachers_steps():
    todo = follow_actions(plan(), PAGES, "app_pages/decode.py", None, None, None)
    assert todo == Follow(page=None, lesson=None, restart=True, steps=5)


def test_a_student_two_steps_behind_takes_two_steps_without_prefilling_again():
    assert follow_actions(plan(), PAGES, "app_pages/decode.py", None, "abc", 3) == Follow(steps=2)


def test_a_student_ahead_of_the_teacher_is_prefilled_again_never_stepped_backwards():
    # the teacher pressed Prefill again on the same prompt: fewer steps than the student holds
    assert follow_actions(plan(step=1), PAGES, "app_pages/decode.py", None, "abc", 4) == Follow(restart=True, steps=1)


def test_a_new_request_of_the_teacher_restarts_the_student():
    todo = follow_actions(plan(request={**REQUEST, "uid": "def"}, step=0), PAGES, "app_pages/decode.py", None, "abc", 7)
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


QUESTION = Question("token", "Which token?", (" Lyon", " Mira", "."), 1, "It chose ␣Mira.", shares=(0.1, 0.85, 0.05))


def test_the_right_answer_travels_only_after_the_reveal():
    open_ = question_entry(QUESTION, question_id("abc", 3), 1, revealed=False)
    assert open_["id"] == "abc:3" and "answer" not in open_ and "explain" not in open_ and "shares" not in open_
    assert "Mira." not in json.dumps(open_)  # not even inside the explanation
    shown = question_entry(QUESTION, "abc:3", 2, revealed=True)
    assert (shown["answer"], shown["round"], shown["shares"]) == (1, 2, [0.1, 0.85, 0.05])
    json.dumps(shown)  # the store keeps plans as JSON


@pytest.mark.parametrize(
    ("answered", "students", "said"), [(12, 40, "12 of 40 answered"), (0, 0, "No students have joined yet")]
)
def test_the_projectors_count_line(answered, students, said):
    assert counts_line(answered, students) == said
