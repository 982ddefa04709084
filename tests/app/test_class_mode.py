"""Class mode through the app's own script (streamlit's AppTest): a teacher's session and students'
sessions, one class store (issue 41)."""

import asyncio
import threading

import pytest
from streamlit.runtime.scriptrunner import RunDescriptor, ScriptRunnerEvent
from streamlit.testing.v1 import AppTest

from bench.fresh_app import APP
from core import state
from core.classroom.plan import Plan
from core.classroom.store import open_store
from tests.helpers.app_util import click
from tests.helpers.poll import until
from ui.classroom import rerun


@pytest.fixture
def store_url(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path}/classes.db"
    monkeypatch.setenv("EXPLAINER_CLASS_STORE", url)
    return url


def _app(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, at.exception
    return at


def _teacher() -> tuple[AppTest, str]:
    at = _app(**{"class": "new"})
    assert at.session_state[state.CLASS_ROLE] == "teacher"
    return at, at.session_state[state.CLASS_CODE]


def _student(code: str, nickname: str = "") -> AppTest:
    at = _app(**{"class": code})
    at.text_input(key=state.CLASS_NICKNAME).input(nickname)
    click(at, "Join")
    assert at.session_state[state.CLASS_ROLE] == "student", [e.value for e in at.warning]
    return at


def test_students_follow_the_teachers_request_on_their_own_sessions(store_url):
    """Same prompt, seed and step: the students' own models choose the teacher's tokens, each with a
    cache of its own (nothing is shared but the plan)."""
    teacher, code = _teacher()
    ana, bo = _student(code, "Ana"), _student(code)
    assert [s.session_state[state.CLASS_SEAT] for s in (ana, bo)] == [1, 2]
    click(teacher, "Prefill")
    click(teacher, "Step ▸")
    click(teacher, "Step ▸")
    mine = teacher.session_state[state.DECODE_SESSION]
    assert mine.n_steps == 2
    for student in (ana, bo):
        student.run()  # what the strip's poll asks for when the plan changed
        theirs = student.session_state[state.DECODE_SESSION]
        assert (theirs.n_steps, theirs.outputs, theirs.prompt_ids) == (2, mine.outputs, mine.prompt_ids)
        assert theirs.cache is not mine.cache
        assert not [b for b in student.button if b.label == "Prefill"]  # the teacher leads: no Prefill of their own
    click(teacher, "Step ▸")
    ana.run()
    assert ana.session_state[state.DECODE_SESSION].outputs == teacher.session_state[state.DECODE_SESSION].outputs


def test_the_teachers_key_stays_in_the_teachers_address(store_url):
    teacher, code = _teacher()
    key = teacher.session_state[state.CLASS_KEY]
    assert teacher.query_params["class"] == code and teacher.query_params["key"] == key
    student = _student(code)
    assert "key" not in student.query_params and student.query_params["seat"]
    assert key not in str(student.query_params)
    # a student's seat token cannot lead: publishing with it is refused by the store
    with pytest.raises(PermissionError):
        open_store(store_url).publish(code, student.session_state[state.CLASS_TOKEN], Plan(mode="paused"))


def test_nicknames_reach_the_teacher_literally_and_never_the_students(store_url):
    teacher, code = _teacher()
    hostile = "<b>Ana</b> **x** :red[y] 🙂"
    _student(code, hostile)
    other = _student(code, "Bo")
    teacher.run()
    table = teacher.sidebar.dataframe[0].value
    assert list(table["nickname"]) == [hostile, "Bo"] and list(table["seat"]) == [1, 2]
    assert hostile not in str([m.value for m in other.markdown]) + str([c.value for c in other.caption])


@pytest.mark.parametrize(
    ("typed", "said"),
    [("ZZZZZZ", "No class ZZZZZZ is running"), ("<b>K7Q</b>", "six letters and digits")],
)
def test_a_wrong_or_hostile_code_is_refused_with_a_message(store_url, typed, said):
    at = _app(**{"class": "ABCDEF"})  # a code of the right shape that names no class
    assert at.session_state[state.CLASS_JOIN_CODE] == "ABCDEF"
    at.text_input(key=state.CLASS_JOIN_CODE).input(typed)
    click(at, "Join")
    assert at.session_state[state.CLASS_ROLE] is None
    assert any(said in w.value for w in at.warning), [w.value for w in at.warning]


def test_a_paused_class_stays_paused_through_the_teachers_reload_and_students_are_frozen(store_url):
    teacher, code = _teacher()
    ana = _student(code)
    click(teacher, "Pause class")
    assert open_store(store_url).plan(code)[1].mode == "paused"
    ana.run()
    assert any("Paused by your teacher" in h.proto.body for h in ana.get("html")), "no pause overlay"
    again = _app(**{"class": code, "key": teacher.session_state[state.CLASS_KEY]})  # the teacher's tab reloaded
    assert again.session_state[state.CLASS_ROLE] == "teacher" and again.session_state[state.CLASS_MODE] == "paused"
    assert open_store(store_url).plan(code)[1].mode == "paused"
    click(again, "Resume")
    ana.run()
    assert not any("Paused by your teacher" in h.proto.body for h in ana.get("html"))


def test_a_practice_question_posed_to_the_class_counts_answers_and_names_the_mistake(store_url):
    """Exercise 3 (the chapter's numbers: 768 MiB of KV cache) posed as a choice among the right answer
    and the exercise's own named mistakes; a student who picks 1.5 GiB is told which mistake it is."""
    teacher, code = _teacher()
    ana = _student(code)
    teacher.switch_page("app_pages/practice.py").run()
    teacher.selectbox(key="practice.pick").set_value("ch30-3").run()
    click(teacher, "Pose")
    q = open_store(store_url).plan(code)[1].question
    assert q.id == "practice:ch30-3:0:bytes" and q.answer is None and not q.misses and "768 MiB" in q.options
    ana.run()
    assert (ana.session_state[state.PRACTICE_EX], ana.session_state[state.PRACTICE_SEED]) == ("ch30-3", 0)
    assert any(m.value.startswith("Example 30.3's larger cache") for m in ana.markdown)  # the exercise on their page
    wrong = q.options.index("1.5 GiB")
    [button] = [b for b in ana.button if b.key == f"class.pick.{q.id}.1.{wrong}"]
    button.click().run()
    assert open_store(store_url).tally(code, q.id, 1, len(q.options)) == [
        int(i == wrong) for i in range(len(q.options))
    ]
    click(teacher, "Reveal to the class")
    shown = open_store(store_url).plan(code)[1].question
    assert shown.options[shown.answer] == "768 MiB" and shown.misses[wrong]
    ana.run()
    said = " ".join(h.proto.body for h in ana.get("html"))
    assert "Not this time." in said and shown.misses[wrong] in said and "The answer is 768 MiB." in said


def test_a_finished_run_waits_until_the_event_loop_has_taken_its_messages():
    """``rerun.hand_over``: the end of a stage's run (or a full run) returns only after the event loop
    ran the callbacks queued before it (AppSession's, carrying the run's elements), so streamlit cannot
    swap in a new ScriptRunner while they wait and drop them (8 of 790 follows lost in bench.class_mode);
    a poll's own run does not wait (the next poll draws it all again)."""
    loop = asyncio.new_event_loop()
    serving = threading.Thread(target=loop.run_forever, daemon=True)
    serving.start()
    gate, queued, order = threading.Event(), [], []

    class Spy:  # the loop, noting the callbacks the receiver queues
        def call_soon_threadsafe(self, callback):
            loop.call_soon_threadsafe(callback)
            queued.append(callback)

        def is_running(self):
            return loop.is_running()

    ended = ScriptRunnerEvent.FRAGMENT_STOPPED_WITH_SUCCESS
    receiver = rerun.hand_over(Spy(), {"strip"})
    try:
        loop.call_soon_threadsafe(gate.wait, 30)  # the event loop busy (other sessions' messages)
        loop.call_soon_threadsafe(order.append, "the run's elements")  # as AppSession's receiver queues them
        receiver(None, event=ended, run_descriptor=RunDescriptor.create(["strip"]))  # a poll: returns at once
        assert queued == []
        stage_run = RunDescriptor.create(["stage"])
        script = threading.Thread(
            target=lambda: (receiver(None, event=ended, run_descriptor=stage_run), order.append("end"))
        )
        script.start()
        until(lambda: queued, 10, "the receiver queues its callback")
        assert order == []  # the stage's run has not ended: its elements still wait behind the busy loop
        gate.set()
        script.join(10)
        assert order == ["the run's elements", "end"]
        receiver(None, event=ScriptRunnerEvent.SCRIPT_STOPPED_FOR_RERUN, run_descriptor=stage_run)  # goes on: no wait
        assert len(queued) == 1
    finally:
        gate.set()
        loop.call_soon_threadsafe(loop.stop)
        serving.join(10)
        loop.close()
