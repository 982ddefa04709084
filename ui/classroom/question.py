"""The class's question on screen: a student's answer buttons (their pick kept and sent again while the store is
out of reach, so an answer is never lost), the live count "12 of 40 answered" for the console and the display (never
who), and at the reveal the class's histogram beside the model's own share. The question comes from the teacher's
plan (``core.classroom.plan.Question``): before the reveal it holds no answer, so no follower's browser gets one."""

from __future__ import annotations

import html
from collections.abc import Callable

import streamlit as st

from core.classroom.plan import Question, counts_line
from core.classroom.rules import ClassNotFound, NotSeated, StoreUnavailable
from core.text import markdown_literal
from core.viz.class_answers import describe_class_answers, fig_class_answers
from ui.classroom import identity
from ui.classroom import keys as class_keys
from ui.decode.question import code_span
from ui.present import presenter_mode


def _answer(qid: str, round_: int, pick: int) -> None:
    """A student's pick: sent now, or kept and sent again at the next run while the store is out of reach."""
    st.session_state[class_keys.CLASS_PENDING][(qid, round_)] = pick
    send_pending()


def send_pending() -> bool:
    """Send every kept pick (a store that answers writes each once: a second answer to a question keeps the first);
    whether some are still kept (the store out of reach)."""
    pending = st.session_state[class_keys.CLASS_PENDING]
    for (qid, round_), pick in list(pending.items()):
        try:
            identity.store().answer(identity.code(), st.session_state[class_keys.CLASS_TOKEN], qid, round_, pick)
        except StoreUnavailable:
            return True  # kept: said under the question, sent again at the next run
        except (ClassNotFound, NotSeated) as err:
            pending.clear()
            identity.seat_refused(err)
            return False
        del pending[(qid, round_)]
    return False


WORDS = ("serve",)  # question kinds whose options are sentences (shown as text), not tokens (shown as code)


def _option(q: Question, option: str) -> str:
    """An option as markdown: a sentence as written; a token as code, its spaces visible."""
    return markdown_literal(option) if q.kind in WORDS else code_span(option)


def student(q: Question) -> None:
    """The question with its answer buttons (disabled once answered or revealed); after the reveal, the verdict."""
    ss = st.session_state
    kept = ss[class_keys.CLASS_PENDING].get((q.id, q.round))
    try:
        mine = identity.store().my_answer(identity.code(), ss[class_keys.CLASS_TOKEN], q.id, q.round)
    except StoreUnavailable:
        mine = None
    mine = kept if mine is None else mine
    box = st.container(border=True, key=class_keys.CLASS_QUESTION)
    round_ = f" (round {q.round})" if q.round > 1 else ""
    box.markdown(f"**{markdown_literal(q.text)}**{round_}")
    row = box.container(horizontal=True, gap="small")
    for i, option in enumerate(q.options):
        right = q.revealed and i == q.answer
        row.button(
            f"{i + 1}. {_option(q, option)}",
            key=f"{class_keys.CLASS_PICK}.{q.id}.{q.round}.{i}",
            on_click=_answer,
            args=(q.id, q.round, i),
            disabled=mine is not None or q.revealed,
            type="primary" if i == mine or right else "secondary",
            icon=":material/check:" if right else ":material/close:" if q.revealed and i == mine else None,
        )
    if q.revealed:
        verdict = "No answer given." if mine is None else ("Right!" if mine == q.answer else "Not this time.")
        miss = q.misses[mine] if mine is not None and mine < len(q.misses) else ""
        miss = f" Your pick is the mistake “{miss}”." if miss else ""  # a posed exercise's named mistake
        box.html(f'<p class="chart-desc"><strong>{verdict}</strong>{html.escape(miss)} {html.escape(q.explain)}</p>')
    elif kept is not None:
        box.caption(f"Your answer {kept + 1} is kept and will be sent as soon as the class can be reached.")
    elif mine is not None:
        box.caption(f"Your answer: {mine + 1}. Wait for your teacher's reveal.")
    else:
        box.caption("Pick your answer: your teacher reveals it on the projector.")


def projected(q: Question, answered: int, students: int) -> None:
    """The question as the display shows it: its options without buttons and the live count, then the reveal."""
    box = st.container(border=True, key=class_keys.CLASS_QUESTION)
    round_ = f" (round {q.round})" if q.round > 1 else ""
    box.markdown(f"**{markdown_literal(q.text)}**{round_}")
    if q.kind in WORDS:  # sentences: one per line
        box.markdown("\n".join(f"{i + 1}. {_option(q, o)}" for i, o in enumerate(q.options)))
    else:
        box.markdown(" · ".join(f"{i + 1}. {_option(q, o)}" for i, o in enumerate(q.options)))
    if q.revealed:  # the verdict and the explanation first, read from the back of the room; the histogram under them
        with box:
            drawn: list = []
            said = class_answers(q, before=lambda verdict: drawn.append(box.caption(f"{verdict} {q.explain}")))
            if not drawn:  # the store out of reach: no histogram, its sentence and what the answer is
                box.caption(f"{said} {q.explain}")
    else:
        box.markdown(f"**{counts_line(answered, students)}**")


def class_answers(q: Question, before: Callable[[str], object] | None = None) -> str:
    """At the reveal: the class's histogram (every round) beside the model's own share, the right answer marked;
    returns the verdict line ("Class: 31 of 38 right"). ``before(verdict)`` draws what goes above the histogram
    (the projector's verdict and explanation). With the store out of reach, a sentence says so and the page around
    it (the console's stage at the Step) is drawn on."""
    store, code = identity.store(), identity.code()
    n = len(q.options)
    try:
        tallies = [store.tally(code, q.id, r, n) for r in range(1, q.round + 1)]
    except StoreUnavailable:
        return "The class's answers cannot be read right now: the class store is out of reach."
    last = tallies[-1]
    verdict = f"Class: {last[q.answer]} of {sum(last)} right."
    if before is not None:
        before(verdict)
    fig = fig_class_answers(list(q.options), tallies, q.answer, list(q.shares), height=230)
    if presenter_mode():
        fig.update_layout(font_size=18, title_font_size=20, height=260)
    st.plotly_chart(fig, theme=None, key=f"{class_keys.CLASS_ANSWERS}.{q.id}")
    words = describe_class_answers(list(q.options), tallies, q.answer, list(q.shares))
    st.html(f'<p class="chart-desc">{html.escape(words)}</p>')
    return verdict
