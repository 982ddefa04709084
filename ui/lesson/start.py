"""Lesson mode's sidebar: start the shipped lesson or a teacher's own file (with the teacher view's
toggle), and say why a file was refused. Split from ``ui.lesson``; called from app.py."""

from __future__ import annotations

import streamlit as st

from core.lesson.stops import MAX_BYTES, LessonError, parse_lesson, shipped_lessons
from ui.lesson import keys as lesson_keys
from ui.lesson.moves import shipped, start
from ui.page import set_message, show_message


def _start_shipped() -> None:
    name = st.session_state[lesson_keys.LESSON_PICK]
    start(shipped(name), name)
    st.session_state[lesson_keys.LESSON_CLOSE_SIDEBAR] = True  # the lesson gets the whole screen (lesson_scroll.js)


def _start_upload() -> None:
    """Validate the uploaded file; a malformed one is refused with its problems, nothing else changes."""
    ss, up = st.session_state, st.session_state.get(lesson_keys.LESSON_UPLOAD)
    if up is None:
        # A file over the upload limit (1 MB) never arrives: streamlit's own note under the box says so,
        # and this one gives the lesson's limit, so "first" does not read as if nothing was chosen.
        set_message(
            lesson_keys.LESSON_MESSAGE, f"Choose a lesson file (.toml, at most {MAX_BYTES // 1000} kB) first", "info"
        )
        return
    try:
        lesson = parse_lesson(up.getvalue(), up.name)
    except LessonError as err:
        set_message(lesson_keys.LESSON_MESSAGE, "This lesson file can't be used; nothing was changed", "error")
        ss[lesson_keys.LESSON_PROBLEMS] = str(err)
        return
    start(lesson, None)
    ss[lesson_keys.LESSON_CLOSE_SIDEBAR] = True


def sidebar() -> None:
    """Start the shipped lesson or a teacher's own file; say why a file was refused."""
    with st.sidebar:
        st.subheader("Guided lesson")
        names = shipped_lessons()
        st.selectbox(
            "Shipped lesson",
            names,
            key=lesson_keys.LESSON_PICK,
            persist_state="session",
            format_func=lambda n: shipped(n).title,
        )
        st.toggle(
            "Teacher view: speaker notes",
            key=lesson_keys.LESSON_TEACHER,
            persist_state="session",
            help="Each stop offers its speaker note (the link's teacher=1). Off: what a student sees.",
        )
        st.button("Start this lesson", on_click=_start_shipped, icon=":material/school:", width="stretch")
        st.file_uploader(
            f"…or your own lesson file (TOML, ≤ {MAX_BYTES // 1000} kB; format in the README)",
            type=["toml"],
            key=lesson_keys.LESSON_UPLOAD,
            max_upload_size=1,
        )
        st.button("Start my lesson", on_click=_start_upload, icon=":material/upload_file:", width="stretch")
        messages()


def messages() -> None:
    show_message(lesson_keys.LESSON_MESSAGE)
    problems = st.session_state[lesson_keys.LESSON_PROBLEMS]
    if problems:
        st.code(problems, language=None, wrap_lines=True)  # the file's text, shown literally
