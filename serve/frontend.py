"""The browser-drawn figures' code, served by the app's own route: the components' ES modules
(``frontend/*.js``) and the plotly.js inside the installed ``plotly`` package, read where they lie (the
checkout, or the installed package and plotly's own folder), so nothing is copied or written at run time.

The route's address holds a digest of the files' names and contents and of the plotly version
(``/explainer/js/<digest>/<name>``): a browser never runs a cached old version, and each file may be cached for
good. Only the files of ``FILES`` are served, by name; any other name or an old digest is answered 404.
Imports no streamlit: ``main.py`` mounts ``ROUTES`` on the ``st.App``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import plotly
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse
from starlette.routing import Route

HOME = Path(__file__).resolve().parents[1]  # the checkout, or the installed package's folder
FRONTEND = HOME / "frontend"
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
PREFIX = "explainer/js"  # the route, relative to the app's address
# name -> file: the components' modules and plotly.js, the only files the route answers with.
FILES = {**{f.name: f for f in sorted(FRONTEND.glob("*.js"))}, PLOTLY_JS.name: PLOTLY_JS}


def digest() -> str:
    """12 hex digits of sha256 over the components' modules (names and contents) and the plotly version."""
    h = hashlib.sha256(plotly.__version__.encode())
    for name, path in FILES.items():
        if path != PLOTLY_JS:
            h.update(name.encode() + path.read_bytes())
    return h.hexdigest()[:12]


DIGEST = digest()


def url(name: str) -> str:
    """The address of one served file, relative to the app's own (``explainer/js/<digest>/<name>``)."""
    return f"{PREFIX}/{DIGEST}/{name}"


async def _serve(request: Request):
    name, wanted = request.path_params["name"], request.path_params["digest"]
    if wanted != DIGEST or name not in FILES:
        return PlainTextResponse("Not found", status_code=404)
    return FileResponse(
        FILES[name],
        media_type="text/javascript",
        headers={"Cache-Control": "public, max-age=31536000, immutable"},
    )


ROUTES = [Route(f"/{PREFIX}/{{digest}}/{{name}}", _serve, methods=["GET", "HEAD"])]
