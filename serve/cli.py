"""``inference-explainer``: the installed package's command.

``inference-explainer [--host H] [--port N] [--model PATH] [--models-dir DIR] [--max-model-gib G]
[--class-store URL] [--section.key VALUE ...]`` runs the app for one user (``python -m streamlit run
<HOME>/main.py``), listening on this machine only (127.0.0.1) unless ``--host`` says otherwise;
``inference-explainer serve [...]`` runs the class server (``serve.replicas``: replicas behind nginx, on every
interface by default: a class reaches it over the LAN). ``--version`` prints the version; any option it does not
know is refused with the usage and exit status 2. Options of the form ``--section.key VALUE`` go to streamlit
(``--server.headless true``); the app's own options are ``core.checkpoints.app_options``'.

Streamlit reads the ``.streamlit/config.toml`` beside the main script, so the app's settings apply from any
working folder; relative paths stay the user's. Imports neither streamlit nor torch: ``--help`` answers at once.
"""

from __future__ import annotations

import argparse
import os
import sys

from core.checkpoints.app_options import add_app_options
from serve import replicas
from serve.version import HOME, app_version

MAIN = HOME / "main.py"  # the st.App: app.py and the app's own routes
LOOPBACK = "127.0.0.1"


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="inference-explainer",
        description=f"Inference, efficiently {app_version()}: an interactive explainer of LLM inference.",
        epilog="inference-explainer serve --help: the class server (replicas behind nginx, for a whole class). "
        "Options --section.key VALUE go to streamlit (e.g. --server.headless true).",
        allow_abbrev=False,
    )
    ap.add_argument("--version", action="version", version=f"%(prog)s {app_version()}")
    ap.add_argument("--port", type=int, default=8501, help="the port to listen on (default: 8501)")
    ap.add_argument(
        "--host",
        default=LOOPBACK,
        help=f"the address to listen on (default: {LOOPBACK}, this machine only; 0.0.0.0: every interface)",
    )
    add_app_options(ap)
    return ap


def split_streamlit_options(argv: list[str]) -> tuple[list[str], list[str]]:
    """``argv`` → (streamlit's ``--section.key`` options with their values, everything else)."""
    streamlit, rest = [], []
    i = 0
    while i < len(argv):
        token = argv[i]
        name = token.split("=", 1)[0]
        if token.startswith("--") and "." in name:
            streamlit.append(token)
            if "=" not in token and i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                streamlit.append(argv[i + 1])
                i += 1
        else:
            rest.append(token)
        i += 1
    return streamlit, rest


def streamlit_command(argv: list[str]) -> list[str]:
    """The ``python -m streamlit run main.py`` command for the command line ``argv``; exits with status 2 and the
    usage on an option it does not know (argparse)."""
    streamlit, rest = split_streamlit_options(argv)
    args = parser().parse_args(rest)
    cmd = [sys.executable, "-m", "streamlit", "run", str(MAIN), "--server.port", str(args.port)]
    cmd += ["--server.address", args.host, *streamlit]
    app = []
    if args.model:
        app += ["--model", str(args.model)]
    if args.models_dir:
        app += ["--models-dir", str(args.models_dir)]
    if args.max_model_gib != parser().get_default("max_model_gib"):
        app += ["--max-model-gib", repr(args.max_model_gib)]
    if args.class_store:
        app += ["--class-store", args.class_store]
    if args.teacher_password:
        app += ["--teacher-password", args.teacher_password]
    if args.public_url:
        app += ["--public-url", args.public_url]
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
