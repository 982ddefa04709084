"""The class strip above every page: outside a class the join form (a students' link), the start panel
(``?class=new``) or nothing; in a class, a fragment that listens to the class's event stream and redraws itself on
each pulse: the console's class bar for the teacher; for a follower the class line, the question, the pause cover,
and a full run when the plan moved to another page, stop, request or lock. On the decode page a follower's stage
fragment does all this itself (``live``), so a Step reruns the stage alone; so do the ruler's controls and the
memory page's calculator, so that a move of their settings reruns that fragment alone. A store out of reach is
said in one line (``ui.errors.LOST_CLASS``), and the page goes on by itself when it returns.
"""

from __future__ import annotations

import streamlit as st

from core.classroom.rules import StoreUnavailable
from core.text import markdown_literal
from ui.classroom import console, display, follow, identity, join, question, wire
from ui.classroom import keys as class_keys
from ui.errors import LOST_CLASS
from ui.frame import DECODE_PAGE

UNSENT = "The class store is not taking changes right now: your students stay where they are. Retrying…"
SAYS = {"follow": "following your teacher", "paused": "paused", "released": "exploring on your own"}
# A student's page shows no count: only a new plan (or the store's coming and going) reruns it, not each answer.
STUDENT_WATCHES = ("version",)
# The console's bar shows counts; the plan's version moves when this console publishes, in the run that may be
# switching pages (a lesson's move): a rerun of the bar then raced the page's own run and blanked the page ("Bad
# delta path index"). Another console's plan is taken back on this console's next run (``console.resume``).
TEACHER_WATCHES = ("students", "answered", "question", "round")


def strip(nav) -> None:
    """Draw the strip for this session (``nav``: the page about to run)."""
    ss = st.session_state
    if message := ss.pop(class_keys.CLASS_MESSAGE, None):
        getattr(st, message[0])(markdown_literal(message[1]))
    role = identity.role()
    if role is None:
        if ss.get(class_keys.CLASS_STARTING):
            return join.start_panel()
        if ss[class_keys.CLASS_JOIN_CODE]:
            return join.join_form()
        return None
    if identity.follower() and follow.listens_in_page():
        return None  # the page's own fragment (the decode stage, the ruler, …) listens and draws the class line
    _strip()


@st.fragment
def _strip() -> None:
    live()


def live() -> None:
    """Listen to the class and draw its line for this session's role (inside a fragment, or the stage's). What the
    store could not take before (the console's plan, a student's answers) is sent first; while some of it still
    waits, the listener runs this again by itself (no pulse comes while the store reads but does not write)."""
    teacher = identity.role() == "teacher"
    waiting = console.publish() if teacher else question.send_pending()
    if teacher and waiting:
        st.warning(UNSENT, icon=":material/sync_problem:")
    code = identity.code()
    if code is None:  # the class ended or expired in this run: the whole page says so (the bar alone vanished)
        return st.rerun(scope="app")
    if not teacher and _moves(pulse := wire.peek()):
        wire.ran_for(pulse)
        return st.rerun(scope="app")  # before the listener is drawn (``wire.peek``): the whole page follows
    watch = TEACHER_WATCHES if teacher else None if identity.role() == identity.DISPLAY else STUDENT_WATCHES
    pulse = wire.listen(code, watch, retry=waiting)
    if pulse and pulse.get("unavailable"):
        return _lost()
    try:
        if teacher:
            return console.bar(pulse)
        _follower(pulse)
    except StoreUnavailable:
        _lost()


def _lost() -> None:
    """The store is out of reach: said in one line. A student keeps the open question on screen: an answer given
    now waits in this session and goes to the store when it is back (the question had disappeared)."""
    st.warning(LOST_CLASS, icon=":material/sync_problem:")
    q = follow.plan_now().question
    if identity.role() == "student" and q is not None and not q.revealed:
        question.student(q)


def _moves(pulse: dict | None) -> bool:
    """Whether this pulse takes a follower's whole page somewhere: the class ended, or a plan it has not applied
    that this view does not show by itself (another page, stop, request, recall or lock)."""
    if not pulse or pulse.get("unavailable"):
        return False
    try:
        got = follow.plan_for(pulse)
    except StoreUnavailable:
        return False
    return got is None or (follow.due(*got) and not follow.along(*got))


def _counts(pulse: dict | None, key: str, question=None):
    """A count the pulse carries (``students``; ``answered`` for ``question``'s id and round), or None: read it."""
    if not pulse or key not in pulse:
        return None
    if question is not None and (pulse.get("question"), pulse.get("round")) != (question.id, question.round):
        return None
    return pulse[key]


def _follower(pulse: dict | None) -> None:
    """A follower's line, question and cover. The plan is read only when the pulse's version moved past the one
    this session holds (a count's pulse reuses it); the counts come with the pulse."""
    got = follow.plan_for(pulse)
    if got is None:
        return st.rerun(scope="app")  # the class ended: the whole page says so
    version, plan = got
    if follow.due(version, plan) and not follow.along(version, plan):
        return st.rerun(scope="app")  # another page, stop, request, recall or lock: the whole page
    students = _counts(pulse, "students")
    if students is None:
        info = identity.store().info(identity.code())
        students = 0 if info is None else info.students
    if identity.role() == identity.DISPLAY:
        display.join_code(plan)
        says = f"{students} joined"
    else:
        says = f"seat {st.session_state[class_keys.CLASS_SEAT]} · {SAYS[plan.mode]}"
    # a released student's stage is its own: the teacher's step would misname it
    # and another page than the decode page has no step to name
    step = f" · step {plan.step}" if plan.request and plan.mode != "released" and plan.page == DECODE_PAGE else ""
    st.container(key=class_keys.CLASS_LINE).caption(f"Class {identity.code()} · {says}{step}")
    if plan.mode == "paused" and identity.role() == "student":
        cover = st.container(
            key=class_keys.CLASS_PAUSED
        )  # a fixed cover (assets/style/a11y.css), gone at the next pulse
        cover.markdown("Paused by your teacher: eyes on the projector")
    q = plan.question
    if q is None:
        return
    if identity.role() == identity.DISPLAY:
        answered = 0 if q.revealed else _counts(pulse, "answered", q)
        if answered is None:
            answered = identity.store().answered(identity.code(), q.id, q.round)
        question.projected(q, answered, students)
    else:
        question.student(q)


def before_page(nav) -> None:
    """Before the page runs: a follower shows the plan (``follow.follow``), a console takes its class back after a
    reload (``console.resume``). A store out of reach is said above the page, and the page runs as it is."""
    try:
        follow.follow(nav)
        if identity.role() == "teacher":
            console.resume()
    except StoreUnavailable:
        identity.say("warning", LOST_CLASS)


def sidebar() -> None:
    """The sidebar's Class section: join a class with its code (a student), start a class or present alone, or use
    this device as a class's console."""
    if identity.role() is not None:
        return
    st.subheader("Class", anchor=False)
    join.code_box()
    st.button("Start a class", icon=":material/groups:", on_click=_starting, width="stretch")
    st.caption("Students join with a code on their own laptops or phones and follow your steps; a display shows "
               "the projector. Alone, the same console and display work without students.")  # fmt: skip
    join.pair_box()


def _starting() -> None:
    st.session_state[class_keys.CLASS_STARTING] = True
