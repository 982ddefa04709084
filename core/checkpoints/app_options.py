"""The app's own command line: the options after ``--`` of ``streamlit run main.py -- --models-dir DIR`` (the
``inference-explainer`` command passes the same options on), parsed into ``AppArgs``. Light on purpose (argparse
and pathlib only), so the command answers ``--help`` and ``--version`` without loading torch."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MAX_GIB = 4.0  # GiB: the largest checkpoint loaded unless --max-model-gib says otherwise
PASSWORD_ENV = "EXPLAINER_TEACHER_PASSWORD"  # the teacher password, kept out of the process list
PUBLIC_URL_ENV = "EXPLAINER_PUBLIC_URL"  # the students' address, where a container's command is fixed


@dataclass(frozen=True)
class AppArgs:
    """The app's own command-line options (after ``--``): ``model`` a checkpoint folder to
    load at start (None: the shipped model), ``max_model_gib`` the weight budget in GiB,
    ``models_dir`` an extra folder of checkpoints for the picker, ``class_store`` the class store's
    URL for class mode (None: ``core.classroom.store.default_url()``), ``teacher_password`` what opening a class
    asks for (None: nothing; ``--teacher-password``, else ``$EXPLAINER_TEACHER_PASSWORD``), ``public_url`` the
    address students open (None: the console's own, or this machine's LAN address when that is loopback),
    ``engine_model`` what the class engine of "Serve the class" runs (``ENGINE_MODELS``)."""

    model: Path | None = None
    max_model_gib: float = DEFAULT_MAX_GIB
    models_dir: Path | None = None
    class_store: str | None = None
    teacher_password: str | None = None
    public_url: str | None = None
    engine_model: str = "shipped"


# What "Serve the class" runs (serve/engine_process.py): the shipped model, the larger preset's shape with random
# weights (its text means nothing; its timing is a larger model's), or the server's own checkpoint (``--model``).
ENGINE_MODELS = ("shipped", "larger", "checkpoint")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would print and exit; the app shows a message instead
        raise ValueError(f"command line: {message}")


MAIN_SCRIPTS = ("main.py", "app.py")  # what ``streamlit run`` is given: the st.App (main.py), or the script itself


def script_args(argv: list[str]) -> list[str]:
    """The app's own options in ``argv`` (pass ``sys.argv``): ``streamlit run main.py -- --models-dir
    DIR`` runs the script with ``sys.argv == ["main.py", "--models-dir", "DIR"]``; when another
    program owns ``sys.argv`` (pytest running the app in-process) there are none."""
    return list(argv[1:]) if argv and Path(argv[0]).name in MAIN_SCRIPTS else []


def add_app_options(parser: argparse.ArgumentParser) -> None:
    """The app's own options, for ``parse_app_args`` and the ``inference-explainer`` command alike."""
    parser.add_argument("--model", type=_path, default=None, help="a local checkpoint folder every session starts on")
    parser.add_argument(
        "--max-model-gib",
        type=float,
        default=DEFAULT_MAX_GIB,
        help=f"the largest checkpoint to load, in GiB (default: {DEFAULT_MAX_GIB:g})",
    )
    parser.add_argument(
        "--models-dir", type=_path, default=None, help="a folder of checkpoint folders and .gguf files to offer"
    )
    parser.add_argument(
        "--class-store", default=None, help="class mode's store: sqlite:////PATH or redis://HOST:6379/0"
    )
    parser.add_argument(
        "--teacher-password",
        default=None,
        help=f"opening a class asks for it (a server anyone on the network reaches); also ${PASSWORD_ENV}",
    )
    parser.add_argument(
        "--public-url",
        default=None,
        help=f"the address students open to join, e.g. http://class-server:8501; also ${PUBLIC_URL_ENV}",
    )
    parser.add_argument(
        "--engine-model",
        choices=ENGINE_MODELS,
        default="shipped",
        help="what Serve the class runs: the shipped model, the larger preset (random weights, real timing), or "
        "checkpoint (the --model folder)",
    )


def parse_app_args(argv: list[str]) -> AppArgs:
    """Parse ``streamlit run main.py -- --model PATH --max-model-gib 4 --models-dir DIR --class-store URL``
    (pass ``sys.argv[1:]``). Raises ``ValueError`` for an unknown option, a missing value or a budget
    that is not a positive number. Paths are not checked here: ``core.checkpoints.load.load`` says
    what is wrong with one; nor is the class store's URL (``sqlite:///PATH`` or ``redis://HOST:PORT/DB``):
    ``core.classroom.store.open_store`` says what is wrong with it (issue 41)."""
    parser = _Parser(prog="streamlit run main.py --", add_help=False, allow_abbrev=False)
    add_app_options(parser)
    ns = parser.parse_args(list(argv))
    if not (ns.max_model_gib > 0 and ns.max_model_gib != float("inf")):
        raise ValueError(f"command line: --max-model-gib must be a positive number of GiB, got {ns.max_model_gib}")
    if ns.engine_model == "checkpoint" and ns.model is None:
        raise ValueError("command line: --engine-model checkpoint serves the --model folder: give --model PATH too")
    public_url = ns.public_url or os.environ.get(PUBLIC_URL_ENV) or None
    if public_url is not None and not public_url.startswith(("http://", "https://")):
        raise ValueError(f"command line: --public-url is an http:// or https:// address, got {public_url!r}")
    return AppArgs(
        model=ns.model,
        max_model_gib=ns.max_model_gib,
        models_dir=ns.models_dir,
        class_store=ns.class_store,
        teacher_password=ns.teacher_password or os.environ.get(PASSWORD_ENV) or None,
        public_url=public_url,
        engine_model=ns.engine_model,
    )


def _path(text: str) -> Path:
    return Path(text).expanduser()
