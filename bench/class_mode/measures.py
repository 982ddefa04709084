"""Everything one class run measured (``Run``), and the errors found."""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class Run:
    """Everything measured in one class, and the errors found."""

    errors: list = field(default_factory=list)
    code: str = ""
    teacher_key: str = ""
    join_ms: list = field(default_factory=list)  # the join form's Join → the seat line on the class's page
    join_post_ms: list = field(default_factory=list)  # … of it, the join route's answer (POST → its cookie)
    join_link_ms: list = field(default_factory=list)  # the class's link opened → the seat line
    seated: int = 0
    display_ms: float = math.nan  # the display's address opened → its stage at the teacher's step
    follow_ms: list = field(default_factory=list)  # teacher's Step click → a student's stage shows it
    display_follow_ms: list = field(default_factory=list)  # … the display's stage
    follow_from_teacher_ms: list = field(default_factory=list)  # teacher's stage shows it → a follower's
    notice_ms: list = field(default_factory=list)  # teacher's click → the pulse reaches the follower's browser
    page_ms: list = field(default_factory=list)  # that pulse → its stage shows the Step
    without_full_run: int = 0  # follows shown by a rerun of the stage alone (no full app run in between)
    followed: int = 0
    to_follow: int = 0
    step_reruns: list = field(default_factory=list)  # pulse reruns all tabs sent per plain Step
    quiet: dict = field(default_factory=dict)  # the class sitting still: cores, reruns, pulses, messages
    buttons_ms: list = field(default_factory=list)  # question opened → its buttons on a student's page
    questions: list = field(default_factory=list)  # one dict per question
    answers: dict = field(default_factory=dict)  # (student, qid, round) -> pick sent
    kill: dict = field(default_factory=dict)
    window_ms: list = field(default_factory=list)  # others' following while the killed were away
    outage: dict = field(default_factory=dict)
    wrong: dict = field(default_factory=dict)
    walk: dict = field(default_factory=dict)  # a guided lesson walked (bench.class_mode.stops.walk)
    serving: dict = field(default_factory=dict)  # the class engine's work meanwhile (bench.class_mode.serving)
    settings: list = field(default_factory=list)  # the teacher's settings moves (bench.class_mode.settings)
    reads: dict = field(default_factory=dict)  # pulses whose plan version did not move (bench.class_mode.reads)
    tracebacks: int = 0  # exception elements and ui.errors' sentence for an exception, all tabs
    lost_shown: int = 0  # tabs that said the class store was out of reach (ui.errors.LOST_CLASS)
    pulses: int = 0  # events the tabs' streams brought, all tabs, whole run
    forwarded: int = 0  # … sent on as the listener's trigger value
    fragment_runs: int = 0  # fragment runs finished, all tabs
    full_runs: int = 0
    unfinished: int = 0  # the console's full runs that drew the page but sent no script_finished
