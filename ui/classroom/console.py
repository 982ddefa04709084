"""The teacher's console: the class bar above every page of the teacher's own screen (who joined, the live count,
pause, release / bring back, vote again, the display, the join code, more) and the plan this session publishes to
the class store after every action (``core.classroom.plan.Plan``). The projector shows the display
(``ui.classroom.display``), opened from here by a link that grants no teacher power.
"""

from __future__ import annotations

import streamlit as st

from core.classroom.plan import MEAN_HEAD, Plan, Request, counts_line, page_settings, question_entry, question_id
from core.classroom.rules import ClassNotFound, NotTeacher, StoreUnavailable
from core.decode import settings as decode_settings
from ui import models, session
from ui.classroom import follow, identity, pose, roster
from ui.classroom import keys as class_keys
from ui.decode import actions
from ui.decode import keys as decode_keys
from ui.decode import page_settings as decode_page
from ui.frame import PAGES
from ui.lesson import keys as lesson_keys


def request_entry(sess) -> Request:
    """The teacher's decode request as the plan carries it: what a follower needs to prefill it."""
    s, key = sess.sampling, sess.model_key
    return Request(
        uid=sess.uid,
        prompt=sess.prompt_text,
        strategy=s.strategy,
        temperature=s.temperature,
        top_k=s.top_k,
        seed=s.seed,
        dtype=key.dtype,
        bits=key.weight_bits or decode_settings.FLOAT_WEIGHTS,
        model=None if key.source is None else models.active().name,
        past_end=sess.past_end,  # stepping on past the end token (followers' requests stop there otherwise)
    )


def open_question(sess):
    """The predict-first question on the teacher's stage (open, or just revealed), or None."""
    ss = st.session_state
    if sess is None:
        return None
    if ss.get(decode_keys.DECODE_QUESTION) is not None:
        qid = question_id(sess.uid, sess.n_steps + 1)
        return question_entry(
            ss[decode_keys.DECODE_QUESTION], qid, ss[class_keys.CLASS_ROUNDS].get(qid, 1), revealed=False
        )
    if ss.get(decode_keys.DECODE_REVEALED) is not None:
        qid = question_id(sess.uid, sess.n_steps)
        return question_entry(
            ss[decode_keys.DECODE_REVEALED][0], qid, ss[class_keys.CLASS_ROUNDS].get(qid, 1), revealed=True
        )
    return None


def plan_now() -> Plan:
    ss, sess = st.session_state, actions.session()
    lesson = ss[lesson_keys.LESSON_NAME]
    stop = ss[lesson_keys.LESSON_STOP] if lesson else None
    # In a lesson the class is on the stop's page, also in the run that moved the stop (before its page ran).
    page = ss[lesson_keys.LESSON].stops[stop].script if lesson else ss.get(class_keys.CLASS_PAGE)
    name = session.page_of(page)  # the decode page's settings travel as its request
    return Plan(
        mode=ss[class_keys.CLASS_MODE],
        recall=ss[class_keys.CLASS_RECALL],
        page=page,
        lesson=lesson,
        stop=stop,
        stop_revealed=lesson is not None and ss[class_keys.CLASS_STOP_REVEALED] == (lesson, stop),
        request=None if sess is None else request_entry(sess),
        step=0 if sess is None else sess.n_steps,
        settings=None if name in (None, "decode") else page_settings(page, session.snapshot(name)),
        question=pose.posed_now() or open_question(sess),  # a Practice question posed, else the stage's
        join_shown=bool(ss.get(class_keys.CLASS_JOIN_SHOWN)),
        layer=ss[decode_keys.DECODE_LAYER],
        head=MEAN_HEAD if ss[decode_keys.DECODE_HEAD] == decode_settings.MEAN_HEADS else ss[decode_keys.DECODE_HEAD],
    )


def publish(nav=None) -> bool:
    """Send the plan to the store when it changed (the teacher only); whether a plan still waits for the store.
    ``nav``: the page on screen (a full run knows it; the stage's and the bar's own runs keep the last one). While
    the store is out of reach the plan waits here and the class bar, drawn waiting, sends it again by itself
    (``ui.classroom.strip.live``); the first failure runs the whole page once, so that the bar is drawn waiting
    even when a Step (a run of the stage alone) met it."""
    ss = st.session_state
    if identity.role() != "teacher":
        return False
    if nav is not None:
        ss[class_keys.CLASS_PAGE] = next((path for path, title, _ in PAGES if title == nav.title), None)
        pose.leave_page(ss[class_keys.CLASS_PAGE])
    plan = plan_now()
    if plan == ss[class_keys.CLASS_PUBLISHED]:
        ss[class_keys.CLASS_WAITING] = False
        return False
    try:
        plan = _merged(plan)
        ss[class_keys.CLASS_VERSION] = identity.store().publish(identity.code(), ss[class_keys.CLASS_KEY], plan)
    except StoreUnavailable:
        if not ss[class_keys.CLASS_WAITING]:
            ss[class_keys.CLASS_WAITING] = True
            st.rerun(scope="app")
        return True
    except (ClassNotFound, NotTeacher):
        identity.forget("This class has ended (after 12 hours a class is deleted): start a new one.")
        return False
    ss[class_keys.CLASS_PUBLISHED] = plan
    ss[class_keys.CLASS_WAITING] = False
    return False


# The pacing another console may set (the join-code switch is a widget of this console's own bar: not merged).
MERGED = {"mode": class_keys.CLASS_MODE, "recall": class_keys.CLASS_RECALL}


def _merged(plan: Plan) -> Plan:
    """``plan`` with what another console of the class (a paired device) set since this one last published: a
    field this console left as it published it takes the other's value (a Step here undid a Pause set there).
    ``StoreUnavailable`` passes up."""
    ss, base = st.session_state, st.session_state[class_keys.CLASS_PUBLISHED]
    if base is None or ss[class_keys.CLASS_VERSION] is None:
        return plan
    got = identity.store().plan(identity.code())
    if got is None or got[0] == ss[class_keys.CLASS_VERSION]:
        return plan
    theirs = got[1]
    for name, key in MERGED.items():
        if getattr(plan, name) == getattr(base, name) != getattr(theirs, name):
            ss[key] = getattr(theirs, name)
    return plan_now()


def resume() -> None:
    """Once per session of a class's teacher (a reload, another replica): take the class's plan back, its pacing,
    join code, revealed stop and request at the published step, so the console shows what the class shows. Before
    the page runs."""
    ss = st.session_state
    if not ss.pop(class_keys.CLASS_RESUMING, False):
        return
    got = identity.store().plan(identity.code())
    if got is None:
        return
    ss[class_keys.CLASS_VERSION], plan = got
    ss.update(
        {
            class_keys.CLASS_MODE: plan.mode,
            class_keys.CLASS_RECALL: plan.recall,
            class_keys.CLASS_JOIN_SHOWN: plan.join_shown,
        }
    )
    if plan.lesson is not None and plan.stop_revealed:
        ss[class_keys.CLASS_STOP_REVEALED] = (plan.lesson, plan.stop)
    if plan.request is not None and actions.session() is None:
        _take_back_request(plan)
    ss[class_keys.CLASS_PUBLISHED] = plan  # what the class shows: this console publishes again only what differs


def _take_back_request(plan: Plan) -> None:
    """The class's request at its step, under its own uid (so the class's questions keep their ids), the stage's
    layer and head, and a predict-first question still open, asked again: the answers given stay counted (a
    console's F5 during a question dropped it, and answers given before were not counted when it came back)."""
    follow.apply_request(plan.request, plan.step)
    decode_page.keep_uid(plan.request.uid)
    if plan.layer is not None and plan.head is not None:
        decode_page.show_view(plan.layer, decode_settings.MEAN_HEADS if plan.head == MEAN_HEAD else plan.head)
    q = plan.question
    if q is not None and not q.revealed and q.kind != "practice":
        st.session_state[class_keys.CLASS_ROUNDS][q.id] = q.round
        decode_page.show_link({"predict": True})
        actions.ask()


def _set(key: str, value) -> None:
    st.session_state[key] = value


def bring_back() -> None:
    st.session_state[class_keys.CLASS_MODE] = "follow"
    st.session_state[class_keys.CLASS_RECALL] += 1


def vote_again() -> None:
    """Peer instruction's second round on the open question: students answer again after discussing."""
    q = open_question(actions.session())
    if q is not None and not q.revealed:
        st.session_state[class_keys.CLASS_ROUNDS][q.id] = q.round + 1


def reveal_stop() -> None:
    ss = st.session_state
    ss[class_keys.CLASS_STOP_REVEALED] = (ss[lesson_keys.LESSON_NAME], ss[lesson_keys.LESSON_STOP])


def end() -> None:
    try:
        identity.store().end(identity.code(), st.session_state[class_keys.CLASS_KEY])
    except (ClassNotFound, NotTeacher):
        pass  # already gone: leaving is all that is left
    identity.forget("Class ended: its seats and answers are deleted.")


def bar(pulse: dict | None) -> None:
    """The console's class bar: the class's line with the live count, and the teacher's controls."""
    ss, store, code = st.session_state, identity.store(), identity.code()
    info = store.info(code)
    if info is None:  # ended elsewhere, or a store that came back empty: the whole page says so
        identity.forget("This class has ended (or its store lost it): start a new one.")
        return st.rerun(scope="app")
    plan = plan_now()
    q = plan.question
    joined = f"{info.students} joined" + ("" if info.joining else " · joining closed")
    count = ""
    if q and not q.revealed:  # the pulse's count when it is this question's, else read
        same = pulse and (pulse.get("question"), pulse.get("round")) == (q.id, q.round) and "answered" in pulse
        answered = pulse["answered"] if same else store.answered(code, q.id, q.round)
        count = f" · **{counts_line(answered, info.students)}**"
    row = st.container(horizontal=True, vertical_alignment="center", key=class_keys.CLASS_BAR)
    pacing = {"follow": "", "paused": " · **paused**", "released": " · released"}[ss[class_keys.CLASS_MODE]]
    row.markdown(f"Class **{code}** · {joined}{pacing}{count}")
    row.link_button("Open the display", identity.display_link(), icon=":material/cast:")
    row.toggle(
        "Join code",
        key=class_keys.CLASS_JOIN_SHOWN,
        persist_state="session",
        help="The code and its QR code on the display",
    )
    if ss[class_keys.CLASS_MODE] == "paused":
        row.button("Resume", icon=":material/play_arrow:", on_click=_set, args=(class_keys.CLASS_MODE, "follow"))
    else:
        row.button("Pause class", icon=":material/pause:", on_click=_set, args=(class_keys.CLASS_MODE, "paused"))
    if ss[class_keys.CLASS_MODE] == "released":
        row.button("Bring back", icon=":material/undo:", on_click=bring_back)
    else:
        row.button("Release", icon=":material/explore:", on_click=_set, args=(class_keys.CLASS_MODE, "released"))
    if q is not None and not q.revealed and q.kind != "practice":
        row.button(f"Vote again (round {q.round + 1})", on_click=vote_again)
    stop = (ss[lesson_keys.LESSON_NAME], ss[lesson_keys.LESSON_STOP])
    if stop[0] is not None and ss[class_keys.CLASS_STOP_REVEALED] != stop:
        row.button("Reveal on the display", icon=":material/visibility:", on_click=reveal_stop)
    with row.popover("More", icon=":material/more_horiz:"):
        more(info, q)
    if info.joining and (unreachable := identity.join_link()[1]):
        st.warning(unreachable, icon=":material/wifi_off:")


def more(info, q) -> None:
    """Who has answered, joining, a second device, the end of the class."""
    ss = st.session_state
    st.toggle(
        "Joining open", value=info.joining, key=class_keys.CLASS_JOINING, on_change=_joining,
        help=f"Close it once everyone is in. Seats: {info.students} of {info.seat_cap}.",
    )  # fmt: skip
    if st.button("Add a device (a one-time code)", icon=":material/devices:"):
        ss[class_keys.CLASS_PAIR_CODE] = identity.store().pair_code(identity.code(), ss[class_keys.CLASS_KEY])
    if ss.get(class_keys.CLASS_PAIR_CODE):
        st.markdown(f"On the other device open this app and enter **{ss[class_keys.CLASS_PAIR_CODE]}** under *Class* "
                    "(valid 10 minutes, once). That device becomes a console too.")  # fmt: skip
    roster.roster(q)
    st.button("End class", icon=":material/logout:", on_click=end)


def _joining() -> None:
    ss = st.session_state
    identity.store().set_joining(identity.code(), ss[class_keys.CLASS_KEY], bool(ss[class_keys.CLASS_JOINING]))


def line_for_follower() -> str:
    """What a teacher's pacing tells followers, for the console's own captions."""
    return {"follow": "students follow your page and steps", "paused": "paused", "released": "released"}[
        st.session_state[class_keys.CLASS_MODE]
    ]
