"""The class strip above every page: the join form (a students' link), a student's line (seat,
following / paused / released) with the class's question and its answer buttons, and the teacher's
line with the live count of answers and, at the reveal, the class's histogram. While in a class it
polls the store twice a second (``POLL_S``). When the plan moved, a student's poll takes the
teacher's new Steps itself and reruns only the decode stage (a fragment), or asks for a full run
when the page, lesson stop, request or lock changed (``ui.classroom.follow`` then shows it)."""

from __future__ import annotations

import html

import streamlit as st

from core import state
from core.classroom.plan import Question, counts_line
from core.classroom.rules import ClassNotFound, NotSeated
from core.text import markdown_literal
from ui.classroom import follow, link, rerun
from ui.decode.question import code_span
from ui.page import text_box

POLL_S = 0.5  # how often a class session reads the store: a change shows within ~0.5 s + a run

PAUSED_CSS = """<style>
.stMain::after { content: "Paused by your teacher: eyes on the projector"; position: fixed; inset: 0;
  z-index: 999; display: flex; align-items: center; justify-content: center; text-align: center;
  background: rgba(255,255,255,.82); font-size: 2rem; font-weight: 600; color: #1f1f1f; padding: 2rem; }
</style>"""


def strip() -> None:
    """Draw the strip for this session (nothing outside a class)."""
    ss = st.session_state
    if message := ss.pop(state.CLASS_MESSAGE, None):
        getattr(st, message[0])(markdown_literal(message[1]))
    if link.role() == "student":
        ss[state.CLASS_LOCKED_DRAWN] = follow.locked()
        return _student()
    if link.role() == "teacher":
        return _teacher()
    if ss[state.CLASS_JOIN_CODE]:
        _join_form()


def follow_says() -> str:
    mode = st.session_state[state.CLASS_MODE]
    return {"follow": "students follow your page and steps", "paused": "paused", "released": "released"}[mode]


def _join_form() -> None:
    with st.form("class-join", border=True):
        st.markdown(
            "**Join the class**: the code is on the projector. A nickname is optional; only your teacher sees it."
        )
        a, b, c = st.columns([1, 2, 1], vertical_alignment="bottom")
        text_box(a, "Class code", limit=12, key=state.CLASS_JOIN_CODE)
        text_box(b, "Nickname (optional)", limit=40, key=state.CLASS_NICKNAME)
        c.form_submit_button("Join", type="primary", on_click=link.join, width="stretch")


@st.fragment(run_every=POLL_S)
def _student() -> None:
    """Read the plan and draw the class line. When the plan moved: a full run if the page, lesson
    stop, request, mode or lock changed; else the missing Steps here and a run of the decode stage
    alone (``follow.along``, ``ui.classroom.rerun``), not of the whole page."""
    if link.role() != "student":
        return
    rerun.deliver_before_stopping(redrawn_anyway=True)  # the stage's run it asks for reaches the browser
    got = follow.read_plan()
    if got is None:
        return st.rerun(scope="app")  # the class ended: the whole page says so
    version, plan = got
    if follow.locked() != st.session_state.get(state.CLASS_LOCKED_DRAWN):
        return st.rerun(scope="app")  # the page's controls lock or unlock: a full run
    if (follow.due(version, plan) or follow.behind(version, plan)) and not follow.along(version, plan):
        return st.rerun(scope="app")  # the plan moved to another page, stop, request or recall
    mode = plan.mode
    says = {"follow": "following your teacher", "paused": "paused", "released": "exploring on your own"}[mode]
    step = f" · step {plan.step}" if plan.request else ""
    # Keyed: the stage's heatmap reads the teacher's step here (frontend/attention_heatmap.js, watchClassStep).
    seat = st.session_state[state.CLASS_SEAT]
    st.container(key=state.CLASS_LINE).caption(f"Class {link.code()} · seat {seat} · {says}{step}")
    if mode == "paused":
        st.html(PAUSED_CSS)
    if plan.question:
        _student_question(plan.question)
    # Last: asking for the stage's run ends this one at its next streamlit call (the line is drawn).
    rerun.rerun_fragments([follow.stage_stale()])


def _answer(qid: str, round_: int, pick: int) -> None:
    ss = st.session_state
    try:
        link.store().answer(link.code(), ss[state.CLASS_TOKEN], qid, round_, pick)
    except (ClassNotFound, NotSeated) as err:
        link.seat_refused(err)


def _student_question(q: Question) -> None:
    ss = st.session_state
    mine = link.store().my_answer(link.code(), ss[state.CLASS_TOKEN], q.id, q.round)
    box = st.container(border=True, key=state.CLASS_QUESTION)
    round_ = f" (round {q.round})" if q.round > 1 else ""
    box.markdown(f"**{markdown_literal(q.text)}**{round_}")
    row = box.container(horizontal=True, gap="small")
    for i, option in enumerate(q.options):
        right = q.revealed and i == q.answer
        row.button(
            f"{i + 1}. {code_span(option)}",
            key=f"{state.CLASS_PICK}.{q.id}.{q.round}.{i}",
            on_click=_answer,
            args=(q.id, q.round, i),
            disabled=mine is not None or q.revealed,
            type="primary" if i == mine or right else "secondary",
            icon=":material/check:" if right else None,
        )
    if q.revealed:
        verdict = "No answer given." if mine is None else ("Right!" if mine == q.answer else "Not this time.")
        miss = q.misses[mine] if mine is not None and mine < len(q.misses) else ""
        miss = f" Your pick is the mistake “{miss}”." if miss else ""  # a Practice question's named mistake
        box.html(f'<p class="chart-desc"><strong>{verdict}</strong>{html.escape(miss)} {html.escape(q.explain)}</p>')
    elif mine is not None:
        box.caption(f"Your answer: {mine + 1}. Wait for your teacher's reveal.")
    else:
        box.caption("Pick your answer: your teacher reveals it on the projector.")


@st.fragment(run_every=POLL_S)
def _teacher() -> None:
    """The teacher's line: who joined, and while a question is on screen the live count of answers
    (the question is the one the decode stage last published, which may be newer than this run)."""
    if link.role() != "teacher":
        return
    rerun.deliver_before_stopping(redrawn_anyway=True)  # the page's full runs reach the browser
    store, code = link.store(), link.code()
    published = st.session_state[state.CLASS_PUBLISHED]
    q = None if published is None else published.question
    students = store.students(code)
    if q is None:
        return st.caption(f"Class {code} · {students} joined · {follow_says()}")
    answered = store.answered(code, q.id, q.round)
    round_ = f" (round {q.round})" if q.round > 1 else ""
    st.markdown(f"Class {code} · {students} joined · **{counts_line(answered, students)}**{round_}")
