"""What you now know: Ch. 19's closing list and Ch. 30 §30.7's summary, in the chapters' words, each point
linked to the pages that show it (``core.lesson.summary``)."""

import streamlit as st

from core.lesson.summary import SUMMARIES, WHERE_HEADED
from ui import summary
from ui.lesson import keys as lesson_keys
from ui.page import title

title("summary")
st.caption("The two chapters' own summaries. Each link opens the page that shows that point with real numbers.")
with st.container(key=lesson_keys.LESSON_FOCUS):  # a lesson's last stop brings both lists into view
    for column, s in zip(st.columns(len(SUMMARIES), gap="large"), SUMMARIES, strict=True):
        with column:
            summary.summary(s)
            if s is SUMMARIES[0]:
                st.markdown(f"**Where we're headed** (Ch. 19)  \n{WHERE_HEADED}")
