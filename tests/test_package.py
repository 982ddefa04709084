"""The installable package: one import name (``inference_explainer``), installed into a fresh virtual environment
beside another distribution that ships a top-level ``core``, both keep working; the command answers ``--version``
and ``--help``, refuses what it does not know, serves the app on loopback, and nothing is written into the install
while the app runs."""

import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tarfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import pytest

from bench.browser import ROOT, browser_page, wait_rows
from serve.frontend import DIGEST
from tests.helpers.poll import until

# Not part of the package's build; copying them would only slow the build down.
NOT_BUILT = (".git", "tests", "bench", "docs", "static", "build", "*.egg-info", "__pycache__", ".*cache", ".ci")
VERSION = "0.3.0"


def build_wheel(tmp_path: Path) -> Path:
    """``pip wheel --no-deps`` of a copy of the checkout (the in-tree build writes build/ and
    *.egg-info: never into the checkout) into ``tmp_path / "wheel"``; returns the wheel."""
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(*NOT_BUILT, "test-artifacts", "venv", ".venv"))
    return pip_wheel(src, tmp_path / "wheel")


def pip_wheel(src: Path, out: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(src)],
        check=True,
        timeout=180,
    )
    [wheel] = out.glob("*.whl")
    return wheel


def build_sdist(tmp_path: Path) -> Path:
    """``python -m build --sdist`` (the PyPA build front end, no isolation: nothing downloaded) of a copy of the
    checkout into ``tmp_path / "sdist"``; returns the .tar.gz."""
    src = tmp_path / "sdist-src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(*NOT_BUILT, "test-artifacts", "venv", ".venv"))
    out = tmp_path / "sdist"
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--no-isolation", "-o", str(out), str(src)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    [sdist] = out.glob("*.tar.gz")
    return sdist


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


def healthy(base: str) -> bool:
    try:
        return get(base + "/_stcore/health") == (200, b"ok")
    except OSError:  # not listening yet
        return False


def dummy_core_wheel(tmp_path: Path) -> Path:
    """A distribution ``dummy-core`` whose only package is a top-level ``core`` (``core.WHO == "dummy"``)."""
    src = tmp_path / "dummy"
    (src / "core").mkdir(parents=True)
    (src / "core" / "__init__.py").write_text('WHO = "dummy"\n')
    (src / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "dummy-core"\nversion = "1.0"\n[tool.setuptools]\npackages = ["core"]\n'
    )
    return pip_wheel(src, tmp_path / "dummy-wheel")


def fresh_venv(tmp_path: Path) -> Path:
    """A new virtual environment whose own site-packages starts empty; the app's dependencies (torch, streamlit…)
    are read from this interpreter's through a .pth file, so nothing is downloaded."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    site = Path(
        subprocess.run(
            [venv / "bin/python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def package_files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if "__pycache__" not in p.parts}


def test_the_wheel_installs_one_top_level_package(tmp_path):
    """The wheel's top_level.txt names one package, ``inference_explainer``, and every file but its metadata lies
    inside it: app.py, main.py, the pages, core/, ui/, serve/ and the data they read."""
    wheel = build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as z:
        [top] = [n for n in z.namelist() if n.endswith(".dist-info/top_level.txt")]
        assert z.read(top).decode().split() == ["inference_explainer"]
    files = wheel_files(wheel)
    outside = [f for f in files if not f.startswith(("inference_explainer/", f"inference_explainer-{VERSION}.dist"))]
    assert not outside, outside
    for rel in ("app.py", "main.py", "app_pages/decode.py", "core/decode/settings.py", "ui/frame.py", "serve/cli.py"):
        assert f"inference_explainer/{rel}" in files
    assert (
        "inference_explainer/.streamlit/config.toml" in files
        and "inference_explainer/assets/model.safetensors" in files
    )


def test_the_sdist_carries_what_the_wheel_is_built_from(tmp_path):
    """The source distribution holds app.py, main.py, assets/, frontend/, .streamlit/config.toml and the nginx
    template, and no test; a wheel built from it (what ``pip install <sdist>`` does) has exactly the files of the
    wheel built from the checkout."""
    sdist = build_sdist(tmp_path)
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for rel in (
        "app.py",
        "main.py",
        "setup.py",
        "assets/model.safetensors",
        "frontend/class_events.js",
        ".streamlit/config.toml",
        "deploy/nginx.conf.template",
        "app_pages/decode.py",
        "core/decode/settings.py",
    ):
        assert rel in names, rel  # fmt: skip
    assert not [n for n in names if n.startswith(("tests/", "bench/", ".ci/"))]
    from_sdist = pip_wheel(sdist, tmp_path / "wheel-from-sdist")
    assert wheel_files(from_sdist) - {""} == wheel_files(build_wheel(tmp_path))


@pytest.mark.browser
def test_installed_beside_a_package_that_ships_core(tmp_path):
    """In a fresh venv with ``dummy-core`` (a top-level ``core``) installed too: ``import core`` is the dummy's,
    ``inference-explainer --version`` prints the version without starting anything, ``--help`` shows it, an
    unknown option exits 2 with the usage, and the command serves the app on 127.0.0.1 only (health "ok", the
    figures' code from its route, the decode page drawn after Prefill) without writing into the install.
    Uninstalling the dummy leaves every file of the app in place."""
    wheel, dummy = build_wheel(tmp_path), dummy_core_wheel(tmp_path)
    venv = fresh_venv(tmp_path)
    bin_ = venv / "bin"
    pip = [bin_ / "python", "-m", "pip", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "install", "--no-deps", "--no-index", dummy, wheel], check=True, timeout=180)
    run = tmp_path / "run"
    run.mkdir()
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": ""}

    def cmd(*args, timeout=60):
        return subprocess.run(args, cwd=run, env=env, capture_output=True, text=True, timeout=timeout)

    assert cmd(bin_ / "python", "-c", "import core; print(core.WHO)").stdout.strip() == "dummy"
    version = cmd(bin_ / "inference-explainer", "--version")
    assert (version.returncode, version.stdout.strip()) == (0, f"inference-explainer {VERSION}")
    helped = cmd(bin_ / "inference-explainer", "--help")
    assert helped.returncode == 0 and VERSION in helped.stdout and "--models-dir" in helped.stdout
    bogus = cmd(bin_ / "inference-explainer", "--bogus")
    assert bogus.returncode == 2 and bogus.stderr.startswith("usage: inference-explainer") and "--bogus" in bogus.stderr
    package = Path(cmd(bin_ / "python", "-c", "import inference_explainer as p; print(p.HOME)").stdout.strip())
    before = package_files(package)

    port, log = free_port(), tmp_path / "server.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(
            [bin_ / "inference-explainer", "--port", str(port), "--server.headless", "true"],
            cwd=run,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        until(lambda: server.poll() is not None or healthy(base), 90, "the installed app's health endpoint")
        assert server.poll() is None, log.read_text()[-2000:]
        status, body = get(f"{base}/explainer/js/{DIGEST}/plotly_loader.js")
        assert status == 200 and b"loadPlotly" in body
        text = log.read_text()
        assert f"URL: http://127.0.0.1:{port}" in text and "Network URL" not in text  # loopback only
        with browser_page(1280, 800) as page:
            page.goto(base + "/decode")
            page.get_by_role("button", name="Prefill").first.click(timeout=90000)
            wait_rows(page, 51, timeout_ms=90000)  # the default prompt's 51 positions, drawn by the route's code
            assert page.get_by_text("Page not found").count() == 0
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert package_files(package) == before  # nothing written into the install

    subprocess.run([*pip, "uninstall", "-y", "dummy-core"], check=True, timeout=120)
    assert package_files(package) == before
    assert cmd(bin_ / "inference-explainer", "--version").returncode == 0
