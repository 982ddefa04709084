"""The app as streamlit serves it: ``streamlit run main.py`` (or the ``inference-explainer`` command).

``app.py`` is the script every session runs; this ``st.App`` adds the app's own routes beside it: the
browser-drawn figures' code (``serve.frontend``). Streamlit finds ``app`` here and serves it with uvicorn.
"""

import streamlit as st

from serve import frontend

app = st.App("app.py", routes=frontend.ROUTES)
