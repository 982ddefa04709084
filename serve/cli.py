"""``inference-explainer``: the installed package's command.

``inference-explainer [--port N] [--host H] [--model PATH] [--models-dir DIR] [...]`` runs the app
(``python -m streamlit run <ROOT>/app.py``); ``inference-explainer serve [...]`` runs the class server
(``serve.replicas``: streamlit replicas behind nginx). Options of the form ``--section.key [VALUE]``
go to streamlit (``--server.headless true``); every other option goes to the app after ``--``
(``core.checkpoints.sources.parse_app_args``: ``--max-model-gib``, ...).

Streamlit reads the ``.streamlit/config.toml`` beside the main script (as well as the working
folder's), so the app's own settings apply from any working folder; relative paths stay the user's.
This module imports no streamlit: ``--help`` answers at once.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from serve import replicas

ROOT = Path(__file__).resolve().parents[1]  # the checkout, or site-packages
APP = ROOT / "app.py"


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="inference-explainer",
        description="Inference, efficiently: an interactive explainer of LLM inference (a streamlit app).",
        epilog="inference-explainer serve --help: the class server (replicas behind nginx). "
        "Options --section.key [VALUE] go to streamlit (e.g. --server.headless true); "
        "other options go to the app (e.g. --max-model-gib 4).",
        allow_abbrev=False,
    )
    ap.add_argument("--port", type=int, default=8501, help="the port to listen on (default: 8501)")
    ap.add_argument("--host", help="the address to listen on (default: streamlit's, every interface)")
    ap.add_argument("--model", help="a local checkpoint folder to load at start")
    ap.add_argument("--models-dir", help="a folder of checkpoint folders to offer in the model picker")
    return ap


def split_streamlit_options(rest: list[str]) -> tuple[list[str], list[str]]:
    """``rest`` → (streamlit's ``--section.key`` options with their values, the app's options)."""
    streamlit, app = [], []
    i = 0
    while i < len(rest):
        token = rest[i]
        name = token.split("=", 1)[0]
        if token.startswith("--") and "." in name:
            streamlit.append(token)
            if "=" not in token and i + 1 < len(rest) and not rest[i + 1].startswith("--"):
                streamlit.append(rest[i + 1])
                i += 1
        else:
            app.append(token)
        i += 1
    return streamlit, app


def streamlit_command(argv: list[str]) -> list[str]:
    """The ``python -m streamlit run`` command for the app's command line ``argv``."""
    args, rest = parser().parse_known_args(argv)
    streamlit, app = split_streamlit_options(rest)
    cmd = [sys.executable, "-m", "streamlit", "run", str(APP), "--server.port", str(args.port)]
    if args.host:
        cmd += ["--server.address", args.host]
    cmd += streamlit
    if args.model:
        app += ["--model", args.model]
    if args.models_dir:
        app += ["--models-dir", args.models_dir]
    return cmd + (["--", *app] if app else [])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["serve"]:
        return replicas.main(argv[1:])
    cmd = streamlit_command(argv)
    # streamlit takes this process's place: signals (Ctrl-C, a service manager's SIGTERM) reach it
    # directly and nothing is left running when it stops.
    os.execv(cmd[0], cmd)
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main())
