"""The class store: everything a class shares, kept outside the streamlit processes so that every
replica of a class server (and a replica started again after a crash) sees the same class (issue 41,
item 4). Two backends with the same methods (``Store``): SQLite, one file in WAL mode, the default
(``sqlite_store.SqliteStore``), and Redis for a server that spans machines (``redis_store.RedisStore``);
``open_store(url)`` picks one by its URL.

A class holds: its code and the sha256 of its teacher's key; the teacher's plan (a JSON dict) and its
version; seats (number, sha256 of the seat token, nickname as typed); answers (one pick per seat per
question and round). Everything is deleted when the teacher ends the class or ``CLASS_TTL_S`` (12 h)
after it was opened. Times are seconds since the epoch (``time.time()``); ``now`` is injectable for
tests. A code as typed is accepted in any case and with spaces or dashes (``normalize_code``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

from core.classroom.redis_store import RedisStore
from core.classroom.rules import (
    RosterRow,
    Seat,
)
from core.classroom.sqlite_store import SqliteStore

ENV_URL = "EXPLAINER_CLASS_STORE"  # the store's URL for every process that reads the environment


class Store(Protocol):
    """What both backends do. ``code`` may be typed in any case, with spaces or dashes.

    Errors: ``ClassNotFound`` (no such class, ended or expired), ``NotTeacher`` (wrong teacher key),
    ``NotSeated`` (a token without a seat in this class), ``TooManyJoins`` (join limit; its message
    says how many seconds to wait), ``ValueError`` (a question, round, pick or plan out of range)."""

    def open_class(self, now: float | None = None) -> tuple[str, str]:
        """Open a class: (code, teacher key). Only the key's sha256 is stored; the key is shown once."""

    def join(self, code: str, nickname: str = "", client: str = "", now: float | None = None) -> Seat:
        """A new seat (numbers 1, 2, … in join order). ``nickname``: stripped, ≤ 40 characters, kept
        literally. ``client`` (e.g. the browser's IP): every attempt, failed ones too, counts toward
        ``JOIN_LIMIT`` per ``JOIN_WINDOW_S``; "" is not counted. ClassNotFound, TooManyJoins."""

    def seat(self, code: str, token: str) -> int | None:
        """The seat number of ``token`` in the class (a reconnecting student), or None."""

    def publish(self, code: str, teacher_key: str, plan: dict) -> int:
        """Store the teacher's ``plan`` (a JSON dict ≤ 256 kB); its version, 1, 2, …, returned.
        NotTeacher, ClassNotFound, ValueError."""

    def plan(self, code: str) -> tuple[int, dict] | None:
        """(version, plan): (0, {}) before the first publish; None when there is no such live class."""

    def answer(self, code: str, token: str, question: str, round: int, pick: int, now: float | None = None) -> bool:
        """Record ``pick`` (0..9) as this seat's answer to (question, round) unless it answered
        already: True when written, False when the first answer stays. NotSeated, ClassNotFound, ValueError."""

    def my_answer(self, code: str, token: str, question: str, round: int) -> int | None:
        """This seat's pick for (question, round), or None (not answered, unknown token or class)."""

    def tally(self, code: str, question: str, round: int, n_options: int) -> list[int]:
        """How many picked each option 0..n_options-1 (zeros for a missing class)."""

    def answered(self, code: str, question: str, round: int) -> int:
        """How many seats answered (question, round); 0 for a missing class. One cheap query."""

    def students(self, code: str) -> int:
        """How many students joined; 0 for a missing class."""

    def roster(self, code: str, teacher_key: str, question: str, round: int) -> list[RosterRow]:
        """Every seat in number order with its nickname and whether it answered. NotTeacher, ClassNotFound."""

    def end(self, code: str, teacher_key: str) -> None:
        """Delete the class with its seats, plan and answers. NotTeacher, ClassNotFound."""

    def is_teacher(self, code: str, teacher_key: str) -> bool:
        """Whether ``teacher_key`` is the key of this live class."""


def open_store(url: str) -> SqliteStore | RedisStore:
    """The store at ``url``. SQLite as SQLAlchemy writes it: ``sqlite:////abs/path.db`` (four slashes:
    an absolute path) or ``sqlite:///relative.db`` (relative to the working folder); the file and its
    folder are made when missing. Redis: ``redis://[:password@]host:port/db`` (or ``rediss://`` for
    TLS), connected at first use. ValueError for anything else."""
    text = str(url).strip()
    if text.startswith("sqlite:"):
        if not text.startswith("sqlite:///") or text in ("sqlite:///", "sqlite:////"):
            raise ValueError(
                f"class store {url!r}: an SQLite store is a file, e.g. sqlite:////var/lib/explainer/classes.db "
                "(absolute: four slashes) or sqlite:///classes.db (relative to the working folder)"
            )
        path = text.removeprefix("sqlite:///")
        if path == ":memory:":
            raise ValueError(f"class store {url!r}: an in-memory database is not shared between replicas")
        return SqliteStore(Path(path).expanduser())
    if text.startswith(("redis://", "rediss://")):
        return RedisStore(text)
    raise ValueError(
        f"class store {url!r}: expected sqlite:///PATH (a file, the default) or redis://HOST:PORT/DB (a Redis server)"
    )


def default_url() -> str:
    """The class store's URL when none is given: ``$EXPLAINER_CLASS_STORE`` if set, else the SQLite file
    ``$XDG_STATE_HOME/inference-explainer/classes.db`` (``~/.local/state`` when XDG_STATE_HOME is unset)."""
    if os.environ.get(ENV_URL):
        return os.environ[ENV_URL]
    state = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return f"sqlite:///{Path(state).expanduser().resolve() / 'inference-explainer' / 'classes.db'}"
