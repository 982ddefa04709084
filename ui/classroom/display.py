"""The display: the page the projector shows, following the teacher's console as a student's page does (its own
model and cache), at presenter size, with no sidebar, no speaker notes, no key and no teacher control. It shows
the class's line and live count, the question without answer buttons, the class's answers at the reveal, and the
join code with its QR code while the console shows it. Before the teacher reveals a lesson stop's answer, the lines
that state it stay hidden (``ui.present.answers_hidden``): a display never shows an answer early.
"""

from __future__ import annotations

import segno
import streamlit as st

from core.classroom.plan import Plan
from core.lesson.stops import shipped_lessons
from core.typed_numbers import quote
from ui import present
from ui.classroom import identity
from ui.classroom import keys as class_keys
from ui.present import style_sheet

# The display's own frame (the app's constant CSS): no sidebar or its toggle, no page menu, no toolbar.
DISPLAY_CSS = """
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stExpandSidebarButton"],
[data-testid="stToolbar"], header [data-testid="stNavigation"], .st-key-lesson-bar button { display: none !important; }
/* No control on the projector: the display follows the console (its buttons, pickers, sliders and boxes would
   only invite a click the display must not take). Figures, tables and text stay. */
[data-testid="stMain"] :is([data-testid="stButton"], [data-testid="stDownloadButton"], [data-testid="stLinkButton"],
  [data-testid="stSelectbox"], [data-testid="stMultiSelect"], [data-testid="stSlider"], [data-testid="stRadio"],
  [data-testid="stNumberInput"], [data-testid="stTextInput"], [data-testid="stTextArea"], [data-testid="stCheckbox"],
  [data-testid="stButtonGroup"], [data-testid="stPopover"], [data-testid="stFileUploader"]) {
  display: none !important; }
/* The question's options as large chips: "!", "," and "." stay readable from the back of the room. */
.st-key-class-question code { font-size: 1.6rem; padding: 0.1em 0.6em; border: 1px solid #9a9997; border-radius: 0.4em;
  background: #f7f7f5; }
"""


def setup() -> None:
    """Every run of a display: presenter size, and whether the answer lines are hidden on this stop."""
    ss = st.session_state
    if ss[class_keys.CLASS_DISPLAY_ENDED]:  # the projector keeps showing no control once its class has ended
        present.turn_on()
        present.hide_answers(False)
        return style_sheet(DISPLAY_CSS)
    if identity.role() != identity.DISPLAY:
        present.hide_answers(False)
        return
    present.turn_on()
    present.hide_answers(hides(ss.get(class_keys.CLASS_PLAN, (0, Plan()))[1]))
    style_sheet(DISPLAY_CSS)


def hides(plan: Plan) -> bool:
    """Whether a display hides the answer lines under this plan: a shipped lesson's stop (each asks its class a
    question) that the console has not revealed yet."""
    return plan.lesson is not None and plan.lesson in shipped_lessons() and not plan.stop_revealed


def join_code(plan: Plan) -> None:
    """The join code, the students' link and its QR code, while the console shows them on the display."""
    if not plan.join_shown:
        return
    url, warning = identity.join_link()
    box = st.container(border=True, key=class_keys.CLASS_JOIN_BOX)
    left, right = box.columns([3, 2], vertical_alignment="center")
    left.markdown(f"## Class code: `{identity.code()}`")
    left.markdown(f"Open {quote(url)} on your laptop or phone, or scan the QR code.")
    left.caption("No account: a nickname is optional and only your teacher sees it.")
    if warning:
        left.warning(warning)
    right.image(segno.make(url, error="m").png_data_uri(scale=8), caption="Scan to join", width=300)
