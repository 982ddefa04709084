"""Class mode's session keys and their defaults: what a session knows about its class. The class itself (plan,
seats, answers) lives in the class store, never here. A teacher's key and a student's seat token come from this
browser's HttpOnly cookies (set by the app's class routes, serve/class_routes.py), are kept here for the store's
calls, and never reach an address or a page."""

from __future__ import annotations

# What a session knows about its class. The class itself (plan, seats, answers) lives in the class store, never
# here. A teacher's key and a student's seat token come from this browser's HttpOnly cookies (set by the app's class
# routes, serve/class_routes.py), are kept here for the store's calls, and never reach an address or a page.
CLASS_CODE = "class.code"  # the class's six-letter code, or None: not in a class

CLASS_ROLE = "class.role"  # "teacher" (the console), "student", "display" (the projector), or None

CLASS_KEY = "class.key"  # the teacher's key (teacher only), from this browser's cookie

CLASS_TOKEN = "class.token"  # the student's seat token (student only), from this browser's cookie

CLASS_SEAT = "class.seat"  # the student's seat number, 1, 2, … (student only)

CLASS_MODE = "class.mode"  # the teacher's pacing: "follow", "paused" or "released"

CLASS_RECALL = "class.recall"  # bumped by "bring back": released students return to the teacher's step

CLASS_ROUNDS = "class.rounds"  # {question id: voting round} ("vote again" opens round 2)

CLASS_PUBLISHED = "class.published"  # the Plan this teacher last published (sent again only when it changes)
CLASS_DISPLAY_ENDED = "class.display_ended"  # bool: this session was a class's display whose class ended
CLASS_VERSION = "class.version"  # the plan version this console published or took back last (None: neither yet)

CLASS_APPLIED = "class.applied"  # (plan version, recall) this follower's view last followed

CLASS_FOLLOWED_UID = "class.followed_uid"  # the teacher's request uid this follower's stage holds

CLASS_MESSAGE = "class.message"  # (level, text) | None: a refusal (bad code, ended class), shown once

CLASS_JOIN_CODE = "class.join_code"  # the join form's code box

CLASS_NICKNAME = "class.nickname"  # the join form's optional nickname box

CLASS_JOIN_SHOWN = "class.join_shown"  # bool: the console shows the join code on the display

CLASS_STOP_REVEALED = "class.stop_revealed"  # (lesson, stop) whose answer the console revealed on the display

CLASS_PENDING = "class.pending"  # {(question id, round): pick} a student's answers not yet taken by the store

CLASS_STARTING = "class.starting"  # bool: ?class=new, the start panel is open

CLASS_SUBMITTED = "class.submitted"  # (route, body) a class form sent, until the browser opens the class

CLASS_POSTING = "class.posting"  # the POST the class_post component is making ({action, body, nonce}), or None

CLASS_RESUMING = "class.resuming"  # bool: a teacher's new session takes the class's plan back once

CLASS_WAITING = "class.waiting"  # bool: the console's plan waits for the store (its bar was drawn waiting)

CLASS_RETRIES = "class.retries"  # runs that drew the class listener waiting to try the store again (a counter)

# What leaving a class resets (the rest of DEFAULTS is the page's, or a teacher's pacing for a next class).
CLASS_IDENTITY = (
    CLASS_CODE, CLASS_ROLE, CLASS_KEY, CLASS_TOKEN, CLASS_SEAT, CLASS_APPLIED, CLASS_FOLLOWED_UID, CLASS_WAITING,
)  # fmt: skip

CLASS_ANSWERS = "class.answers"

CLASS_LINE = "class-line"

CLASS_PAGE = "class.page"  # the teacher's page script, as last seen by a full run

CLASS_PAGE_NOW = "class.page_now"  # the page script this student's last full run drew

CLASS_PICK = "class.pick"

CLASS_PLAN = "class.plan"  # (version, plan) as the last poll read it

CLASS_POSE = "class-pose"

CLASS_POSED = "class.posed"  # the Practice question this teacher put to the class (a plan Question), or None

CLASS_QUESTION = "class-question"

CLASS_URL_READ = "class.url_read"

CLASS_BAR = "class-bar"  # the console's class bar

CLASS_JOIN_BOX = "class-join-box"  # the display's join code and QR code

CLASS_JOINING = "class.joining"  # the console's Joining open switch

CLASS_LISTENER = "class-listener"  # the class event stream's listener component

CLASS_PULSE_SEEN = "class.pulse_seen"  # the last pulse this session ran for, as the stream wrote it (JSON)

CLASS_PAIR_CODE = "class.pair_code"  # the one-time code the console showed for a second device

CLASS_PAIR_TYPED = "class.pair_typed"  # the sidebar's box for that code

CLASS_REMOVE_SEAT = "class.remove_seat"  # the roster's choice of a seat to remove

CLASS_CODE_TYPED = "class.code_typed"  # the sidebar's "Join a class" box: a student's class code

CLASS_CODE_NICKNAME = "class.code_nickname"  # the nickname beside it

CLASS_SIDEBAR_SAYS = "class.sidebar_says"  # why the sidebar's code or pairing box refused what was typed

CLASS_PAUSED = "class-paused"  # a student's pause cover (a fixed element, assets/style/a11y.css)

CLASS_POST = "class-post"  # + the route: the class_post component

CLASS_SEATS = "class.seats"  # the start panel's Seats box

CLASS_SERVE_ASK = "class.serve_ask"  # Serve the class: the teacher's "Ask the class first" before a long document

CLASS_SERVE_ASKED = "class.serve_asked"  # long-document questions this teacher has asked (each one's number)

# This feature's session keys with a default: seeded once per session (ui.session.init_state).
DEFAULTS = {
    CLASS_CODE: None,
    CLASS_ROLE: None,
    CLASS_KEY: None,
    CLASS_TOKEN: None,
    CLASS_SEAT: None,
    CLASS_MODE: "follow",
    CLASS_RECALL: 0,
    CLASS_ROUNDS: {},
    CLASS_PUBLISHED: None,
    CLASS_VERSION: None,
    CLASS_DISPLAY_ENDED: False,
    CLASS_APPLIED: None,
    CLASS_FOLLOWED_UID: None,
    CLASS_MESSAGE: None,
    CLASS_JOIN_CODE: "",
    CLASS_CODE_TYPED: "",
    CLASS_CODE_NICKNAME: "",
    CLASS_REMOVE_SEAT: None,
    CLASS_SIDEBAR_SAYS: None,
    CLASS_NICKNAME: "",
    CLASS_JOIN_SHOWN: False,
    CLASS_STOP_REVEALED: None,
    CLASS_PENDING: {},
    CLASS_STARTING: False,
    CLASS_SUBMITTED: None,
    CLASS_POSTING: None,
    CLASS_RESUMING: False,
    CLASS_WAITING: False,
    CLASS_RETRIES: 0,
    CLASS_SERVE_ASK: False,
    CLASS_SERVE_ASKED: 0,
}
