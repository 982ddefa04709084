"""The class store: everything a class shares, kept outside the streamlit processes so that every
replica of a class server (and a replica started again after a crash) sees the same class (issues 41
and 49). Two backends with the same methods (``Store``): SQLite, one file in WAL mode, the default
(``sqlite_store.SqliteStore``), and Redis for a server that spans machines (``redis_store.RedisStore``);
``open_store(url)`` picks one by its URL.

A class holds: its code, its seat cap and whether joining is open; the sha256s of its teacher keys (the
first from ``open_class``, one more per pairing code redeemed); the teacher's plan (a ``Plan``, stored as
JSON) and its version, with its question's id and round beside it (``pulse`` reads them without the
plan); seats (number, sha256 of the seat token, nickname as typed); answers (one pick per seat per
question and round). Everything is deleted when the teacher ends the class or ``CLASS_TTL_S`` (12 h)
after it was opened. Times are seconds since the epoch (``time.time()``); ``now`` is injectable for
tests. A code as typed is accepted in any case and with spaces or dashes (``normalize_code``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

from core.classroom.plan import Plan
from core.classroom.redis_store import RedisStore
from core.classroom.rules import SEAT_CAP, ClassInfo, Pulse, RosterRow, Seat
from core.classroom.sqlite_store import SqliteStore

ENV_URL = "EXPLAINER_CLASS_STORE"  # the store's URL for every process that reads the environment


class Store(Protocol):
    """What both backends do. ``code`` may be typed in any case, with spaces or dashes.

    Errors: ``ClassNotFound`` (no such class, ended or expired), ``NotTeacher`` (not one of the class's
    teacher keys), ``NotSeated`` (a token without a seat in this class), ``TooManyJoins`` (a client over
    its wrong codes; the message says how many seconds to wait), ``JoiningClosed``, ``ClassFull``,
    ``ValueError`` (a question, round, pick, seat cap, plan or pairing code out of range) and, from every
    method, ``StoreUnavailable`` when the backend cannot be reached, read or written (the same store
    object works again once it can)."""

    def open_class(self, seat_cap: int = SEAT_CAP, now: float | None = None) -> tuple[str, str]:
        """Open a class of ``seat_cap`` seats (0..10 000), joining open: (code, teacher key). Only the key's
        sha256 is stored; the key is shown once."""

    def join(self, code: str, nickname: str = "", client: str = "", now: float | None = None) -> Seat:
        """A seat when ``code`` names a live class, whatever the client's failed attempts. One seat per
        ``client`` (a per-browser id, never an IP address): a client that holds a seat gets the same number
        back under a new token (its old token stops working; its nickname becomes this one), even with joining
        closed; otherwise a new seat (numbers 1, 2, … in join order, never reused), JoiningClosed when its
        teacher closed joining, ClassFull when its seats are all taken. A code naming no live class counts as a
        failed attempt of ``client`` ("" is not counted): TooManyJoins once that client is over ``JOIN_LIMIT``
        within ``JOIN_WINDOW_S``, else ClassNotFound. A client with ``JOIN_LIMIT`` failures in its window gets
        TooManyJoins for the right code too (on every replica: a guesser must not learn which code is right).
        ``nickname``: stripped, ≤ 40 characters, kept literally."""

    def remove_seat(self, code: str, teacher_key: str, number: int) -> bool:
        """The teacher removes seat ``number`` (its token stops working, its answers go, its place is free for
        another student; its number is not given again): True when it was there. NotTeacher, ClassNotFound."""

    def seat(self, code: str, token: str) -> int | None:
        """The seat number of ``token`` in the class (a reconnecting student), or None."""

    def set_joining(self, code: str, teacher_key: str, open: bool) -> None:
        """Open or close the class to new students (seated ones keep their seats). NotTeacher, ClassNotFound."""

    def info(self, code: str) -> ClassInfo | None:
        """(students, seat_cap, joining) of the live class, or None."""

    def pair_code(self, code: str, teacher_key: str, now: float | None = None) -> str:
        """A new one-time code of ``PAIR_DIGITS`` digits for a second teacher device, valid ``PAIR_TTL_S``.
        NotTeacher, ClassNotFound."""

    def redeem_pair(self, pair_code: str, now: float | None = None) -> tuple[str, str]:
        """(class code, a new teacher key for this device); the pairing code is used up. ValueError for a
        code unknown, used, expired or of a class that ended."""

    def publish(self, code: str, teacher_key: str, plan: Plan) -> int:
        """Store the teacher's ``plan`` (≤ 256 kB as JSON); its version, 1, 2, …, returned.
        NotTeacher, ClassNotFound, ValueError."""

    def plan(self, code: str) -> tuple[int, Plan] | None:
        """(version, plan): (0, Plan()) before the first publish; None when there is no such live class."""

    def pulse(self, code: str) -> Pulse | None:
        """One cheap read for the event stream: the plan's version, students, and answers to the plan's
        question (its id and round); None when there is no such live class."""

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
        """Delete the class with its seats, plan, answers and teacher keys. NotTeacher, ClassNotFound."""

    def is_teacher(self, code: str, teacher_key: str) -> bool:
        """Whether ``teacher_key`` is one of the keys of this live class."""


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
