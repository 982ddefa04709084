"""Lesson mode's session keys and their defaults: the lesson running in this session, its stop, the bar's
elements and the teacher view. The lesson link is ?lesson=<shipped name>&stop=<k from 1>[&teacher=1] (read
once per session)."""

from __future__ import annotations

from core.lesson.stops import FIFTEEN_MINUTES

# The lesson link is ?lesson=<shipped name>&stop=<k from 1>[&teacher=1] (read once per session).
LESSON = "lesson.lesson"  # core.lesson.stops.Lesson running in this session, or None

LESSON_NAME = "lesson.name"  # its shipped name (it goes into the address), None for an uploaded file

LESSON_STOP = "lesson.stop"  # the stop on screen, counted from 0

LESSON_GOTO = "lesson.goto"  # True: a move asked for the stop's page (st.switch_page before the page runs)

LESSON_ARRIVAL = "lesson.arrival"  # moves so far: the browser scrolls to the stop's figure once per move

LESSON_TEACHER = "lesson.teacher"  # teacher view (?teacher=1, or the sidebar's toggle): the speaker note is offered

LESSON_CLOSE_SIDEBAR = "lesson.close_sidebar"  # True once: started from the sidebar, the browser closes it

LESSON_MESSAGE = "lesson.message"  # (level, text) | None: why a lesson file or link was refused

LESSON_PICK = "lesson.pick"  # the sidebar's choice of shipped lesson

LESSON_UPLOAD = "lesson.upload"  # the sidebar's file uploader (a widget value: never seeded here)

LESSON_PROBLEMS = "lesson.problems"  # the refused file's problems (text shown literally), or None

CLASS_LOCKED = "class.locked"  # bool: a following session (the lesson bar's moves and leave are the teacher's)

CLICKER = "clicker"

LESSON_BACK = "lesson.back"

LESSON_BAR = "lesson-bar"

LESSON_FOCUS = "lesson-focus"

LESSON_JUMP = "lesson.jump"

LESSON_KEYS = "lesson-keys"

LESSON_LEAVE = "lesson.leave"

LESSON_LEFT = "lesson.left"

LESSON_NEXT = "lesson.next"

LESSON_NOTE = "lesson-note"

LESSON_PREV = "lesson.prev"

LESSON_RIGHT = "lesson.right"

LESSON_SCROLL = "lesson-scroll"

LESSON_SCROLL_KEY = "lesson.scroll"

LESSON_TITLE = "lesson-title"

LESSON_URL_READ = "lesson.url_read"

LESSON_HANDOUT = "lesson.handout"

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    LESSON: None,
    LESSON_NAME: None,
    LESSON_STOP: 0,
    LESSON_GOTO: False,
    LESSON_ARRIVAL: 0,
    LESSON_TEACHER: False,
    LESSON_CLOSE_SIDEBAR: False,
    LESSON_MESSAGE: None,
    LESSON_PROBLEMS: None,
    LESSON_PICK: FIFTEEN_MINUTES,
    CLASS_LOCKED: False,
}
