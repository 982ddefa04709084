"""A follower's session (a student, or the projector's display) showing the teacher's plan with its own model and
cache: the page, the guided lesson's stop, the decode request (prefilled here from the plan's prompt and settings)
and its steps, the exercise. A full run applies what needs one (``follow``, before any page widget exists); a Step
alone is taken in the decode stage's own fragment (``along``), which the class's event stream reruns.
"""

from __future__ import annotations

import streamlit as st

from core.classroom.plan import MEAN_HEAD, Plan, Request, follow_actions, page_settings
from core.decode import settings as decode_settings
from core.lesson.pages import PAGES as PAGE_SPECS
from core.lesson.stops import shipped_lessons
from serve import step_queue
from ui import models, session
from ui import present as present_keys
from ui.classroom import identity
from ui.classroom import keys as class_keys
from ui.classroom.display import hides as display_hides
from ui.decode import actions
from ui.decode import keys as decode_keys
from ui.decode import page_settings as decode_page
from ui.frame import DECODE_PAGE, PAGES
from ui.lesson import keys as lesson_keys
from ui.lesson import moves
from ui.lesson.moves import go, shipped, start

PAGE_SCRIPTS = frozenset(path for path, _, _ in PAGES)


def plan_now() -> Plan:
    """The plan this session last read (a fresh ``Plan()`` before the first)."""
    return st.session_state.get(class_keys.CLASS_PLAN, (0, Plan()))[1]


def following() -> bool:
    """Whether the teacher leads this session's view now: a follower, not released."""
    return identity.follower() and plan_now().mode != "released"


def paused() -> bool:
    return identity.role() == "student" and plan_now().mode == "paused"


def locked() -> bool:
    """The decode page's own controls are frozen: the teacher leads this session's request."""
    return following()


def read_plan() -> tuple[int, Plan] | None:
    """The class's plan now (None: the class ended; this session leaves it). ``StoreUnavailable`` passes up: the
    caller says the class is out of reach and keeps what it shows."""
    got = identity.store().plan(identity.code())
    if got is None:
        ended = "The class has ended" + (
            ": close this tab." if identity.role() == identity.DISPLAY else ": you are exploring on your own now."
        )
        identity.forget(ended)
        return None
    st.session_state[class_keys.CLASS_PLAN] = got
    return got


def plan_for(pulse: dict | None) -> tuple[int, Plan] | None:
    """The plan a pulse names: the one this session read last when the pulse's version is that one's (a count
    moved, not the plan: no store read), else read afresh (``read_plan``)."""
    held = st.session_state.get(class_keys.CLASS_PLAN)
    if pulse and held is not None and pulse.get("version") == held[0]:
        return held
    return read_plan()


def due(version: int, plan: Plan) -> bool:
    """Whether this plan is news for this session's view: a new version while following; the plan once for a
    session that has not followed yet, released or not (a student back after a replica's restart starts at the
    teacher's step); "bring back" while released; or a follower's own move away from the teacher's page, lesson
    stop or exercise (pacing keeps them on the teacher's screen)."""
    applied = st.session_state[class_keys.CLASS_APPLIED]
    if applied is None:
        return True
    if plan.mode == "released":
        return False
    return applied != (version, plan.recall) or drifted(plan)


def _todo(plan: Plan):
    ss, sess = st.session_state, actions.session()
    same = sess is not None and ss[class_keys.CLASS_FOLLOWED_UID] is not None
    return follow_actions(
        plan,
        PAGE_SCRIPTS,
        ss.get(class_keys.CLASS_PAGE_NOW) or "",
        _lesson_now(),
        ss[class_keys.CLASS_FOLLOWED_UID] if same else None,
        sess.n_steps if same else None,
    )


def along(version: int, plan: Plan) -> bool:
    """Show a plan that moved only the teacher's step, question or pause, without a full run: the missing Steps are
    taken here (this session's own model and cache, in the replica's line of Steps) and the plan marked applied.
    False (nothing done) when the plan needs a full run: a first plan, "bring back", another page, lesson stop,
    exercise or request, a stage ahead of the teacher's, or a change of lock."""
    ss = st.session_state
    applied = ss[class_keys.CLASS_APPLIED]
    taken = _taken(plan)
    if applied is None or applied[1] != plan.recall or drifted(plan, taken):
        return False
    if (plan.mode != "released") != ss[lesson_keys.CLASS_LOCKED]:
        return False  # the page's controls lock or unlock: the whole page is drawn again
    if plan.mode == "released":
        return True
    if _view(plan) is not None:
        return False  # the display shows another layer or head: its pickers change in a full run
    if identity.role() == identity.DISPLAY and display_hides(plan) != ss[present_keys.ANSWERS_HIDDEN]:
        return False  # the console revealed the stop's answer (or moved on): the whole page shows it
    todo = _todo(plan)
    if todo.page or todo.lesson or todo.restart:
        return False
    if plan.request is not None and todo.steps:
        with step_queue.turn():
            _apply_request(plan.request, False, todo.steps)
    if taken and _settings_differ(plan):
        name = session.page_of(plan.page)
        session.show_part(name, {k: v for k, v in plan.settings.items() if k in taken})
    ss[class_keys.CLASS_APPLIED] = (version, plan.recall)
    return True


def _taken(plan: Plan) -> frozenset[str]:
    """The plan's page settings that this follower's page draws in the fragment listening now (``ui.session.
    in_fragment``): its page's when it is on the plan's page, else none."""
    if plan.page != st.session_state.get(class_keys.CLASS_PAGE_NOW):
        return frozenset()
    return session.in_fragment(session.page_of(plan.page))


def _view(plan: Plan) -> tuple | None:
    """The display's (layer, head) when the teacher's stage shows another one than it does; else None. Students
    keep their own pickers."""
    ss = st.session_state
    if identity.role() != identity.DISPLAY or plan.layer is None or plan.head is None:
        return None
    view = (plan.layer, decode_settings.MEAN_HEADS if plan.head == MEAN_HEAD else plan.head)
    return None if view == (ss[decode_keys.DECODE_LAYER], ss[decode_keys.DECODE_HEAD]) else view


def drifted(plan: Plan, taken: frozenset[str] = frozenset()) -> bool:
    """Whether this follower's view has left the plan: another page (in a lesson, the stop's page), lesson stop or
    page settings (but ``taken``, which the listening fragment shows by itself), or a lesson the teacher has
    left."""
    now = st.session_state.get(class_keys.CLASS_PAGE_NOW)
    if plan.lesson and plan.lesson in shipped_lessons():  # (a folder read: only with a lesson)
        stops, k = shipped(plan.lesson).stops, int(plan.stop or 0)
        page = stops[k].script if k < len(stops) else plan.page
        return (plan.lesson, k) != _lesson_now() or now not in (None, page) or _settings_differ(plan, taken)
    away = plan.page in PAGE_SCRIPTS and now not in (None, plan.page)
    return away or _settings_differ(plan, taken) or (plan.lesson is None and _lesson_now() is not None)


def _lesson_now():
    ss = st.session_state
    return (ss[lesson_keys.LESSON_NAME], ss[lesson_keys.LESSON_STOP]) if ss[lesson_keys.LESSON_NAME] else None


def apply_request(request: Request, steps: int) -> None:
    """Prefill ``request`` afresh in this session and replay ``steps`` steps (a follower, or the teacher's console
    taking its class's request back after a reload)."""
    _apply_request(request, True, steps)


def _apply_request(request: Request, restart: bool, steps: int) -> None:
    ss = st.session_state
    if restart:
        if request.model:
            models.choose_from_link(request.model)
            models.resolve()
        fields = ("prompt", "strategy", "temperature", "top_k", "seed", "dtype", "bits")
        # the class's question comes from the teacher's plan: predict-first off; the page prefills and replays
        decode_page.show_link({**{f: getattr(request, f) for f in fields}, "predict": False, "step": steps})
        actions.replay_link()
        steps -= actions.session().n_steps if actions.session() else steps
    if actions.session() is not None and request.past_end:
        actions.session().past_end = True  # the teacher chose to step past the end token
    actions.catch_up(steps)
    ss[class_keys.CLASS_FOLLOWED_UID] = request.uid


@step_queue.one_at_a_time  # a class's steps in line per replica, as the stage's own (serve/step_queue.py)
def follow(nav) -> None:
    """Show the plan in this session, if it is news: start or move the lesson, switch page, bring the request to
    the teacher's step. Called before the page runs, after the navigation exists. ``StoreUnavailable`` passes up."""
    ss = st.session_state
    moves.lock(False)
    if not identity.follower() or (got := read_plan()) is None:
        return
    version, plan = got
    ss[class_keys.CLASS_PAGE_NOW] = next((path for path, title, _ in PAGES if title == nav.title), None)
    moves.lock(following())
    if not due(version, plan):
        return
    todo = _todo(plan)
    if todo.lesson and todo.lesson[0] in shipped_lessons():
        name, stop = todo.lesson
        if ss[lesson_keys.LESSON_NAME] != name:
            start(shipped(name), name, stop)
        else:
            go(stop)
    elif plan.lesson in shipped_lessons() and drifted(plan):  # on the stop, but on another page
        go(int(plan.stop or 0))
    elif plan.lesson is None and _lesson_now() is not None:
        moves.leave()  # the teacher left the lesson: so do its followers (its bar would stay on their screens)
    if plan.request is not None and (todo.restart or todo.steps):
        _apply_request(plan.request, todo.restart, todo.steps)
    if _settings_differ(plan):
        name = session.page_of(plan.page)
        session.show(name, PAGE_SPECS[name].make(plan.settings))
    if (view := _view(plan)) is not None:
        decode_page.show_view(*view)
    # Marked applied only now: a run cut short above (a rerun request) applies the plan again next run.
    ss[class_keys.CLASS_APPLIED] = (version, plan.recall)
    if todo.page:
        st.switch_page(todo.page)


def listens_in_page() -> bool:
    """Whether this follower's page follows the class in a fragment of its own, not in the strip above it: the
    decode page's stage, the ruler's controls, the memory page's calculator (``ui.session.in_fragment``)."""
    now = st.session_state.get(class_keys.CLASS_PAGE_NOW)
    return now == DECODE_PAGE or bool(session.in_fragment(session.page_of(now)))


def _settings_differ(plan: Plan, taken: frozenset[str] = frozenset()) -> bool:
    """Whether the plan's page settings (the ruler's scale, the memory page's preset, …) but ``taken`` differ from
    this session's."""
    name = session.page_of(plan.page)
    if not plan.settings or name is None:
        return False
    mine = page_settings(plan.page, session.snapshot(name)) or {}
    return any(mine.get(k) != v for k, v in plan.settings.items() if k not in taken)
