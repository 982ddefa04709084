"""The "What you now know" page's points (``core.lesson.summary``): each in the chapter's words, with a link
to every page that shows it."""

from __future__ import annotations

import streamlit as st

from core.lesson.pages import PAGES
from core.lesson.summary import Summary
from ui.frame import ICONS, TITLES


def summary(s: Summary) -> None:
    """One chapter's summary: its title (the chapter's full name on hover), then each point with its pages' links
    under it. No boxes around the points: all nine, with their links, fit one 1920×1080 screen in presenter mode."""
    st.subheader(s.title, help=s.source, anchor=False)
    for point in s.points:
        item = st.container(gap=None)
        item.markdown(f"**·** {point.text}")
        links = item.container(horizontal=True, gap="small")
        for name in point.pages:
            links.page_link(PAGES[name].script, label=TITLES[name], icon=ICONS[name])
