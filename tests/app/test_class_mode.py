"""Class mode through the app's own script (streamlit's AppTest): a console's session and followers' sessions on
one class store. A session's credential is the cookie the class routes set (tests/serve/test_class_routes.py and the
browser tests use the real ones); here each session is handed the cookie the route would have set."""

import numpy as np
import pytest

from serve.class_routes import SEAT, TEACHER
from tests.helpers.app_util import charts, click, plotly_array
from ui import practice as practice_ui
from ui import present as present_keys
from ui.classroom import keys as class_keys
from ui.decode import keys as decode_keys


def _class(store, session, students: int = 2):
    code, key = store.open_class()
    teacher = session(code, {TEACHER: f"{code}.{key}"})
    seats = [store.join(code, f"S{i}", client=f"browser-{i}") for i in range(students)]
    followers = [session(code, {SEAT: f"{code}.{seat.token}"}) for seat in seats]
    return code, teacher, followers


def test_students_follow_the_teachers_request_on_their_own_sessions(store, session):
    """Same prompt, seed and step: the students' own models choose the teacher's tokens, each with a cache of its
    own (nothing is shared but the plan), and a following student has no Prefill of their own."""
    code, teacher, (ana, bo) = _class(store, session)
    assert teacher.session_state[class_keys.CLASS_ROLE] == "teacher"
    assert [s.session_state[class_keys.CLASS_SEAT] for s in (ana, bo)] == [1, 2]
    click(teacher, "Prefill")
    click(teacher, "Step ▸")
    click(teacher, "Step ▸")
    mine = teacher.session_state[decode_keys.DECODE_SESSION]
    assert mine.n_steps == 2
    for student in (ana, bo):
        student.run()  # what the class's event stream asks for when the plan changed
        theirs = student.session_state[decode_keys.DECODE_SESSION]
        assert (theirs.n_steps, theirs.outputs, theirs.prompt_ids) == (2, mine.outputs, mine.prompt_ids)
        assert theirs.cache is not mine.cache
        assert not [b for b in student.button if b.label == "Prefill"]


def test_no_key_or_seat_token_reaches_an_address_or_a_page(store, session):
    """The console's and a student's addresses carry the class code only; neither page shows the key or a token."""
    code, teacher, (ana, _) = _class(store, session)
    key, token = teacher.session_state[class_keys.CLASS_KEY], ana.session_state[class_keys.CLASS_TOKEN]
    for at in (teacher, ana):
        assert {k: list(v) if not isinstance(v, str) else [v] for k, v in at.query_params.items()} == {"class": [code]}
        shown = " ".join(str(e.value) for e in [*at.markdown, *at.caption, *at.text, *at.info, *at.warning])
        assert key not in shown and token not in shown


def test_a_cookie_for_another_class_or_no_cookie_gives_no_role(store, session):
    """A teacher cookie of another class, a forged key and no cookie at all: the join form, never the console."""
    code, key = store.open_class()
    other, other_key = store.open_class()
    for cookies in ({TEACHER: f"{other}.{other_key}"}, {TEACHER: f"{code}.forged"}, {}):
        at = session(code, cookies)
        assert at.session_state[class_keys.CLASS_ROLE] is None and at.session_state[class_keys.CLASS_JOIN_CODE] == code


@pytest.mark.parametrize("raw", ["ZZZZZZ", "<b>K7Q</b>"])
def test_an_unknown_or_hostile_code_in_the_address_is_said(store, session, raw):
    """?class= with a code naming no class, or not a code at all: a sentence says so (not a bare join form)."""
    at = session(raw)
    said = " ".join(w.value for w in at.warning)
    assert ("No class ZZZZZZ is running" in said) if raw == "ZZZZZZ" else ("is not a class code" in said)


def test_nicknames_reach_the_console_literally_and_never_the_students(store, session):
    """A hostile nickname reaches the console's roster as typed and no student's page."""
    code, key = store.open_class()
    hostile = "<b>Ana</b> **x** :red[y] 🙂"
    store.join(code, hostile, client="ana")
    seat = store.join(code, "Bo", client="bo")
    other = session(code, {SEAT: f"{code}.{seat.token}"})
    assert hostile not in str([m.value for m in other.markdown]) + str([c.value for c in other.caption])
    rows = store.roster(code, key, "no-question", 1)
    assert [r.nickname for r in rows] == [hostile, "Bo"]


def test_pause_resume_and_a_reloaded_console_keep_the_class(store, session):
    """Pause shows a student's cover; the console's reload keeps the class paused and takes the request back at its
    step; Resume takes the cover away."""
    code, teacher, (ana,) = _class(store, session, students=1)
    click(teacher, "Prefill")
    click(teacher, "Step ▸")
    click(teacher, "Pause class")
    assert store.plan(code)[1].mode == "paused"
    ana.run()
    assert any("Paused by your teacher" in m.value for m in ana.markdown)
    again = session(code, {TEACHER: f"{code}.{teacher.session_state[class_keys.CLASS_KEY]}"})  # the console reloaded
    assert again.session_state[class_keys.CLASS_MODE] == "paused"
    assert again.session_state[decode_keys.DECODE_SESSION].n_steps == 1  # the stage is back at the class's step
    click(again, "Resume")
    ana.run()
    assert not any("Paused by your teacher" in m.value for m in ana.markdown)


def test_a_practice_question_posed_to_the_class_counts_answers_and_names_the_mistake(store, session):
    """Exercise 3 (768 MiB of KV cache) posed as a choice among the right answer and the exercise's own named
    mistakes; a student who picks 1.5 GiB is told which mistake it is."""
    code, teacher, (ana,) = _class(store, session, students=1)
    teacher.switch_page("app_pages/practice.py").run()
    teacher.selectbox(key=practice_ui.PRACTICE_PICK).set_value("ch30-3").run()
    click(teacher, "Pose")
    q = store.plan(code)[1].question
    assert q.id == "practice:ch30-3:0:bytes" and q.answer is None and "768 MiB" in q.options
    ana.run()
    assert (ana.session_state[practice_ui.PRACTICE_EX], ana.session_state[practice_ui.PRACTICE_SEED]) == ("ch30-3", 0)
    wrong = q.options.index("1.5 GiB")
    [button] = [b for b in ana.button if b.key == f"{class_keys.CLASS_PICK}.{q.id}.1.{wrong}"]
    button.click().run()
    assert store.tally(code, q.id, 1, len(q.options)) == [int(i == wrong) for i in range(len(q.options))]
    click(teacher, "Reveal to the class")
    shown = store.plan(code)[1].question
    assert shown.options[shown.answer] == "768 MiB" and shown.misses[wrong]
    ana.run()
    said = " ".join(h.proto.body for h in ana.get("html"))
    assert "Not this time." in said and shown.misses[wrong] in said and "The answer is 768 MiB." in said


def test_a_display_follows_without_buttons_and_hides_a_stops_answer_until_revealed(store, session):
    """The display (?view=display) is in presenter mode, has no answer buttons and, on the lesson's stop 4 (KV
    memory), hides "Query heads do not appear" until the console reveals it."""
    code, teacher, _ = _class(store, session, students=0)
    teacher.query_params["lesson"] = "fifteen-minutes"
    teacher.query_params["stop"] = "4"
    teacher = session(
        code, {TEACHER: f"{code}.{teacher.session_state[class_keys.CLASS_KEY]}"}, lesson="fifteen-minutes", stop="4"
    )
    display = session(code, {}, view="display")
    assert display.session_state[class_keys.CLASS_ROLE] == "display" and display.session_state[present_keys.PRESENT]
    display.run()
    captions = " ".join(c.value for c in display.caption)
    assert "Query heads do not appear" not in captions
    click(teacher, "Reveal on the display")
    display.run()
    assert "Query heads do not appear" in " ".join(c.value for c in display.caption)


def test_a_student_opens_inside_the_cache_on_their_own_cache(store, session):
    """A following student opens "Inside the cache" after the teacher's Prefill and 2 Steps: its key rows are their
    own cache tensors' (not the teacher's object), and no earlier row changed before Step 2."""
    code, teacher, (ana,) = _class(store, session, students=1)
    click(teacher, "Prefill")
    click(teacher, "Step ▸")
    click(teacher, "Step ▸")
    ana.session_state[decode_keys.DECODE_CACHE_OPEN] = True
    ana.run()
    theirs = ana.session_state[decode_keys.DECODE_SESSION]
    assert theirs.cache is not teacher.session_state[decode_keys.DECODE_SESSION].cache and theirs.n_steps == 2
    [fig] = [c for c in charts(ana) if [t.get("name") for t in c["data"]] == ["keys K", "values V"]]
    keys = np.array(plotly_array(fig["data"][0]["z"]), dtype=np.float32)
    assert np.array_equal(keys, theirs.cache.k_cache[3][0, 0, : theirs.n_positions].numpy())
    assert "bit for bit what was written before Step 2" in ana.success[0].value


def _sidebar_submit(at, box_key: str, typed: str, button: str):
    at.text_input(key=box_key).input(typed)
    [submit] = [b for b in at.sidebar.button if b.label == button]
    submit.click().run()
    assert not at.exception, at.exception
    return " ".join(w.value for w in at.warning).replace("\\", "")  # shown literally: markdown escaped


def test_a_student_with_only_the_code_joins_from_the_sidebar(store, monkeypatch):
    """The sidebar's "Join a class" box (issue 55 item 4): a class's code typed as read off the projector ("k7q x2m":
    spacing and case) and a nickname are sent to the join route from the sidebar (a phone's sidebar covers the
    page); a pairing code or a wrong shape there is said and nothing is sent; a class code in the teacher's pairing
    box is pointed to "Join a class" rather than sent as a wrong pairing code."""
    from streamlit.testing.v1 import AppTest

    from bench.fresh_app import APP
    from ui.classroom import identity

    code, _ = store.open_class()
    monkeypatch.setattr(identity, "browser_cookies", dict)
    at = AppTest.from_file(APP, default_timeout=60).run()
    said = _sidebar_submit(at, class_keys.CLASS_CODE_TYPED, "123456", "Join a class")
    assert "“123456” is a teacher's one-time pairing code, not a class code" in said
    assert said.count("pairing code, not a class code") == 1  # said once, under the box (it was drawn twice)
    assert at.session_state[class_keys.CLASS_SUBMITTED] is None
    at.text_input(key=class_keys.CLASS_CODE_NICKNAME).input("<b>Cy</b>")
    spaced = f" {code[:3].lower()} {code[3:].lower()} "
    _sidebar_submit(at, class_keys.CLASS_CODE_TYPED, spaced, "Join a class")
    assert at.session_state[class_keys.CLASS_SUBMITTED] == ("join-sidebar", {"code": code, "nickname": "<b>Cy</b>"})
    at.session_state[class_keys.CLASS_SUBMITTED] = None
    said = _sidebar_submit(at, class_keys.CLASS_PAIR_TYPED, code, "Use this device as the console")
    assert f"“{code}” is a class code: students join with it under “Join a class” above" in said
    assert at.session_state[class_keys.CLASS_SUBMITTED] is None  # nothing was sent to the pairing route


def test_the_teacher_removes_a_seat_from_the_roster_and_its_place_is_free(store, session):
    """Issue 55 item 2: under More the roster names each seat; choosing one and Remove frees it (the class's count
    drops, its answers go), says so, and a reloaded page of the removed student gets the join form again."""
    code, key = store.open_class(seat_cap=2)
    teacher = session(code, {TEACHER: f"{code}.{key}"})
    ana = store.join(code, "Ana", client="a")
    store.join(code, "<b>Bo</b>", client="b")
    teacher.run()
    box = teacher.selectbox(key=class_keys.CLASS_REMOVE_SEAT)
    assert box.options == ["Seat 1 · Ana", "Seat 2 · <b>Bo</b>"]
    box.select(1).run()
    [remove] = [b for b in teacher.button if b.label == "Remove"]
    remove.click().run()
    assert not teacher.exception, teacher.exception
    assert "Seat 1 · Ana removed: its place is free." in " ".join(s.value for s in teacher.toast).replace("\\", "")
    assert store.info(code).students == 1 and store.seat(code, ana.token) is None
    assert store.join(code, "Cy", client="c").number == 3  # the freed place, under a number never given before
    again = session(code, {SEAT: f"{code}.{ana.token}"})
    assert (
        again.session_state[class_keys.CLASS_ROLE] is None and again.session_state[class_keys.CLASS_JOIN_CODE] == code
    )
