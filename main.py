"""The app as streamlit serves it: ``streamlit run main.py`` (or the ``inference-explainer`` command).

``app.py`` is the script every session runs; this ``st.App`` adds the app's own routes beside it (the browser-drawn
figures' code, ``serve.frontend``; class mode's credentials and event stream, ``serve.class_routes``) and one
handler for any error a page raises, so no traceback ever reaches a screen (``ui.errors``). Streamlit finds ``app``
here and serves it with uvicorn.
"""

import sys

import streamlit as st

from core.checkpoints.app_options import AppArgs, parse_app_args, script_args
from core.classroom.store import default_url
from serve import frontend
from serve.class_routes import ClassRoutes
from serve.engine_process import make_service
from serve.engine_routes import EngineRoutes
from ui.errors import on_script_error


def app_options() -> AppArgs:
    """The app's own options (after ``--``); a malformed command line gives the defaults here (the pages say why)."""
    try:
        return parse_app_args(script_args(sys.argv))
    except ValueError:
        return AppArgs()


options = app_options()
store_url = options.class_store or default_url()
classes = ClassRoutes(store_url, options.teacher_password, options.public_url)
# The class engine runs in this process (made on its first request) unless the class server runs it beside the
# replicas: nginx then sends its routes there (serve/engine_process.py).
engine = EngineRoutes(
    lambda: make_service(options.engine_model, options.model, options.max_model_gib), store_url, classes.public_origin
)
routes = [*frontend.ROUTES, *classes.routes(), *engine.routes()]
app = st.App("app.py", routes=routes, on_script_error=on_script_error)
