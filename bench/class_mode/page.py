"""What one browser tab's page shows, kept from the ForwardMsgs as they arrive (``Page``): its buttons, text
boxes and toggles with their fragment ids, the decode stage's step, a student's class line, the console's
count, alerts and exceptions, and the two class components (the event-stream listener and a pending POST)."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import NamedTuple

STEPS = re.compile(r"decode steps (\d+)")
SEAT = re.compile(r"Class (\w+) · seat (\d+) · ([a-z ]+?)(?: · step (\d+))?$")
COUNT = re.compile(r"\*\*(\d+) of (\d+) answered\*\*")
STOP = re.compile(r'<p class="lesson-text">Stop (\d+) of (\d+) · ')  # ui/lesson/draw.py's bar title
LISTENER = "explainer_class_events"  # ui/classroom/wire.py's components (components v2)
POSTER = "explainer_class_post"
BROKEN = "Something went wrong on this page"  # ui.errors.on_script_error: an exception a page raised
LOST = "Lost the connection to the class"  # ui.errors.LOST_CLASS: the class store is out of reach


def now() -> float:
    return time.perf_counter()


class Listener(NamedTuple):
    """The ``explainer_class_events`` component as a page drew it (ui/classroom/wire.py's data)."""

    id: str
    fragment: str  # the fragment that drew it: a pulse reruns that one
    code: str
    watch: tuple | None  # the pulse's fields this page reruns for (None: any change)
    retry: int | None  # set while the page holds what the store refused: run again in retry_ms
    retry_ms: int | None
    seen: str | None  # the last pulse this session ran for, as the stream wrote it


@dataclass(eq=False)
class Page:
    """The page of one tab, as drawn so far (a new page load starts afresh: ``forget``)."""

    name: str
    buttons: dict = field(default_factory=dict)  # label -> (widget id, fragment id, disabled)
    button_ids: dict = field(default_factory=dict)  # widget id -> (widget id, fragment id, disabled): every button
    picks: dict = field(default_factory=dict)  # (question id, round) -> {i: (widget id, fragment id, disabled)}
    inputs: dict = field(default_factory=dict)  # text input label -> widget id
    numbers: dict = field(default_factory=dict)  # number input label -> (widget id, fragment id)
    selects: dict = field(default_factory=dict)  # select box label -> (widget id, fragment id, options)
    texts: list = field(default_factory=list)  # [(time, body)] every markdown element drawn
    toggles: dict = field(default_factory=dict)  # toggle label -> (widget id, fragment id)
    forms: dict = field(default_factory=dict)  # form submit button label -> (widget id, fragment id)
    shown: list = field(default_factory=list)  # [(time, decode steps)] each time the stage's step changed
    seat: int | None = None
    strip_step: int | None = None  # the step a student's class line names (the plan's)
    count: list = field(default_factory=list)  # [(time, answered, students)] from the console's class bar
    alerts: list = field(default_factory=list)  # [(time, text)] st.info/warning/error as drawn
    exceptions: list = field(default_factory=list)  # exception elements and on_script_error's sentence
    listener: Listener | None = None  # the class's event-stream listener, as the page drew it last
    posting: dict | None = None  # the data of the class POST component drawn last (action, body, nonce, then)
    nav_hash: str = ""  # the page the last navigation message named (the page the browser shows)
    stops: list = field(default_factory=list)  # [(time, lesson stop from 1, nav_hash)] each lesson bar drawn
    headings: list = field(default_factory=list)  # [(time, heading text, nav_hash)] each page heading drawn
    lesson_bar: float | None = None  # when the page last drew a lesson bar (None: not since its last navigation)
    _fresh: bool = True

    @property
    def step(self) -> int | None:
        return self.shown[-1][1] if self.shown else None

    def reached(self, k: int, after: float) -> float | None:
        """When the stage first showed step ≥ k at or after ``after`` (None: not yet)."""
        return next((t for t, s in self.shown if t >= after and s >= k), None)

    def lost_since(self, t: float) -> bool:
        return any(tt >= t and LOST in a for tt, a in self.alerts)

    def forget(self) -> None:
        """A new page load: nothing drawn yet (what was measured stays)."""
        self.buttons, self.picks, self.inputs, self.toggles, self.forms = {}, {}, {}, {}, {}
        self.button_ids, self.numbers, self.selects = {}, {}, {}
        self.listener, self.posting, self.seat, self.strip_step = None, None, None, None
        self._fresh = True

    def element(self, el, fragment: str) -> Listener | None:
        """Keep what ``el`` (a proto Element) shows; returns the ``Listener`` when ``el`` is the class's
        event-stream listener, else None."""
        kind = el.WhichOneof("type")
        if kind == "button":
            b = el.button
            if "class.pick." in b.id:  # key class.pick.<question id>.<round>.<i>
                qid, round_, i = b.id.split("class.pick.", 1)[1].rsplit(".", 2)
                self.picks.setdefault((qid, int(round_)), {})[int(i)] = (b.id, fragment, b.disabled)
            elif b.is_form_submitter:
                self.forms[b.label] = (b.id, fragment)
            else:
                self.buttons[b.label] = (b.id, fragment, b.disabled)
            self.button_ids[b.id] = (b.id, fragment, b.disabled)
        elif kind == "text_input":
            self.inputs[el.text_input.label] = el.text_input.id
        elif kind == "number_input":
            self.numbers[el.number_input.label] = (el.number_input.id, fragment)
        elif kind == "selectbox":
            self.selects[el.selectbox.label] = (el.selectbox.id, fragment, tuple(el.selectbox.options))
        elif kind == "checkbox":
            self.toggles[el.checkbox.label] = (el.checkbox.id, fragment)
        elif kind == "markdown":
            self.texts.append((now(), el.markdown.body))
            self._text(el.markdown.body)
        elif kind == "heading":
            self.headings.append((now(), el.heading.body, self.nav_hash))
        elif kind == "alert":
            self.alerts.append((now(), el.alert.body))
            if BROKEN in el.alert.body:
                self.exceptions.append(f"{self.name}: {el.alert.body[:200]}")
        elif kind == "exception":
            self.exceptions.append(f"{self.name}: {el.exception.type}: {el.exception.message[:160]}")
        elif kind == "bidi_component":
            return self._component(el.bidi_component, fragment)
        return None

    def _component(self, c, fragment: str) -> Listener | None:
        data = json.loads(c.json) if c.json else {}
        if c.component_name.endswith(LISTENER) and data.get("code"):
            watch = tuple(data["watch"]) if isinstance(data.get("watch"), list) else None
            self.listener = Listener(
                c.id, fragment, data["code"], watch, data.get("retry"), data.get("retry_ms"), data.get("seen")
            )
            return self.listener
        if c.component_name.endswith(POSTER) and data.get("action"):
            self.posting = data
        return None

    def _text(self, body: str) -> None:
        if m := STOP.search(body):
            self.stops.append((now(), int(m.group(1)), self.nav_hash))
            self.lesson_bar = now()
        elif m := STEPS.search(body):
            k = int(m.group(1))
            if self.step != k or self._fresh:  # a new session's first drawing counts, even at the same step
                self.shown.append((now(), k))
                self._fresh = False
        elif m := SEAT.search(body):
            self.seat = int(m.group(2))
            self.strip_step = None if m.group(4) is None else int(m.group(4))
        elif m := COUNT.search(body):
            self.count.append((now(), int(m.group(1)), int(m.group(2))))
