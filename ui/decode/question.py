"""Predict, then reveal, on the decode stage: the open question with its five answers (keys 1–5),
or the last revealed answer with the right one and the learner's pick marked (``core.decode.predict``
makes the questions; ``ui.decode.actions`` holds the session's question, pick and tally)."""

from __future__ import annotations

import html
import re

import streamlit as st

from core.decode.session import step_block_reason
from core.model.tokenizer import end_token_id
from core.text import show_spaces
from ui import models
from ui.decode import actions
from ui.decode import keys as decode_keys


def settle() -> None:
    """Put the question up if *Predict first* is on with a request to ask about and nothing asked or
    revealed (the state the switch's callback, ``actions.predict_toggled``, leaves once it has run).

    Why (streamlit 1.67): a class teacher's 0.5-s poll can carry the switch's new value to the server
    before the switch's own message; the callback then runs inside the poll's run, and the switch's own
    rerun stops that run at its next ``st.session_state`` access (``runner.fastReruns``), part-way
    through the callback. The switch's own run then sees no change and calls no callback: Predict
    first stayed on with no question (the class rehearsal, 1 of ~5 suites under load)."""
    ss, sess = st.session_state, actions.session()
    if not ss[decode_keys.DECODE_PREDICT] or ss[decode_keys.DECODE_PLAYING] or sess is None:
        return
    if ss[decode_keys.DECODE_QUESTION] is not None or ss[decode_keys.DECODE_REVEALED] is not None:
        return
    if step_block_reason(sess, end_token_id(models.chosen_tokenizer())):
        return  # nothing to ask about (an end token, a full window): said when it happened
    actions.ask()


def code_span(text: str) -> str:
    """``text`` as a markdown code span: shown literally (no markup, no directives), whatever it holds."""
    longest = max((len(r) for r in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _options(box, q, picked, revealed: bool) -> None:
    """The five answers as buttons, keys 1–5; after the reveal the right one is ticked and a wrong
    pick crossed."""
    row = box.container(horizontal=True, gap="small")  # buttons as wide as their text (presenter.css: ≥ 6rem), wrapping
    for i, option in enumerate(q.options):
        mark = (
            None
            if not revealed
            else (":material/check:" if i == q.answer else ":material/close:" if i == picked else None)
        )
        row.button(
            code_span(show_spaces(option)),
            key=f"{decode_keys.STAGE_ANSWER}.{i}",
            on_click=actions.pick,
            args=(i,),
            type="primary" if (picked == i and not revealed) or (revealed and i == q.answer) else "secondary",
            shortcut=None if revealed else str(i + 1),
            disabled=revealed,
            icon=mark,
            width="content",
        )


def question_panel(present: bool, across: bool = False, class_answers=None) -> None:
    """Predict, then reveal: the open question with its options (keys 1–5), or the last revealed
    answer with the right one and the learner's pick marked. ``across``: one row across the stage,
    the question beside its options (presenter mode: beside the panel it would push off the screen).
    ``class_answers``: a class's teacher asks its students (``ui.classroom``): a callable that draws the class's
    answers at the reveal and returns their verdict line, in place of the teacher's own pick."""
    q, revealed, tally = (
        st.session_state[decode_keys.DECODE_QUESTION],
        st.session_state[decode_keys.DECODE_REVEALED],
        st.session_state[decode_keys.DECODE_TALLY],
    )
    if q is None and revealed is None:
        return
    box = st.container(border=True, key=decode_keys.STAGE_QUESTION)
    ask, pick = box.columns([2, 3], vertical_alignment="center") if across else (box, box)
    score = "" if tally is None else f" Predictions so far: {tally.summary()}."
    if q is not None:
        picked = st.session_state[decode_keys.DECODE_PICK]
        ask.markdown(f"**{q.text}**")
        _options(pick, q, picked, revealed=False)
        says = "The class answers on their laptops; → (Step) reveals." if class_answers else None
        box.caption(
            says
            or "Pick 1–5, then → (Step) reveals." + ("" if picked is None else f" Your pick: {picked + 1}.") + score
        )
        return
    q, picked = revealed
    verdict = "No answer given." if picked is None else ("Right!" if picked == q.answer else "Not this time.")
    ask.markdown(f"**{q.text}**")
    _options(pick, q, picked, revealed=True)
    if class_answers:  # a class's answers, not the teacher's own pick
        with box:
            verdict, score = class_answers(), ""
    # The verdict and why in one small paragraph, so the panel fits one screen; escaped, as the
    # explanation may quote typed tokens.
    miss = q.miss(picked)  # the mistake behind this wrong pick, named first
    miss = f" {q.options[picked]} is {miss}." if miss else ""
    why = f"{verdict}{miss} {q.explain} → asks the next question.{score}"
    box.html(
        f'<p class="chart-desc stage-why"><strong>{html.escape(verdict)}</strong>{html.escape(why[len(verdict) :])}</p>'
    )
