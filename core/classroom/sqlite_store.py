"""The class store in one SQLite file (issue 41, item 4): the embedded default, no server to start.

Every replica of a class server (several processes, many threads each) opens the same file. The file
is in WAL mode (readers never wait for the writer; a killed process loses no committed answer) with a
5 s busy timeout; each thread of each process has its own connection. Changes that read before they
write (a seat number, a plan version, an answer's seat) run in ``BEGIN IMMEDIATE`` transactions, so
SQLite puts them in line; primary keys make answers idempotent (``INSERT OR IGNORE``). A class
opened more than ``CLASS_TTL_S`` ago counts as missing, and ``open_class`` deletes such classes.
Methods, arguments and errors: ``core.classroom.store.Store``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path

from core.classroom import rules
from core.classroom.rules import ClassNotFound, NotSeated, NotTeacher, RosterRow, Seat, TooManyJoins

BUSY_TIMEOUT_MS = 5000

SCHEMA = """
CREATE TABLE IF NOT EXISTS classes (
    code TEXT PRIMARY KEY, key_hash TEXT NOT NULL, created REAL NOT NULL,
    version INTEGER NOT NULL DEFAULT 0, plan TEXT NOT NULL DEFAULT '{}', seats INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS seats (
    code TEXT NOT NULL, number INTEGER NOT NULL, token_hash TEXT NOT NULL, nickname TEXT NOT NULL,
    PRIMARY KEY (code, number), UNIQUE (code, token_hash));
CREATE TABLE IF NOT EXISTS answers (
    code TEXT NOT NULL, question TEXT NOT NULL, round INTEGER NOT NULL, seat INTEGER NOT NULL,
    pick INTEGER NOT NULL, PRIMARY KEY (code, question, round, seat));
CREATE TABLE IF NOT EXISTS joins (client TEXT PRIMARY KEY, since REAL NOT NULL, count INTEGER NOT NULL);
"""


class _Lease:
    """One pooled connection held by one thread: back in ``pool`` when that thread ends (its
    ``threading.local`` values are dropped then), for the next thread to take (one at a time)."""

    def __init__(self, pool: list, db: sqlite3.Connection):
        self.pid, self.pool, self.db = os.getpid(), pool, db

    def __del__(self):
        if os.getpid() == self.pid:
            self.pool.append(self.db)


class SqliteStore:
    """The class store in the SQLite file ``path`` (made, with its folder, when missing)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._idle: list[sqlite3.Connection] = []  # connections no live thread holds (this process's)
        self._idle_pid = os.getpid()
        db = self._db()
        if db.execute("PRAGMA journal_mode=WAL").fetchone()[0].lower() != "wal":
            raise ValueError(f"class store {self.path}: SQLite could not use WAL mode on this file")
        db.executescript(SCHEMA)

    def __repr__(self) -> str:
        return f"SqliteStore({str(self.path)!r})"

    # ---- connections ---------------------------------------------------------------------------
    def _db(self) -> sqlite3.Connection:
        """This thread's connection, leased from the process's pool until the thread ends (a forked
        child opens its own: a connection never crosses a fork). Why a pool: streamlit runs every
        rerun in a new thread, so a connection per thread meant a new connection (open, two pragmas)
        for each of a class's polls, twice a second per student: 80 % of reading the plan."""
        lease = getattr(self._local, "lease", None)
        if lease is None or lease.pid != os.getpid():
            if self._idle_pid != os.getpid():
                self._idle, self._idle_pid = [], os.getpid()
            try:
                db = self._idle.pop()
            except IndexError:
                db = sqlite3.connect(
                    self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
                )
                db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
                db.execute("PRAGMA synchronous=NORMAL")  # in WAL mode: durable across a killed process
            self._local.lease = lease = _Lease(self._idle, db)
        return lease.db

    @contextlib.contextmanager
    def _write(self):
        """A ``BEGIN IMMEDIATE`` transaction: committed when the block ends, rolled back on an error."""
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def close(self) -> None:
        """Close this thread's connection (another call opens a new one)."""
        lease = getattr(self._local, "lease", None)
        if lease is not None and lease.pid == os.getpid():
            lease.pool = []  # not back into the pool: closed
            lease.db.close()
        self._local.lease = None

    # ---- lookups ---------------------------------------------------------------------------------
    @staticmethod
    def _class(db, typed: str, now: float | None = None) -> tuple[str, str, float] | None:
        """(code, key_hash, created) of the live class ``typed`` names, or None."""
        code = rules.normalize_code(typed)
        if code is None:
            return None
        row = db.execute("SELECT key_hash, created FROM classes WHERE code = ?", (code,)).fetchone()
        if row is None or rules.expired(row[1], time.time() if now is None else now):
            return None
        return code, row[0], row[1]

    def _teacher(self, db, typed: str, teacher_key: str) -> str:
        found = self._class(db, typed)
        if found is None:
            raise ClassNotFound(typed)
        if not rules.same_digest(teacher_key, found[1]):
            raise NotTeacher(found[0])
        return found[0]

    @staticmethod
    def _seat(db, code: str, token: str) -> int | None:
        row = db.execute(
            "SELECT number FROM seats WHERE code = ? AND token_hash = ?", (code, rules.digest(token))
        ).fetchone()
        return None if row is None else row[0]

    # ---- the teacher ---------------------------------------------------------------------------
    def open_class(self, now: float | None = None) -> tuple[str, str]:
        now = time.time() if now is None else now
        key = rules.new_secret()
        self._purge(now)
        for _ in range(rules.CODE_TRIES):
            code = rules.new_code()
            try:
                with self._write() as db:
                    db.execute(
                        "INSERT INTO classes (code, key_hash, created) VALUES (?, ?, ?)", (code, rules.digest(key), now)
                    )
                return code, key
            except sqlite3.IntegrityError:
                continue  # the code is taken: draw another
        raise RuntimeError(f"no free class code after {rules.CODE_TRIES} tries")

    def _purge(self, now: float) -> None:
        """Delete every expired class with all it holds, and join counts past their window."""
        with self._write() as db:
            old = "SELECT code FROM classes WHERE created <= ?"
            cutoff = (now - rules.CLASS_TTL_S,)
            db.execute(f"DELETE FROM answers WHERE code IN ({old})", cutoff)
            db.execute(f"DELETE FROM seats WHERE code IN ({old})", cutoff)
            db.execute("DELETE FROM classes WHERE created <= ?", cutoff)
            db.execute("DELETE FROM joins WHERE since <= ?", (now - rules.JOIN_WINDOW_S,))

    def publish(self, code: str, teacher_key: str, plan: dict) -> int:
        text = rules.plan_json(plan)
        with self._write() as db:
            code = self._teacher(db, code, teacher_key)
            db.execute("UPDATE classes SET version = version + 1, plan = ? WHERE code = ?", (text, code))
            return db.execute("SELECT version FROM classes WHERE code = ?", (code,)).fetchone()[0]

    def roster(self, code: str, teacher_key: str, question: str, round: int) -> list[RosterRow]:
        rules.check_question(question, round)
        db = self._db()
        code = self._teacher(db, code, teacher_key)
        rows = db.execute(
            "SELECT s.number, s.nickname, a.seat IS NOT NULL FROM seats s LEFT JOIN answers a"
            " ON a.code = s.code AND a.seat = s.number AND a.question = ? AND a.round = ?"
            " WHERE s.code = ? ORDER BY s.number",
            (question, round, code),
        ).fetchall()
        return [RosterRow(number, nickname, bool(answered)) for number, nickname, answered in rows]

    def end(self, code: str, teacher_key: str) -> None:
        with self._write() as db:
            code = self._teacher(db, code, teacher_key)
            for table in ("answers", "seats", "classes"):
                db.execute(f"DELETE FROM {table} WHERE code = ?", (code,))

    def is_teacher(self, code: str, teacher_key: str) -> bool:
        found = self._class(self._db(), code)
        return found is not None and rules.same_digest(teacher_key, found[1])

    # ---- students --------------------------------------------------------------------------------
    def join(self, code: str, nickname: str = "", client: str = "", now: float | None = None) -> Seat:
        now = time.time() if now is None else now
        nickname, client = rules.clean_nickname(nickname), rules.clean_client(client)
        if client:
            self._check_joins(client, now)
        token = rules.new_secret()
        with self._write() as db:  # one transaction: a class ended meanwhile gets no seat
            found = self._class(db, code, now)
            if found is not None:
                number = db.execute(
                    "UPDATE classes SET seats = seats + 1 WHERE code = ? RETURNING seats", (found[0],)
                ).fetchone()[0]
                db.execute(
                    "INSERT INTO seats (code, number, token_hash, nickname) VALUES (?, ?, ?, ?)",
                    (found[0], number, rules.digest(token), nickname),
                )
        if found is None:
            if client:
                self._count_join(client, now)
            raise ClassNotFound(code)
        return Seat(number, token)

    def _check_joins(self, client: str, now: float) -> None:
        """TooManyJoins while ``client`` has used up its failed attempts of this window."""
        row = self._db().execute("SELECT since, count FROM joins WHERE client = ?", (client,)).fetchone()
        if row is not None and row[0] + rules.JOIN_WINDOW_S > now and row[1] >= rules.JOIN_LIMIT:
            raise TooManyJoins(row[0] + rules.JOIN_WINDOW_S - now)

    def _count_join(self, client: str, now: float) -> None:
        """Count one failed join attempt of ``client`` (a code that names no open class)."""
        with self._write() as db:
            row = db.execute("SELECT since, count FROM joins WHERE client = ?", (client,)).fetchone()
            if row is None or row[0] + rules.JOIN_WINDOW_S <= now:
                since, count = now, 1
            else:
                since, count = row[0], row[1] + 1
            db.execute("INSERT OR REPLACE INTO joins (client, since, count) VALUES (?, ?, ?)", (client, since, count))

    def seat(self, code: str, token: str) -> int | None:
        db = self._db()
        found = self._class(db, code)
        return None if found is None else self._seat(db, found[0], token)

    def answer(self, code: str, token: str, question: str, round: int, pick: int, now: float | None = None) -> bool:
        rules.check_question(question, round)
        rules.check_pick(pick)
        with self._write() as db:
            found = self._class(db, code, now)
            if found is None:
                raise ClassNotFound(code)
            number = self._seat(db, found[0], token)
            if number is None:
                raise NotSeated(found[0])
            written = db.execute(
                "INSERT OR IGNORE INTO answers (code, question, round, seat, pick) VALUES (?, ?, ?, ?, ?)",
                (found[0], question, round, number, pick),
            ).rowcount
        return written == 1

    def my_answer(self, code: str, token: str, question: str, round: int) -> int | None:
        rules.check_question(question, round)
        db = self._db()
        found = self._class(db, code)
        number = None if found is None else self._seat(db, found[0], token)
        if number is None:
            return None
        row = db.execute(
            "SELECT pick FROM answers WHERE code = ? AND question = ? AND round = ? AND seat = ?",
            (found[0], question, round, number),
        ).fetchone()
        return None if row is None else row[0]

    # ---- everyone --------------------------------------------------------------------------------
    def plan(self, code: str) -> tuple[int, dict] | None:
        found = self._class(self._db(), code)
        if found is None:
            return None
        version, text = self._db().execute("SELECT version, plan FROM classes WHERE code = ?", (found[0],)).fetchone()
        return version, json.loads(text)

    def tally(self, code: str, question: str, round: int, n_options: int) -> list[int]:
        rules.check_question(question, round)
        rules.check_options(n_options)
        return rules.tally_of([pick for (pick,) in self._answers(code, question, round, "pick")], n_options)

    def answered(self, code: str, question: str, round: int) -> int:
        rules.check_question(question, round)
        return self._answers(code, question, round, "COUNT(*)")[0][0]

    def _answers(self, typed: str, question: str, round: int, what: str) -> list[tuple]:
        """``SELECT what`` over the answers to (question, round) of the live class ``typed`` names."""
        code = rules.normalize_code(typed) or ""
        return (
            self._db()
            .execute(
                f"SELECT {what} FROM answers WHERE code = ? AND question = ? AND round = ?"
                " AND EXISTS (SELECT 1 FROM classes WHERE code = ? AND created > ?)",
                (code, question, round, code, time.time() - rules.CLASS_TTL_S),
            )
            .fetchall()
        )

    def students(self, code: str) -> int:
        found = self._class(self._db(), code)
        if found is None:
            return 0
        return self._db().execute("SELECT COUNT(*) FROM seats WHERE code = ?", (found[0],)).fetchone()[0]
