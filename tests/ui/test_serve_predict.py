"""The class's question before a long document (``ui.classroom.serve_predict``): its answer follows the engine's
chunked-prefill setting, and nothing of it is on a student's screen before the reveal."""

import json

from ui.classroom.serve_predict import EXPLAIN, OPTIONS, question


def test_the_answer_is_a_stop_without_chunking_and_a_slowdown_with_it():
    off, on = question(False, 1, revealed=True), question(True, 1, revealed=True)
    assert OPTIONS[off.answer] == "Every stream stops for a while" and off.explain == EXPLAIN[False]
    assert OPTIONS[on.answer] == "Every stream slows a little" and on.explain == EXPLAIN[True]


def test_before_the_reveal_the_question_carries_no_answer_and_each_is_new():
    asked = question(True, 3)
    assert asked.answer is None and not asked.revealed and asked.explain == ""
    assert "Chunked prefill" not in json.dumps(asked.to_json())  # as the plan stores it for every screen
    assert question(True, 3).id != question(True, 4).id  # a second question's answers start afresh
