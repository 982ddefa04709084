"""Practice: checked exercises with fresh numbers (Ch. 30 §30.8 exercises 1–6, Example 30.2 and
Ch. 19's worked questions). Answers, known mistakes and feedback all come from core.practice.exercises."""

import secrets

import streamlit as st

from core.lesson.pages import PAGES
from core.practice import catalogue, exercises
from ui import handout, practice, practice_saved
from ui.classroom import pose
from ui.frame import ICONS, TITLES
from ui.present import presenter_mode

st.title("Practice")
notation = st.empty()  # how to type answers: its examples depend on the exercise (below)

# A shared link (?ex=ch30-3&numbers=12) sets the exercise and its numbers.
ex_id, seed, notes = catalogue.parse_query(st.query_params.to_dict())
st.session_state.update(
    {k: v for k, v in ((practice.PRACTICE_EX, ex_id), (practice.PRACTICE_SEED, seed)) if v is not None}
)
for note in notes:
    st.warning(f"Link parameter ignored: {note}.")
tally = practice_saved.tally()  # with the attempts this browser kept from earlier sessions (ui/practice_saved.py)


ex = catalogue.make(st.session_state[practice.PRACTICE_EX], st.session_state[practice.PRACTICE_SEED])
if not presenter_mode():  # a projector needs the room for the exercise
    notation.caption(exercises.notation_caption(ex))
if st.query_params.get("ex") != ex.id or st.query_params.get("numbers") != str(ex.seed):
    st.query_params.update({"ex": ex.id, "numbers": str(ex.seed)})

pick, new, chapter, hint = st.columns([5, 2, 2, 2], vertical_alignment="bottom")
st.session_state[practice.PRACTICE_PICK] = ex.id
pick.selectbox(
    "Exercise",
    list(catalogue.catalogue()),
    format_func=catalogue.title,
    key=practice.PRACTICE_PICK,
    on_change=lambda: practice.open_exercise(st.session_state[practice.PRACTICE_PICK], 0),
)
new.button(
    "New numbers",
    on_click=lambda: practice.open_exercise(ex.id, (ex.seed + 1 + secrets.randbelow(9_998)) % 9_999 + 1),
    help="A fresh instance with the same structure; the address (…&numbers=N) reproduces it.",
    width="stretch",
)
chapter.button(
    "Chapter's numbers", on_click=practice.open_exercise, args=(ex.id, 0), disabled=ex.seed == 0, width="stretch"
)
shown = tally.hints_shown(ex)
hint.button(
    f"Hint {shown}/{len(ex.hints)}",
    on_click=tally.take_hint,
    args=(ex,),
    disabled=shown == len(ex.hints),
    icon=":material/tips_and_updates:",
    width="stretch",
)

with st.form(f"practice.form.{ex.id}.{ex.seed}", border=False):
    left, right = st.columns([3, 2], gap="large")
    with left:
        numbers = "the chapter's own numbers" if ex.seed == 0 else f"numbers {ex.seed}"
        st.markdown(ex.question)
        st.caption(f"{ex.source} · {numbers}")
        short = [p for p in ex.parts if p.kind != "explain"]
        per_row = 3 if presenter_mode() and len(short) > 4 else 2  # one projector screen
        for row in range(0, len(short), per_row):
            for col, p in zip(st.columns(per_row), short[row : row + per_row], strict=False):
                with col:
                    practice.answer_box(ex, p, tally)
        st.form_submit_button("Check", type="primary", on_click=practice.check_all, args=(ex, tally))
        if st.session_state.pop(practice.PRACTICE_NOTHING_TYPED, False):
            st.warning("Type at least one answer, then press **Check**.")
    with right:
        for hint_text in ex.hints[:shown]:
            st.markdown(f"- {hint_text}")
        for p in ex.parts:
            if p.kind == "explain":
                practice.answer_box(ex, p, tally)
        if tally.attempted(ex):
            with st.expander("Worked solution", icon=":material/menu_book:"):
                st.markdown(ex.solution)
        else:
            st.caption("The worked solution opens after your first Check.")
        st.markdown(
            f"**In this browser:** {tally.checked} checked · {tally.right} right · {tally.unreadable} couldn't be read"
        )
        if tally.mistakes:
            met = " · ".join(f"{name} × {n}" for name, n in tally.mistakes.most_common())
            st.caption(f"Known mistakes met: {met}")
pose.panel(ex)  # a class's teacher: this exercise as a choice on the students' screens (ui/classroom/pose.py)
handout.download_button(practice.PRACTICE_HANDOUT)  # the lesson's handout, or this session's pages
st.page_link(
    PAGES["summary"].script, label=f"Finished? {TITLES['summary']}: the two chapters' summaries", icon=ICONS["summary"]
)
