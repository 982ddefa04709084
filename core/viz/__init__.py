"""Figures: pure ``fig_*(data) -> go.Figure`` functions, one module per lesson, one shared template.

The only plotly importer (with ``theme``). No streamlit. Text that came from a user (tokens of a
prompt) is escaped before it reaches plotly, whose labels otherwise interpret a subset of HTML.
"""
