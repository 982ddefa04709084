"""The ``inference-explainer`` command line: ``--version`` and ``--help`` answer and start nothing, an unknown option
is refused with the usage and exit status 2, the single-user app listens on loopback unless ``--host`` says
otherwise, and the app's and streamlit's options pass through (issue 48)."""

import tomllib

import pytest

from bench.browser import ROOT
from serve import replicas
from serve.cli import MAIN, main, streamlit_command

VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def _option(cmd: list[str], name: str) -> str:
    return cmd[cmd.index(name) + 1]


def test_version_prints_and_exits_zero(capsys):
    """``--version`` prints ``inference-explainer <pyproject's version>`` and exits 0 before building a command."""
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"inference-explainer {VERSION}"


def test_help_shows_the_version_and_the_app_options(capsys):
    """``--help`` names the version, the default loopback host and the app's own options."""
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0 and VERSION in out and "127.0.0.1" in out
    assert all(opt in out for opt in ("--models-dir", "--model", "--max-model-gib", "--class-store"))


@pytest.mark.parametrize("argv", [["--bogus"], ["--port", "8501", "--verison"], ["stray"], ["--host"]])
def test_an_unknown_option_is_refused_with_the_usage(argv, capsys):
    """Anything the command does not know exits 2 with the usage on stderr (nothing is passed on or started)."""
    with pytest.raises(SystemExit) as done:
        main(argv)
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.startswith("usage: inference-explainer")


def test_the_app_listens_on_loopback_by_default():
    """One user's app: ``streamlit run <home>/main.py`` on 127.0.0.1 and port 8501 unless told otherwise."""
    cmd = streamlit_command([])
    assert cmd[1:4] == ["-m", "streamlit", "run"] and cmd[4] == str(MAIN) and MAIN.name == "main.py"
    assert _option(cmd, "--server.address") == "127.0.0.1" and _option(cmd, "--server.port") == "8501"
    assert _option(streamlit_command(["--host", "0.0.0.0"]), "--server.address") == "0.0.0.0"


def test_app_and_streamlit_options_pass_through():
    """The app's options go after ``--``; ``--section.key VALUE`` go to streamlit."""
    cmd = streamlit_command(
        ["--models-dir", "/srv/models", "--max-model-gib", "6", "--server.headless", "true", "--port", "9000"]
    )
    assert _option(cmd, "--server.headless") == "true" and _option(cmd, "--server.port") == "9000"
    assert cmd[cmd.index("--") :] == ["--", "--models-dir", "/srv/models", "--max-model-gib", "6.0"]


def test_the_class_server_keeps_its_lan_default(capsys):
    """``inference-explainer serve`` is the class server, which a class reaches over the LAN: every interface."""
    with pytest.raises(SystemExit):
        replicas.main(["--help"])
    assert "default: every interface" in capsys.readouterr().out
