"""The SQLite class store's file and connections (issues 41 and 49): its tables, the connection each
thread leases from a per-process pool, write transactions, and ``guarded``, which turns a file that
cannot be opened, read or written into ``StoreUnavailable``. The store's methods are in
``core.classroom.sqlite_store``.

The file is in WAL mode (readers never wait for the writer; a killed process loses no committed
answer) with a busy timeout (5 s by default); each thread of each process has its own connection.
A file of an older layout (``PRAGMA user_version`` below ``LAYOUT``) has its tables made afresh:
a class lives 12 h, and the old layout's plans are not of this plan schema.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import NamedTuple

from core.classroom import rules
from core.classroom.rules import ClassNotFound, NotTeacher, StoreUnavailable

BUSY_TIMEOUT_MS = 5000
LAYOUT = 3  # PRAGMA user_version of a file in this layout
SQLITE_BUSY, SQLITE_LOCKED = 5, 6  # primary result codes of a file another connection holds

TABLES = (
    "CREATE TABLE classes (code TEXT PRIMARY KEY, created REAL NOT NULL, seat_cap INTEGER NOT NULL,"
    " joining INTEGER NOT NULL DEFAULT 1, seats INTEGER NOT NULL DEFAULT 0, last_seat INTEGER NOT NULL DEFAULT 0,"
    " version INTEGER NOT NULL DEFAULT 0, plan TEXT NOT NULL DEFAULT '{}', question TEXT,"
    " round INTEGER NOT NULL DEFAULT 0)",
    "CREATE TABLE teacher_keys (code TEXT NOT NULL, key_hash TEXT NOT NULL, PRIMARY KEY (code, key_hash))",
    "CREATE TABLE seats (code TEXT NOT NULL, number INTEGER NOT NULL, token_hash TEXT NOT NULL,"
    " nickname TEXT NOT NULL, client_hash TEXT NOT NULL DEFAULT '', PRIMARY KEY (code, number),"
    " UNIQUE (code, token_hash))",
    # One seat per browser in a class (a seat without a browser id, "", is not counted).
    "CREATE UNIQUE INDEX seats_client ON seats (code, client_hash) WHERE client_hash != ''",
    "CREATE TABLE answers (code TEXT NOT NULL, question TEXT NOT NULL, round INTEGER NOT NULL, seat INTEGER NOT NULL,"
    " pick INTEGER NOT NULL, PRIMARY KEY (code, question, round, seat))",
    "CREATE TABLE joins (client TEXT PRIMARY KEY, since REAL NOT NULL, count INTEGER NOT NULL)",
    "CREATE TABLE pairs (pair_hash TEXT PRIMARY KEY, code TEXT NOT NULL, expires REAL NOT NULL)",
)
NAMES = ("classes", "teacher_keys", "seats", "answers", "joins", "pairs")


def _down(err: sqlite3.Error) -> bool:
    """Whether ``err`` says the file cannot be used now (locked, read-only, not there, not readable),
    as against a mistake in a query or a broken constraint, which stay what they are."""
    return isinstance(err, sqlite3.OperationalError) or type(err) is sqlite3.DatabaseError


def guarded(method):
    """A store method whose SQLite or file-system failure is ``StoreUnavailable`` (the original as
    its ``__cause__``). The connections are dropped then, so a connection opened while the file was
    read-only (SQLite opens such a file read-only and keeps it so) is never used again; and the method
    is tried once more on a fresh connection, unless the file was busy (it waited the busy timeout
    already): a read-only connection left from the outage must not fail the first write after it.
    A failed try wrote nothing (its transaction rolled back), so trying again is safe."""

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        for attempt in (1, 2):
            try:
                return method(self, *args, **kwargs)
            except sqlite3.Error as err:
                if not _down(err):
                    raise
                self._drop()
                busy = getattr(err, "sqlite_errorcode", 0) & 0xFF in (SQLITE_BUSY, SQLITE_LOCKED)
                if attempt == 2 or busy:
                    raise StoreUnavailable() from err

    return run


class _Class(NamedTuple):
    code: str
    seat_cap: int
    joining: bool
    seats: int


def now_or_clock(now: float | None) -> float:
    """``now`` as given, else the clock (``time.time()``, seconds)."""
    return time.time() if now is None else now


class _Lease:
    """One pooled connection held by one thread: back in ``pool`` when that thread ends (its
    ``threading.local`` values are dropped then), for the next thread to take (one at a time), unless
    the store dropped its connections meanwhile (``gen`` is no longer ``gens[0]``): then closed."""

    def __init__(self, pool: list, gens: list[int], gen: int, db: sqlite3.Connection):
        self.pid, self.pool, self.gens, self.gen, self.db = os.getpid(), pool, gens, gen, db

    def retire(self) -> None:
        """Close the connection now; it never goes back into the pool."""
        self.pool = None
        self.db.close()

    def __del__(self):
        if os.getpid() != self.pid or self.pool is None:
            return
        if self.gen == self.gens[0]:
            self.pool.append(self.db)
        else:
            self.db.close()


class SqliteDb:
    """The SQLite file ``path`` (made, with its folder, at the first connection): connections,
    transactions, tables. ``busy_timeout_ms``: how long a write waits for another writer before the
    store says it is unavailable."""

    def __init__(self, path: str | os.PathLike, busy_timeout_ms: int = BUSY_TIMEOUT_MS):
        self.path = Path(path)
        self.busy_timeout_ms = busy_timeout_ms
        self._ready = False  # tables checked (once per store object)
        self._local = threading.local()
        self._idle: list[sqlite3.Connection] = []  # connections no live thread holds (this process's)
        self._idle_pid = os.getpid()
        self._gens = [0]  # bumped when the connections are dropped
        with contextlib.suppress(sqlite3.Error, StoreUnavailable):
            self._db()  # the file made now when it can be; else at the first call (StoreUnavailable until then)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r})"

    def _db(self) -> sqlite3.Connection:
        """This thread's connection, leased from the process's pool until the thread ends (a forked
        child opens its own: a connection never crosses a fork). Why a pool: streamlit runs every
        rerun in a new thread, so a connection per thread meant a new connection (open, two pragmas)
        for each of a class's polls, twice a second per student: 80 % of reading the plan."""
        pid, lease = os.getpid(), getattr(self._local, "lease", None)
        if lease is not None and (lease.pid != pid or lease.gen != self._gens[0]):
            if lease.pid == pid:
                lease.retire()
            lease = self._local.lease = None
        if lease is None:
            if self._idle_pid != pid:
                self._idle, self._idle_pid = [], pid
            gen = self._gens[0]
            try:
                db = self._idle.pop()
            except IndexError:
                db = self._connect()
            self._local.lease = lease = _Lease(self._idle, self._gens, gen, db)
        return lease.db

    def _connect(self) -> sqlite3.Connection:
        if not self._ready:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as err:  # (not caught by ``guarded``: a NotTeacher is an OSError too)
                raise StoreUnavailable() from err
        db = sqlite3.connect(
            self.path, timeout=self.busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False
        )
        try:
            db.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_ms)}")
            db.execute("PRAGMA synchronous=NORMAL")  # in WAL mode: durable across a killed process
            if not self._ready:
                self._setup(db)
        except BaseException:
            db.close()
            raise
        return db

    def _setup(self, db: sqlite3.Connection) -> None:
        """WAL mode and the tables of ``LAYOUT`` (an older layout's dropped first). ValueError for a
        file SQLite cannot use in WAL mode or one of a newer layout (a newer app's)."""
        if db.execute("PRAGMA journal_mode=WAL").fetchone()[0].lower() != "wal":
            raise ValueError("class store: SQLite could not use WAL mode on its file (a network file system?)")
        with self._transaction(db):
            layout = db.execute("PRAGMA user_version").fetchone()[0]
            if layout > LAYOUT:
                raise ValueError(f"class store: its file is of a newer app's layout ({layout}; this app's: {LAYOUT})")
            if layout < LAYOUT:
                for name in NAMES:
                    db.execute(f"DROP TABLE IF EXISTS {name}")
                for table in TABLES:
                    db.execute(table)
                db.execute(f"PRAGMA user_version={LAYOUT}")
        self._ready = True

    @staticmethod
    @contextlib.contextmanager
    def _transaction(db: sqlite3.Connection):
        """``BEGIN IMMEDIATE`` on ``db``: committed when the block ends, rolled back on an error (a
        failed COMMIT included, so no transaction stays open on a pooled connection)."""
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
            raise

    def _write(self):
        """A ``BEGIN IMMEDIATE`` transaction on this thread's connection (SQLite puts writers in line)."""
        return self._transaction(self._db())

    def _drop(self) -> None:
        """Close this thread's connection and every idle one; the others close when their threads next
        ask for theirs (``_db``) or end (``_Lease``)."""
        self._gens[0] += 1
        lease = getattr(self._local, "lease", None)
        if lease is not None and lease.pid == os.getpid():
            lease.retire()
        self._local.lease = None
        if self._idle_pid == os.getpid():
            while True:
                try:
                    self._idle.pop().close()
                except IndexError:
                    break

    def close(self) -> None:
        """Close this thread's connection and the idle ones (another call opens a new one)."""
        self._drop()

    # ---- lookups ---------------------------------------------------------------------------------
    @staticmethod
    def _class(db, typed: str, now: float | None = None) -> _Class | None:
        """The live class ``typed`` names, or None."""
        code = rules.normalize_code(typed)
        row = (
            code
            and db.execute("SELECT created, seat_cap, joining, seats FROM classes WHERE code = ?", (code,)).fetchone()
        )
        if not row or rules.expired(row[0], now_or_clock(now)):
            return None
        return _Class(code, row[1], bool(row[2]), row[3])

    def _teacher(self, db, typed: str, teacher_key: str) -> str:
        """The code of the live class ``typed`` names when ``teacher_key`` is one of its keys."""
        found = self._class(db, typed)
        if found is None:
            raise ClassNotFound(typed)
        if not self._keyed(db, found.code, teacher_key):
            raise NotTeacher(found.code)
        return found.code

    @staticmethod
    def _keyed(db, code: str, teacher_key) -> bool:
        if not isinstance(teacher_key, str) or not teacher_key:
            return False
        query = "SELECT 1 FROM teacher_keys WHERE code = ? AND key_hash = ?"
        return db.execute(query, (code, rules.digest(teacher_key))).fetchone() is not None

    @staticmethod
    def _seat(db, code: str, token: str) -> int | None:
        row = db.execute(
            "SELECT number FROM seats WHERE code = ? AND token_hash = ?", (code, rules.digest(token))
        ).fetchone()
        return None if row is None else row[0]
