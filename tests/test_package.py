"""The installable package: a wheel built from the checkout, installed outside it, starts the app
(health answers, the figures' static folder is served) and answers ``inference-explainer --help``."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from bench.browser import ROOT

# Not part of the package's build; copying them would only slow the build down.
NOT_BUILT = (".git", "tests", "bench", "docs", "static", "build", "*.egg-info", "__pycache__", ".*cache", ".ci")


def build_wheel(tmp_path: Path) -> Path:
    """``pip wheel --no-deps`` of a copy of the checkout (the in-tree build writes build/ and
    *.egg-info: never into the checkout) into ``tmp_path / "wheel"``; returns the wheel."""
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(*NOT_BUILT, "test-artifacts", "venv", ".venv"))
    out = tmp_path / "wheel"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(src)],
        check=True,
        timeout=120,
    )
    [wheel] = out.glob("*.whl")
    return wheel


def wheel_files(wheel: Path) -> set[str]:
    return {n for n in zipfile.ZipFile(wheel).namelist() if not n.endswith("/")}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, b""


def test_installed_wheel_runs_outside_the_checkout(tmp_path):
    """Installed with ``pip install --no-deps --target`` and run from a folder outside the checkout:
    the code is the installed copy's, ``--help`` imports no streamlit, ``python -m ui.static`` (the
    image's build step) makes static/ beside the installed app.py, and ``inference-explainer`` serves
    the app: health "ok" within 60 s, and static/'s plotly_loader.js (so streamlit read the
    .streamlit/config.toml beside app.py: static serving is off by default)."""
    wheel = build_wheel(tmp_path)
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
        check=True,
        timeout=120,
    )
    run = tmp_path / "run"
    run.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site), "HOME": str(tmp_path)}
    py = lambda *args, **kw: subprocess.run(  # noqa: E731
        [sys.executable, *args], cwd=run, env=env, capture_output=True, text=True, timeout=120, **kw
    )

    where = py(
        "-c", "import json, sys, core, serve.cli; print(json.dumps([core.__file__, 'streamlit' in sys.modules]))"
    )
    core_file, imported_streamlit = json.loads(where.stdout)
    assert Path(core_file).is_relative_to(site) and not imported_streamlit
    helped = py("-m", "serve.cli", "--help")
    assert helped.returncode == 0 and "inference-explainer" in helped.stdout and "--models-dir" in helped.stdout
    built = py("-m", "ui.static")
    assert built.returncode == 0, built.stderr[-2000:]
    folder = Path(built.stdout.strip().splitlines()[-1])
    assert folder.parent == site / "static" and (folder / "plotly.min.js").is_file()

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "serve.cli", "--port", str(port), "--host", "127.0.0.1", "--server.headless", "true"],
        cwd=run,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        health = None
        while time.monotonic() < deadline:
            try:
                health = get(base + "/_stcore/health")
            except OSError:  # not listening yet
                health = None
            if health and health[1] == b"ok":
                break
            try:
                server.wait(timeout=0.25)  # returns at once if the server died
                raise AssertionError(f"the server stopped with {server.returncode}")
            except subprocess.TimeoutExpired:
                pass
        assert health == (200, b"ok")
        status, body = get(f"{base}/app/static/{folder.name}/plotly_loader.js")
        assert status == 200 and b"loadPlotly" in body
    finally:
        server.terminate()
        server.wait(timeout=30)
