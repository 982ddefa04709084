"""A student's session following the teacher's plan with its own model and cache: the page, the
guided lesson's stop, the decode request (prefilled here from the plan's prompt and settings) and
its steps. Runs at the top of every full run, before any page widget exists (so the request's
settings can still be written); the class strip's poll asks for that run when the plan changes."""

from __future__ import annotations

import streamlit as st

from core import state
from core.classroom.plan import Plan, Request, follow_actions
from core.classroom.rules import ClassNotFound
from core.lesson.stops import shipped_lessons
from core.practice import catalogue
from serve import step_queue
from ui import models
from ui.classroom import link
from ui.decode import actions
from ui.frame import PAGES
from ui.lesson.moves import go, shipped, start

DECODE_PAGE = "app_pages/decode.py"  # the page whose stage a Step moves


def following() -> bool:
    """Whether this session is a student whose view the teacher leads now (not released)."""
    return link.role() == "student" and st.session_state.get(state.CLASS_PLAN, (0, Plan()))[1].mode != "released"


def paused() -> bool:
    return link.role() == "student" and st.session_state.get(state.CLASS_PLAN, (0, Plan()))[1].mode == "paused"


def locked() -> bool:
    """The decode page's own controls are frozen: the teacher leads this student's request."""
    return following()


def read_plan() -> tuple[int, Plan] | None:
    """The class's plan now (None: the class ended; this session leaves it)."""
    try:
        got = link.store().plan(link.code())
    except ClassNotFound:
        got = None
    if got is None:
        link.forget("The class has ended: you are exploring on your own now.")
        return None
    st.session_state[state.CLASS_PLAN] = got
    return got


def due(version: int, plan: Plan) -> bool:
    """Whether this plan is news for this student's view: a new version while following, the
    teacher's "bring back" while released, or a following student's own move away from the
    teacher's page or lesson stop (a menu, the top bar): pacing keeps them on the teacher's screen."""
    ss = st.session_state
    applied = ss[state.CLASS_APPLIED]
    if plan.mode == "released":
        return False
    return applied is None or applied != (version, plan.recall) or drifted(plan)


def along(version: int, plan: Plan) -> bool:
    """Show a plan that moved only the teacher's step, question or pause without a full run: the
    missing Steps are taken here (this student's own model and cache, in the replica's line of
    Steps) and the plan marked applied; the caller reruns the stage alone (it draws the class line
    itself). False (nothing done) when the plan needs a full run: a first plan, "bring back", another
    page, lesson stop, exercise or request, or a stage ahead of the teacher's."""
    ss, sess = st.session_state, actions.session()
    applied = ss[state.CLASS_APPLIED]
    if not following() or applied is None or applied[1] != plan.recall or drifted(plan):
        return False
    same = sess is not None and ss[state.CLASS_FOLLOWED_UID] is not None
    todo = follow_actions(
        plan,
        {path for path, _, _ in PAGES},
        ss.get(state.CLASS_PAGE_NOW) or "",
        _lesson_now(),
        ss[state.CLASS_FOLLOWED_UID] if same else None,
        sess.n_steps if same else None,
    )
    if todo.page or todo.lesson or todo.restart:
        return False
    if plan.request is not None and todo.steps:
        with step_queue.turn():
            _apply_request(plan.request, False, todo.steps)
    ss[state.CLASS_APPLIED] = (version, plan.recall)
    return True


def stage_stale() -> str | None:
    """The decode stage's fragment id when this session's request has moved past what the stage
    last drew (Steps taken by ``along``, or a stage run cut short): the stage is rerun alone."""
    ss, sess = st.session_state, actions.session()
    if sess is None or ss.get(state.CLASS_PAGE_NOW) != DECODE_PAGE:
        return None
    return ss.get(state.DECODE_STAGE_FRAGMENT) if ss.get(state.DECODE_STAGE_SHOWN) != (sess.uid, sess.n_steps) else None


def behind(version: int, plan: Plan) -> bool:
    """A following student's stage short of the teacher's step on the same request (a run that
    applied the plan was cut short between steps): asked once per plan version and stage step, so
    a request that cannot step further (its end, a full window) is not asked again and again."""
    ss, sess = st.session_state, actions.session()
    if not short_of(plan) or ss.get(state.CLASS_HEALED) == (version, sess.n_steps):
        return False
    ss[state.CLASS_HEALED] = (version, sess.n_steps)
    return True


def short_of(plan: Plan) -> bool:
    """Whether this following student's stage holds the teacher's request at fewer steps than the plan."""
    sess, request = actions.session(), plan.request
    if not following() or request is None or sess is None:
        return False
    return st.session_state[state.CLASS_FOLLOWED_UID] == request.uid and sess.n_steps < plan.step


def drifted(plan: Plan) -> bool:
    ss = st.session_state
    page = plan.page
    away = page in {path for path, _, _ in PAGES} and ss.get(state.CLASS_PAGE_NOW) not in (None, page)
    practice = plan.practice
    if practice and practice[0] in catalogue.catalogue():
        away = away or [ss[state.PRACTICE_EX], ss[state.PRACTICE_SEED]] != [practice[0], practice[1]]
    if plan.lesson and plan.lesson in shipped_lessons():  # (a folder read: only with a lesson)
        return (plan.lesson, plan.stop or 0) != _lesson_now() or away
    return away


def _lesson_now():
    ss = st.session_state
    return (ss[state.LESSON_NAME], ss[state.LESSON_STOP]) if ss[state.LESSON_NAME] else None


def _apply_request(request: Request, restart: bool, steps: int) -> None:
    ss = st.session_state
    if restart:
        if request.model:
            models.choose_from_link(request.model)
            models.resolve()
        ss.update(
            {
                state.DECODE_PROMPT: request.prompt,
                state.DECODE_STRATEGY: request.strategy,
                state.DECODE_TEMPERATURE: request.temperature,
                state.DECODE_TOP_K: request.top_k,
                state.DECODE_SEED: request.seed,
                state.DECODE_DTYPE: request.dtype,
                state.DECODE_WEIGHT_BITS: request.bits,
                state.DECODE_PREDICT: False,  # the class's question comes from the teacher's plan
            }
        )
        actions.reset()
        ss[state.URL_STEP] = steps  # as a share link: the decode page prefills and replays these steps now
        actions.replay_link()
        steps -= actions.session().n_steps if actions.session() else steps
    if actions.session() is not None and request.past_end:
        actions.session().past_end = True  # the teacher chose to step past the end token
    actions.catch_up(steps)
    ss[state.CLASS_FOLLOWED_UID] = request.uid


@step_queue.one_at_a_time  # a class's steps in line per replica, as the stage's own (serve/step_queue.py)
def follow(nav) -> None:
    """Show the plan in this session, if it is news: start or move the lesson, switch page, bring
    the request to the teacher's step. Called before the page runs, after the navigation exists."""
    st.session_state[state.CLASS_LOCKED] = False
    if link.role() != "student" or (got := read_plan()) is None:
        return
    version, plan = got
    st.session_state[state.CLASS_PAGE_NOW] = next((path for path, title, _ in PAGES if title == nav.title), None)
    st.session_state[state.CLASS_LOCKED] = following()
    if not due(version, plan) and not short_of(plan):
        return
    ss, sess = st.session_state, actions.session()
    page_now = ss[state.CLASS_PAGE_NOW] or ""
    same = sess is not None and ss[state.CLASS_FOLLOWED_UID] is not None
    todo = follow_actions(
        plan,
        {path for path, _, _ in PAGES},
        page_now,
        _lesson_now(),
        ss[state.CLASS_FOLLOWED_UID] if same else None,
        sess.n_steps if same else None,
    )
    if todo.lesson and todo.lesson[0] in shipped_lessons():
        name, stop = todo.lesson
        if ss[state.LESSON_NAME] != name:
            start(shipped(name), name, stop)
        else:
            go(stop)
    elif plan.lesson in shipped_lessons() and drifted(plan):  # on the stop, but on another page
        go(plan.stop or 0)
    if plan.request is not None and (todo.restart or todo.steps):
        _apply_request(plan.request, todo.restart, todo.steps)
    _follow_practice(plan.practice)
    # Marked applied only now: a run cut short above (a rerun request) applies the plan again next run.
    ss[state.CLASS_APPLIED] = (version, plan.recall)
    if todo.page:
        st.switch_page(todo.page)


def _follow_practice(practice) -> None:
    """The teacher's exercise and numbers (the Practice page reads them from the address first)."""
    if not practice or practice[0] not in catalogue.catalogue():
        return
    ex_id, seed = practice[0], int(practice[1])
    st.session_state.update({state.PRACTICE_EX: ex_id, state.PRACTICE_SEED: seed})
    if st.query_params.get("ex") != ex_id or st.query_params.get("numbers") != str(seed):
        st.query_params.update({"ex": ex_id, "numbers": str(seed)})
