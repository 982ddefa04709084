"""The teacher's side of a class: the sidebar's Class panel (start, join code with its QR code,
pause, release / bring back, vote again, who has answered, end) and the plan this session
publishes to the class store after every action (``core.classroom.plan``)."""

from __future__ import annotations

import segno
import streamlit as st

from core import state
from core.classroom.plan import Plan, Question, Request, question_entry, question_id
from core.classroom.rules import ClassNotFound, NotTeacher
from core.typed_numbers import quote
from ui import models
from ui.classroom import link, pose, rerun
from ui.decode import actions
from ui.frame import PAGES
from ui.page import text_box
from ui.present import presenter_mode


def request_entry(sess) -> Request:
    """The teacher's decode request as the plan carries it: what a student needs to prefill it."""
    s, key = sess.sampling, sess.model_key
    name = None if key.source is None else models.active().name
    return Request(
        uid=sess.uid,
        prompt=sess.prompt_text,
        strategy=s.strategy,
        temperature=s.temperature,
        top_k=s.top_k,
        seed=s.seed,
        dtype=key.dtype,
        bits=key.weight_bits or state.FLOAT_WEIGHTS,
        model=name,
        past_end=sess.past_end,  # stepping on past the end token (students' requests stop there otherwise)
    )


def open_question(sess) -> Question | None:
    """The predict-first question on the teacher's stage (open, or just revealed), or None."""
    ss = st.session_state
    if sess is None:
        return None
    if ss.get(state.DECODE_QUESTION) is not None:
        qid = question_id(sess.uid, sess.n_steps + 1)
        return question_entry(ss[state.DECODE_QUESTION], qid, ss[state.CLASS_ROUNDS].get(qid, 1), revealed=False)
    if ss.get(state.DECODE_REVEALED) is not None:
        qid = question_id(sess.uid, sess.n_steps)
        return question_entry(ss[state.DECODE_REVEALED][0], qid, ss[state.CLASS_ROUNDS].get(qid, 1), revealed=True)
    return None


def plan_now() -> Plan:
    ss, sess = st.session_state, actions.session()
    return Plan(
        mode=ss[state.CLASS_MODE],
        recall=ss[state.CLASS_RECALL],
        page=ss.get(state.CLASS_PAGE),
        lesson=ss[state.LESSON_NAME],
        stop=ss[state.LESSON_STOP] if ss[state.LESSON_NAME] else None,
        request=None if sess is None else request_entry(sess),
        step=0 if sess is None else sess.n_steps,
        # the exercise and its numbers on the teacher's Practice page (students' pages show the same)
        practice=(ss[state.PRACTICE_EX], int(ss[state.PRACTICE_SEED]))
        if ss.get(state.CLASS_PAGE) == pose.PRACTICE
        else None,
        question=pose.posed_now() or open_question(sess),  # a Practice question posed, else the stage's
    )


def publish(nav=None) -> None:
    """Send the plan to the store when it changed (a teacher only). ``nav``: the page on screen
    (a full run knows it; the decode stage's own reruns keep the last one)."""
    ss = st.session_state
    if link.role() != "teacher":
        return
    rerun.deliver_before_stopping()  # a Step's run (the stage alone) in a new ScriptRunner: its drawing is sent
    if nav is not None:
        ss[state.CLASS_PAGE] = next((path for path, title, _ in PAGES if title == nav.title), None)
        pose.leave_page(ss[state.CLASS_PAGE])
    plan = plan_now()
    if plan == ss[state.CLASS_PUBLISHED]:
        return
    try:
        link.store().publish(link.code(), ss[state.CLASS_KEY], plan)
    except (ClassNotFound, NotTeacher):
        return link.forget("This class has ended (after 12 hours a class is deleted): start a new one.")
    ss[state.CLASS_PUBLISHED] = plan


def _join_from_sidebar() -> None:
    st.session_state[state.CLASS_JOIN_CODE] = st.session_state[state.CLASS_SIDEBAR_CODE]
    link.join()


def _set_mode(mode: str) -> None:
    st.session_state[state.CLASS_MODE] = mode


def bring_back() -> None:
    st.session_state[state.CLASS_MODE] = "follow"
    st.session_state[state.CLASS_RECALL] += 1


def vote_again() -> None:
    """Peer instruction's second round on the open question: students answer again after discussing."""
    q = open_question(actions.session())
    if q is not None and not q.revealed:
        st.session_state[state.CLASS_ROUNDS][q.id] = q.round + 1


def end() -> None:
    try:
        link.store().end(link.code(), st.session_state[state.CLASS_KEY])
    except (ClassNotFound, NotTeacher):
        pass  # already gone: leaving is all that is left
    link.forget("Class ended: its seats and answers are deleted.")


@st.dialog("Join this class", width="large")
def join_dialog() -> None:
    """What a teacher projects for students to join: the code, the link and its QR code."""
    url = link.students_link()
    left, right = st.columns([3, 2], vertical_alignment="center")
    left.markdown(f"## Class code: `{link.code()}`")
    left.markdown(f"Open {quote(url)} on your laptop or phone, or scan the QR code.")
    left.caption("No account: a nickname is optional and only your teacher sees it.")
    right.image(segno.make(url, error="m").png_data_uri(scale=8), caption="Scan to join", width=260)


def panel() -> None:
    """The sidebar's Class section: start a class, or run the one this session teaches."""
    st.subheader("Class", anchor=False)
    if link.role() is None:
        st.button("Start a class", icon=":material/groups:", on_click=link.open_class, width="stretch")
        st.caption("Students join with a code on their own laptops or phones and follow your steps.")
        with st.form("class-join-sidebar", border=False):
            text_box(st, "Join a class: its code", limit=12, key=state.CLASS_SIDEBAR_CODE, placeholder="e.g. K7QX2M")
            st.form_submit_button("Join with this code", on_click=_join_from_sidebar, width="stretch")
        return
    if link.role() != "teacher":
        return
    ss, store = st.session_state, link.store()
    st.markdown(f"Class code **{link.code()}** · {store.students(link.code())} joined")
    if st.button("Show the join code", icon=":material/qr_code_2:", width="stretch"):
        join_dialog()
    mode = ss[state.CLASS_MODE]
    a, b = st.columns(2)
    if mode == "paused":
        a.button("Resume", icon=":material/play_arrow:", on_click=_set_mode, args=("follow",), width="stretch")
    else:
        a.button("Pause class", icon=":material/pause:", on_click=_set_mode, args=("paused",), width="stretch")
    if mode == "released":
        b.button("Bring back", icon=":material/undo:", on_click=bring_back, width="stretch")
    else:
        b.button("Release", icon=":material/explore:", on_click=_set_mode, args=("released",), width="stretch")
    st.caption(MODE_SAYS[mode])
    q = open_question(actions.session())
    if q is not None and not q.revealed:
        st.button(f"Vote again (round {q.round + 1})", on_click=vote_again, width="stretch")
    roster(q)
    st.button("End class", icon=":material/logout:", on_click=end, width="stretch")


MODE_SAYS = {
    "follow": "Students follow your page and steps.",
    "paused": "Paused: students' controls are frozen.",
    "released": "Released: students explore on their own.",
}


def roster(q: Question | None) -> None:
    """Who has answered the open question: seat numbers and nicknames, teacher's eyes only (hidden
    while presenter mode is on, as the sidebar may be on the projector). Never scores."""
    if presenter_mode():
        return st.caption("Who has answered: hidden in presenter mode (the sidebar may be on the projector).")
    with st.expander("Who has answered"):
        rows = link.store().roster(link.code(), st.session_state[state.CLASS_KEY], *_qid_round(q))
        if not rows:
            return st.caption("No students yet.")
        st.dataframe(
            [{"seat": r.number, "nickname": r.nickname or "—", "answered": "yes" if r.answered else ""} for r in rows],
            hide_index=True,
        )


def _qid_round(q: Question | None) -> tuple[str, int]:
    return ("no-question", 1) if q is None else (q.id, q.round)  # nobody has answered "no-question"
