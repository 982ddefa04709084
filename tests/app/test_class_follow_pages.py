"""Class mode follows every page through its typed settings (issue 54): the console's plan carries {page,
settings, step, question}; a follower applies it with the page owner's ``show`` — the ruler's scale and bits, the
memory page's preset, the paged cache's preset — and a guided lesson's stops, forward, back and left. Sessions are
streamlit's AppTest on one class store, as in tests/app/test_class_mode.py."""

import pytest
from streamlit.testing.v1 import AppTest

from bench.fresh_app import APP
from core.classroom.plan import Plan
from core.classroom.rules import StoreUnavailable
from serve.class_routes import SEAT, TEACHER
from tests.helpers.app_util import click
from ui import memory_terms, paged, present, quant
from ui.classroom import identity
from ui.classroom import keys as class_keys
from ui.classroom.display import DISPLAY_CSS
from ui.decode import keys as decode_keys
from ui.lesson import keys as lesson_keys


@pytest.fixture
def room(store, session):
    """A class with its console and one student, each an AppTest session with its cookie; ``lesson``: the
    console's address opens that shipped lesson at stop 1."""

    def make(**params):
        code, key = store.open_class()
        teacher = session(code, {TEACHER: f"{code}.{key}"}, **params)
        seat = store.join(code, "Ana", client="test")
        student = session(code, {SEAT: f"{code}.{seat.token}"})
        teacher.run()  # a lesson link switches to the stop's page first: the plan is published by that page's run
        return code, teacher, student

    return make


def _page(at: AppTest) -> str:
    return at.session_state[class_keys.CLASS_PAGE_NOW]


def test_the_ruler_follows_the_teachers_scale_and_bits(store, room):
    """The teacher opens the ruler and sets the scale to 0.25 and 3 bits: the student's page is the ruler with
    scale 0.25 and 3 bits (the plan carries the page's settings, not only its name)."""
    code, teacher, ana = room()
    teacher.switch_page("app_pages/quantize.py").run()
    teacher.number_input(key=quant.QUANT_SCALE).set_value(0.25).run()
    teacher.select_slider(key=quant.QUANT_BITS).set_value(3).run()
    plan = store.plan(code)[1]
    assert plan.page == "app_pages/quantize.py" and (plan.settings["scale"], plan.settings["bits"]) == (0.25, 3)
    ana.run()
    assert _page(ana) == "app_pages/quantize.py"
    assert (ana.session_state[quant.QUANT_SCALE], ana.session_state[quant.QUANT_BITS]) == (0.25, 3)
    assert ana.session_state[quant.QUANT_SCALE_MODE] == "set by hand"


def test_the_memory_and_paged_pages_follow_their_presets(store, room):
    """The memory page's preset (Llama-3-8B) with the teacher's lengths, and the paged cache's requests preset,
    reach the student."""
    code, teacher, ana = room()
    teacher.switch_page("app_pages/memory.py").run()
    teacher.selectbox(key=memory_terms.MEMORY_PRESET).set_value("Llama-3-8B (GQA)").run()
    teacher.text_input(key=memory_terms.MEMORY_T).set_value("1024, 32768").run()
    ana.run()
    assert _page(ana) == "app_pages/memory.py"
    assert ana.session_state[memory_terms.MEMORY_PRESET] == "Llama-3-8B (GQA)"
    assert ana.session_state[memory_terms.MEMORY_T] == "1024, 32768"  # kept over the preset's own 8192
    assert ana.session_state[memory_terms.MEMORY_H] == 8  # the preset's terms copied into the boxes
    teacher.switch_page("app_pages/paged.py").run()
    teacher.selectbox(key=paged.PAGED_PRESET).set_value("one long and many short").run()
    ana.run()
    assert (_page(ana), ana.session_state[paged.PAGED_PRESET]) == ("app_pages/paged.py", "one long and many short")


def test_a_follower_on_a_lessons_first_stop_settles_even_when_a_plan_names_another_page(store, room):
    """Stop 1 is the worked example: a plan that still names the decode page (published before the stop's page
    ran) leaves the student on the stop's page, and its run ends (it reran without end, on an empty page)."""
    code, teacher, ana = room(lesson="fifteen-minutes", stop="1")
    assert store.plan(code)[1].page == "app_pages/worked.py"  # the console names the stop's page
    key = teacher.session_state[class_keys.CLASS_KEY]
    store.publish(code, key, Plan(lesson="fifteen-minutes", stop=0, page="app_pages/decode.py"))
    ana.run()
    ana.run()
    assert not ana.exception
    assert (ana.session_state[lesson_keys.LESSON_STOP], _page(ana)) == (0, "app_pages/worked.py")


def test_followers_walk_the_lesson_forward_back_and_leave_it_with_the_teacher(store, room):
    """The console goes through every stop and back to stop 1: after each move the student shows the same stop on
    its page; when the teacher leaves the lesson, the student's lesson bar goes too."""
    code, teacher, ana = room(lesson="fifteen-minutes", stop="1")
    lesson = teacher.session_state[lesson_keys.LESSON]
    for k in [*range(1, len(lesson.stops)), *range(len(lesson.stops) - 2, -1, -1)]:
        teacher.button(key=lesson_keys.LESSON_NEXT if k > teacher.session_state[lesson_keys.LESSON_STOP] else
                       lesson_keys.LESSON_PREV).click().run()  # fmt: skip
        assert not teacher.exception, (k, teacher.exception)
        assert teacher.session_state[lesson_keys.LESSON_STOP] == k
        ana.run()
        assert not ana.exception, (k, ana.exception)
        assert (ana.session_state[lesson_keys.LESSON_STOP], _page(ana)) == (k, lesson.stops[k].script), k
    teacher.button(key=lesson_keys.LESSON_LEAVE).click().run()
    assert store.plan(code)[1].lesson is None
    ana.run()
    assert ana.session_state[lesson_keys.LESSON_NAME] is None
    assert not [b for b in ana.button if b.key == lesson_keys.LESSON_NEXT]


def _said(at: AppTest) -> str:
    return " ".join(str(e.value) for e in [*at.info, *at.warning, *at.markdown, *at.caption])


def test_a_class_lost_by_its_store_is_said_on_the_console_and_the_display_stays_without_controls(
    store, room, monkeypatch
):
    """The class disappears from the store (ended elsewhere, or a store back empty): the console says so in a
    sentence (its bar had vanished without a word); the display says the class has ended and stays a display:
    presenter mode on, its frame still hiding every control."""
    code, teacher, ana = room()
    monkeypatch.setattr(identity, "browser_cookies", dict)  # the display has no cookie
    display = AppTest.from_file(APP, default_timeout=60)
    display.query_params.update({"class": code, "view": "display"})
    display.run()
    assert display.session_state[class_keys.CLASS_ROLE] == "display"
    store.end(code, teacher.session_state[class_keys.CLASS_KEY])
    teacher.run()
    assert "This class has ended" in _said(teacher) and teacher.session_state[class_keys.CLASS_ROLE] is None
    display.run()
    assert "close this tab" in _said(display)
    assert display.session_state[class_keys.CLASS_DISPLAY_ENDED] and display.session_state[present.PRESENT]
    display.run()  # and on every later run: still the display's frame, whose style sheet hides the controls
    assert any(DISPLAY_CSS.strip() in str(m.value) for m in display.markdown)


def test_predict_first_asks_on_and_a_reloaded_console_keeps_the_open_question_and_its_answers(store, room, monkeypatch):
    """The order docs/class-mode.md gives: turning Predict first on asks the next step's question; → reveals it
    and takes the step. A console reloaded while a question is open asks the same question again (its id kept),
    so the answer a student gave before the reload is still counted; → then reveals it."""
    code, teacher, ana = room()
    click(teacher, "Prefill")
    teacher.toggle(key=decode_keys.DECODE_PREDICT).set_value(True).run()
    q = store.plan(code)[1].question
    assert q is not None and not q.revealed and teacher.session_state[decode_keys.DECODE_SESSION].n_steps == 0
    assert store.answer(code, ana.session_state[class_keys.CLASS_TOKEN], q.id, 1, 0)
    again = AppTest.from_file(APP, default_timeout=60)  # the console's F5: a new session, the same cookie
    again.query_params["class"] = code
    cookie = {TEACHER: f"{code}.{teacher.session_state[class_keys.CLASS_KEY]}"}
    monkeypatch.setattr(identity, "browser_cookies", lambda: dict(cookie))
    again.run()
    assert not again.exception, again.exception
    still = store.plan(code)[1].question
    assert (still.id, still.revealed, store.answered(code, still.id, 1)) == (q.id, False, 1)
    click(again, "Step ▸")
    shown = store.plan(code)[1].question
    assert (shown.id, shown.revealed) == (q.id, True) and again.session_state[decode_keys.DECODE_SESSION].n_steps == 1


def test_during_a_store_outage_a_student_still_sees_the_open_question_and_the_answer_waits(store, room, monkeypatch):
    """The store goes out of reach while a question is open: the student's page says so and keeps the question
    with its buttons (it disappeared); the answer given meanwhile waits in the session and is counted once the
    store is back. After the reveal, a wrong pick is marked (a cross) beside the right one (a check)."""
    code, teacher, ana = room()
    click(teacher, "Prefill")
    teacher.toggle(key=decode_keys.DECODE_PREDICT).set_value(True).run()
    q = store.plan(code)[1].question
    ana.run()

    def away(*_, **__):
        raise StoreUnavailable()

    with monkeypatch.context() as m:
        for name in ("plan", "info", "pulse", "answer", "my_answer"):
            m.setattr(type(store), name, away)
        ana.run()
        said = " ".join(str(w.value) for w in ana.warning)
        assert "Lost the connection to the class" in said
        picks = [b for b in ana.button if b.key and b.key.startswith(f"{class_keys.CLASS_PICK}.{q.id}.1.")]
        assert len(picks) == len(q.options)
        wrong = len(q.options) - 1  # the last option
        picks[wrong].click().run()
        assert ana.session_state[class_keys.CLASS_PENDING] == {(q.id, 1): wrong}
    ana.run()  # the store is back: the answer waiting here goes
    assert store.answered(code, q.id, 1) == 1 and ana.session_state[class_keys.CLASS_PENDING] == {}
    click(teacher, "Step ▸")  # the reveal
    ana.run()
    shown = store.plan(code)[1].question
    icons = {b.key.rsplit(".", 1)[-1]: b.icon for b in ana.button if b.key and b.key.startswith(class_keys.CLASS_PICK)}
    assert icons[str(shown.answer)] == ":material/check:"
    if shown.answer != wrong:
        assert icons[str(wrong)] == ":material/close:"


def _plan_for_script():
    import streamlit as st

    from core.classroom.plan import Plan
    from ui.classroom import follow
    from ui.classroom import keys as class_keys

    st.session_state[class_keys.CLASS_PLAN] = (3, Plan(step=2))
    st.session_state[class_keys.CLASS_CODE] = "K7QX2M"
    st.session_state["same"] = follow.plan_for({"version": 3, "students": 2, "answered": 1})
    st.session_state["moved"] = follow.plan_for({"version": 4, "students": 2, "answered": 1})


def test_a_pulse_whose_plan_version_did_not_move_reads_no_plan(monkeypatch):
    """A pulse for a count (a classmate joined or answered) carries the plan version the follower holds: no store
    read (each listening page read the store 2–3 times per pulse); a moved version reads the plan once."""
    reads = []

    class Store:
        def plan(self, code):
            reads.append(code)
            return (4, Plan(step=3))

    monkeypatch.setattr(identity, "store", Store)
    at = AppTest.from_function(_plan_for_script, default_timeout=30)
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["same"] == (3, Plan(step=2)) and at.session_state["moved"] == (4, Plan(step=3))
    assert reads == ["K7QX2M"]


def test_a_second_consoles_step_keeps_the_pause_the_first_set(store, room, monkeypatch):
    """Two consoles of one class (a paired device): the first pauses the class; the second, which had not seen the
    pause, takes a Step: the class stays paused (the second console's Step undid the first's Pause)."""
    code, first, ana = room()
    cookie = {TEACHER: f"{code}.{first.session_state[class_keys.CLASS_KEY]}"}
    monkeypatch.setattr(identity, "browser_cookies", lambda: dict(cookie))
    second = AppTest.from_file(APP, default_timeout=60)
    second.query_params["class"] = code
    second.run()
    click(second, "Prefill")
    first.run()
    click(first, "Pause class")
    assert store.plan(code)[1].mode == "paused"
    click(second, "Step ▸")
    plan = store.plan(code)[1]
    assert (plan.mode, plan.step) == ("paused", 1)
    assert second.session_state[class_keys.CLASS_MODE] == "paused"


def test_a_lesson_stops_replay_cut_short_goes_on_in_the_next_run(monkeypatch):
    """Stop 2 replays its request to step 11. A run cut short after 3 steps (on a busy machine another run was
    asked for meanwhile) leaves the target in place, and the next run takes the stage on to step 11 (it stayed at
    step 3: the suite's accessibility sweep waited 60 s there)."""
    from ui.decode import actions

    step_now, taken = actions._step_now, []

    def cut_after_three():
        if len(taken) == 3:
            raise RuntimeError("the run is cut short")
        taken.append(1)
        step_now()

    monkeypatch.setattr(actions, "_step_now", cut_after_three)
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"lesson": "fifteen-minutes", "stop": "2"})
    at.run()
    at.run()  # the lesson link's page switch
    assert at.session_state[decode_keys.DECODE_SESSION].n_steps == 3
    monkeypatch.setattr(actions, "_step_now", step_now)
    at.run()
    assert at.session_state[decode_keys.DECODE_SESSION].n_steps == 11
    assert decode_keys.URL_STEP not in at.session_state


def test_a_follower_is_offered_no_lesson_of_its_own(room):
    """The sidebar's guided-lesson section (a lesson to start, the speaker notes' switch) is the console's and a
    student's alone, not a follower's: a student the teacher leads would otherwise turn on the teacher's notes."""
    code, teacher, ana = room()
    ana.run()
    assert "Teacher view: speaker notes" in [t.label for t in teacher.sidebar.toggle]
    assert "Teacher view: speaker notes" not in [t.label for t in ana.sidebar.toggle]
    assert "Start this lesson" not in [b.label for b in ana.sidebar.button]
