"""Serving the browser-drawn figures' code: the components' ES modules (``frontend/*.js``) and the
plotly.js inside the installed ``plotly`` package, through streamlit's static serving
(``server.enableStaticServing``). At start-up ``static/stage-<hash>/`` gets hard links to them
(copies where links are impossible), named after their contents so a browser never runs a cached
old version. Each component's own JS is then a two-line loader (``loader``), so a rerun does not
resend the code. ``static/`` is generated, never committed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import plotly

ROOT = Path(__file__).resolve().parent
FRONTEND = ROOT / "frontend"


def _link(src: Path, dst: Path) -> None:
    """``dst`` a hard link to ``src`` (a copy where links are impossible), made atomically: several
    server processes may start at once."""
    tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def ensure_static_frontend() -> str:
    """Serve frontend/*.js and plotly.min.js from ``static/stage-<hash>/``; returns that folder's
    name. The hash covers the files' contents and the plotly version."""
    plotly_js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    files = sorted(FRONTEND.glob("*.js"))
    digest = hashlib.sha256(plotly.__version__.encode())
    for f in files:
        digest.update(f.name.encode() + f.read_bytes())
    folder = ROOT / "static" / f"stage-{digest.hexdigest()[:12]}"
    folder.mkdir(parents=True, exist_ok=True)
    for src in [*files, plotly_js]:
        dst = folder / src.name
        if not dst.exists() or dst.stat().st_size != src.stat().st_size:
            _link(src, dst)
    return folder.name


def _loader(folder: str, module: str) -> str:
    """A component's JS: import the module from the static folder and hand it the component."""
    return (
        f'const entry = new URL("app/static/{folder}/{module}", document.baseURI).href;\n'
        "export default function (component) { import(entry).then((m) => m.default(component)); }\n"
    )


STATIC = ensure_static_frontend()


def loader(module: str) -> str:
    """The JS of a component whose code is ``frontend/<module>``, served from ``STATIC``."""
    return _loader(STATIC, module)
