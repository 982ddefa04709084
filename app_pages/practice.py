"""Practice: checked exercises with fresh numbers (Ch. 30 §30.8 exercises 1–6, Example 30.2 and
Ch. 19's worked questions). Answers, known mistakes and feedback all come from core.practice.exercises."""

import secrets

import streamlit as st

import ui
from core import state
from core.practice import catalogue, exercises
from core.practice.tally import Attempt, Tally
from ui import handout

st.title("Practice")
notation = st.empty()  # how to type answers: its examples depend on the exercise (below)

# A shared link (?ex=ch30-3&numbers=12) sets the exercise and its numbers.
ex_id, seed, notes = catalogue.parse_query(st.query_params.to_dict())
st.session_state.update({k: v for k, v in ((state.PRACTICE_EX, ex_id), (state.PRACTICE_SEED, seed)) if v is not None})
for note in notes:
    st.warning(f"Link parameter ignored: {note}.")
if st.session_state.get(state.PRACTICE_TALLY) is None:
    st.session_state[state.PRACTICE_TALLY] = Tally()  # this session's own, never a shared default
tally: Tally = st.session_state[state.PRACTICE_TALLY]


def show(ex_id: str, seed: int) -> None:
    """Switch to an instance and write it into the address (read back on the next run)."""
    st.session_state[state.PRACTICE_EX], st.session_state[state.PRACTICE_SEED] = ex_id, seed
    st.query_params.update({"ex": ex_id, "numbers": str(seed)})


def field(ex: exercises.Exercise, p: exercises.Part) -> str:
    return f"practice.in.{ex.id}.{ex.seed}.{p.key}"


def check_all(ex: exercises.Exercise) -> None:
    typed = [(p, st.session_state.get(field(ex, p))) for p in ex.parts]
    for p, text in typed:
        tally.record(ex, p, text, exercises.check(p, text))
    # Every box empty: nothing to record, but the press deserves an answer (said below the form).
    st.session_state["practice.nothing_typed"] = not any(str(text or "").strip() for _, text in typed)


ex = catalogue.make(st.session_state[state.PRACTICE_EX], st.session_state[state.PRACTICE_SEED])
if not ui.presenter_mode():  # a projector needs the room for the exercise
    notation.caption(exercises.notation_caption(ex))
if st.query_params.get("ex") != ex.id or st.query_params.get("numbers") != str(ex.seed):
    st.query_params.update({"ex": ex.id, "numbers": str(ex.seed)})

pick, new, chapter, hint = st.columns([5, 2, 2, 2], vertical_alignment="bottom")
st.session_state["practice.pick"] = ex.id
pick.selectbox(
    "Exercise",
    list(catalogue.catalogue()),
    format_func=catalogue.title,
    key="practice.pick",
    on_change=lambda: show(st.session_state["practice.pick"], 0),
)
new.button(
    "New numbers",
    on_click=lambda: show(ex.id, (ex.seed + 1 + secrets.randbelow(9_998)) % 9_999 + 1),
    help="A fresh instance with the same structure; the address (…&numbers=N) reproduces it.",
    width="stretch",
)
chapter.button("Chapter's numbers", on_click=show, args=(ex.id, 0), disabled=ex.seed == 0, width="stretch")
shown = tally.hints_shown(ex)
hint.button(
    f"Hint {shown}/{len(ex.hints)}",
    on_click=tally.take_hint,
    args=(ex,),
    disabled=shown == len(ex.hints),
    icon=":material/tips_and_updates:",
    width="stretch",
)

BADGES = {
    "right": ":green-badge[:material/check: right]",
    "unreadable": ":red-badge[:material/help: couldn't read]",
    "wrong": ":gray-badge[not quite]",
}


def said(p: exercises.Part, last: Attempt | None) -> None:
    """The last Check's verdict for one part (messages quote typed text only as code spans)."""
    if last is None:
        return
    if last.status == "noted":
        st.info(f"**Model answer.** {p.answer}")
        return
    badge = BADGES.get(last.status, f":orange-badge[:material/lightbulb: {last.mistake}]")
    st.markdown(badge if last.status == "right" else f"{badge} {last.message}")


def answer_box(ex: exercises.Exercise, p: exercises.Part) -> None:
    last = tally.last(ex, p.key)
    typed = last.typed if last else ""
    unit = {"B": "bytes", "×": ""}.get(p.unit, p.unit)
    with_unit = unit and unit not in p.label and p.kind not in ("choice", "explain")
    label = f"{p.label} ({unit})" if with_unit else p.label
    if p.kind == "explain":
        st.text_area(label, typed, key=field(ex, p), height=90, max_chars=2_000)
    elif p.options:
        index = p.options.index(typed) if typed in p.options else None
        st.radio(label, p.options, index=index, key=field(ex, p), horizontal=True)
    else:
        bare = f" A bare number means {p.unit}." if p.kind == "bytes" else ""
        help_text = f"Counts as right: {p.tolerance.describe(p.unit)}.{bare}"
        st.text_input(
            label,
            typed,
            key=field(ex, p),
            max_chars=exercises.answers.MAX_TYPED,
            placeholder=p.placeholder,
            help=help_text,
        )
    said(p, last if str(st.session_state.get(field(ex, p), typed) or "").strip() else None)  # emptied: no verdict


with st.form(f"practice.form.{ex.id}.{ex.seed}", border=False):
    left, right = st.columns([3, 2], gap="large")
    with left:
        numbers = "the chapter's own numbers" if ex.seed == 0 else f"numbers {ex.seed}"
        st.markdown(ex.question)
        st.caption(f"{ex.source} · {numbers}")
        short = [p for p in ex.parts if p.kind != "explain"]
        per_row = 3 if ui.presenter_mode() and len(short) > 4 else 2  # one projector screen
        for row in range(0, len(short), per_row):
            for col, p in zip(st.columns(per_row), short[row : row + per_row], strict=False):
                with col:
                    answer_box(ex, p)
        st.form_submit_button("Check", type="primary", on_click=check_all, args=(ex,))
        if st.session_state.pop("practice.nothing_typed", False):
            st.warning("Type at least one answer, then press **Check**.")
    with right:
        for hint_text in ex.hints[:shown]:
            st.markdown(f"- {hint_text}")
        for p in ex.parts:
            if p.kind == "explain":
                answer_box(ex, p)
        if tally.attempted(ex):
            with st.expander("Worked solution", icon=":material/menu_book:"):
                st.markdown(ex.solution)
        else:
            st.caption("The worked solution opens after your first Check.")
        st.markdown(
            f"**This session:** {tally.checked} checked · {tally.right} right · {tally.unreadable} couldn't be read"
        )
        if tally.mistakes:
            met = " · ".join(f"{name} × {n}" for name, n in tally.mistakes.most_common())
            st.caption(f"Known mistakes met: {met}")
handout.download_button("practice.handout")  # the lesson's handout, or this session's pages
