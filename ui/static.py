"""Serving the browser-drawn figures' code: the components' ES modules (``frontend/*.js``) and the
plotly.js inside the installed ``plotly`` package, through streamlit's static serving
(``server.enableStaticServing``: the ``static/`` folder beside app.py). ``static/stage-<hash>/``
holds hard links to them (copies where links are impossible), named after their contents so a
browser never runs a cached old version. Each component's own JS is then a two-line loader
(``loader``), so a rerun does not resend the code. ``static/`` is generated, never committed.

A checkout makes the folder at start-up. An installed copy may be read-only to the server's user
(the Docker image, a systemd unit with a read-only /opt): ``python -m ui.static`` makes it at
install time (deploy/Dockerfile), and the app then only reads it. Where it is missing and cannot
be made, the app still runs, and each browser-drawn figure says what to run instead of drawing.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import sys
from pathlib import Path

import plotly

from core.model.shipped import ROOT

FRONTEND = ROOT / "frontend"
BUILD_COMMAND = "python -m ui.static"
_LOG = logging.getLogger(__name__)


def _link(src: Path, dst: Path) -> None:
    """``dst`` a hard link to ``src`` (a copy where links are impossible), made atomically: several
    server processes may start at once."""
    tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def _sources() -> list[Path]:
    """frontend/*.js and the installed plotly's plotly.min.js, the files the folder serves."""
    return [*sorted(FRONTEND.glob("*.js")), Path(plotly.__file__).parent / "package_data" / "plotly.min.js"]


def stage_folder() -> Path:
    """``static/stage-<hash>/``: the hash covers frontend/*.js (names and contents) and the plotly version."""
    digest = hashlib.sha256(plotly.__version__.encode())
    for f in _sources()[:-1]:
        digest.update(f.name.encode() + f.read_bytes())
    return ROOT / "static" / f"stage-{digest.hexdigest()[:12]}"


def _complete(folder: Path) -> bool:
    return all((folder / s.name).is_file() and (folder / s.name).stat().st_size == s.stat().st_size for s in _sources())


def build_static_frontend() -> Path:
    """Make (or complete) ``stage_folder()``; raises ``OSError`` where it cannot be written."""
    folder = stage_folder()
    folder.mkdir(parents=True, exist_ok=True)
    for src in _sources():
        dst = folder / src.name
        if not dst.exists() or dst.stat().st_size != src.stat().st_size:
            _link(src, dst)
    return folder


def ensure_static_frontend() -> str | None:
    """The name of the folder serving frontend/*.js and plotly.min.js: read as it is when complete
    (nothing is written), made when missing and writable; ``None`` when it is neither (logged)."""
    folder = stage_folder()
    if _complete(folder):
        return folder.name
    try:
        return build_static_frontend().name
    except OSError as e:
        _LOG.warning(
            "The browser-drawn figures' code is not served: %s is missing and cannot be made (%s). "
            "Run `%s` once as the install's owner (deploy/Dockerfile does at build time).",
            folder,
            e,
            BUILD_COMMAND,
        )
        return None


def _loader(folder: str, module: str) -> str:
    """A component's JS: import the module from the static folder and hand it the component."""
    return (
        f'const entry = new URL("app/static/{folder}/{module}", document.baseURI).href;\n'
        "export default function (component) { import(entry).then((m) => m.default(component)); }\n"
    )


def _unserved() -> str:
    """A component's JS when ``static/`` could not be made: a note in the figure's place."""
    note = (
        "This figure cannot be drawn: its code is not served (the install's static/ folder is missing "
        f"and read-only). Whoever installed the app can run `{BUILD_COMMAND}` once to make it."
    )
    return (
        "export default function ({ parentElement }) {\n"
        "  if (parentElement.querySelector(':scope > .static-missing')) return;\n"
        "  const p = document.createElement('p');\n"
        "  p.className = 'static-missing';\n"
        "  p.setAttribute('role', 'alert');\n"
        f"  p.textContent = {note!r};\n"
        "  parentElement.appendChild(p);\n"
        "}\n"
    )


STATIC = ensure_static_frontend()


def loader(module: str) -> str:
    """The JS of a component whose code is ``frontend/<module>``, served from ``STATIC`` (a note in
    the figure's place where it could not be served)."""
    return _loader(STATIC, module) if STATIC else _unserved()


if __name__ == "__main__":  # python -m ui.static: make static/ at install time
    print(build_static_frontend())
    sys.exit(0)
