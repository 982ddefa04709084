"""The class store in one SQLite file (issues 41 and 49): the embedded default, no server to start.

Every replica of a class server (several processes, many threads each) opens the same file
(``core.classroom.sqlite_db``: WAL mode, a connection per thread, tables). Changes that read before
they write (a seat number and the seat cap, a plan version, an answer's seat, a pairing code) run in
``BEGIN IMMEDIATE`` transactions, so SQLite puts them in line; primary keys make answers idempotent
(``INSERT OR IGNORE``). A class opened more than ``CLASS_TTL_S`` ago counts as missing, and
``open_class`` deletes such classes. A class's teacher keys are rows of ``teacher_keys`` (sha256s);
pairing codes rows of ``pairs`` (sha256s, with their deadline). Methods, arguments and errors:
``core.classroom.store.Store``; every method raises ``StoreUnavailable`` when the file is locked
past the busy timeout, read-only or cannot be opened.
"""

from __future__ import annotations

import json
import sqlite3
import time

from core.classroom import rules
from core.classroom.plan import Plan, plan_text
from core.classroom.rules import (
    ClassFull,
    ClassInfo,
    ClassNotFound,
    JoiningClosed,
    NotSeated,
    Pulse,
    RosterRow,
    Seat,
    TooManyJoins,
)
from core.classroom.sqlite_db import SqliteDb, guarded, now_or_clock


class SqliteStore(SqliteDb):
    """The class store in the SQLite file ``path`` (made, with its folder, when missing)."""

    # ---- the teacher ---------------------------------------------------------------------------
    @guarded
    def open_class(self, seat_cap: int = rules.SEAT_CAP, now: float | None = None) -> tuple[str, str]:
        rules.check_seat_cap(seat_cap)
        now, key = now_or_clock(now), rules.new_secret()
        self._purge(now)
        for _ in range(rules.CODE_TRIES):
            code = rules.new_code()
            try:
                with self._write() as db:
                    db.execute("INSERT INTO classes (code, created, seat_cap) VALUES (?, ?, ?)", (code, now, seat_cap))
                    db.execute("INSERT INTO teacher_keys (code, key_hash) VALUES (?, ?)", (code, rules.digest(key)))
                return code, key
            except sqlite3.IntegrityError:
                continue  # the code is taken: draw another
        raise RuntimeError(f"no free class code after {rules.CODE_TRIES} tries")

    def _purge(self, now: float) -> None:
        """Delete every expired class with all it holds, join counts past their window and pairing
        codes past their deadline."""
        with self._write() as db:
            old = "SELECT code FROM classes WHERE created <= ?"
            cutoff = (now - rules.CLASS_TTL_S,)
            for table in ("answers", "seats", "teacher_keys", "pairs"):
                db.execute(f"DELETE FROM {table} WHERE code IN ({old})", cutoff)
            db.execute("DELETE FROM classes WHERE created <= ?", cutoff)
            db.execute("DELETE FROM joins WHERE since <= ?", (now - rules.JOIN_WINDOW_S,))
            db.execute("DELETE FROM pairs WHERE expires <= ?", (now,))

    @guarded
    def set_joining(self, code: str, teacher_key: str, open: bool) -> None:
        with self._write() as db:
            code = self._teacher(db, code, teacher_key)
            db.execute("UPDATE classes SET joining = ? WHERE code = ?", (int(bool(open)), code))

    @guarded
    def pair_code(self, code: str, teacher_key: str, now: float | None = None) -> str:
        now = now_or_clock(now)
        with self._write() as db:
            code = self._teacher(db, code, teacher_key)
            db.execute("DELETE FROM pairs WHERE expires <= ?", (now,))
            for _ in range(rules.CODE_TRIES):
                pair = rules.new_pair_code()
                try:
                    db.execute(
                        "INSERT INTO pairs (pair_hash, code, expires) VALUES (?, ?, ?)",
                        (rules.digest(pair), code, now + rules.PAIR_TTL_S),
                    )
                    return pair
                except sqlite3.IntegrityError:
                    continue  # another class's live pairing code: draw another
        raise RuntimeError(f"no free pairing code after {rules.CODE_TRIES} tries")

    @guarded
    def redeem_pair(self, pair_code: str, now: float | None = None) -> tuple[str, str]:
        now, pair, found = now_or_clock(now), rules.normalize_pair_code(pair_code), None
        if pair is not None:
            with self._write() as db:
                row = db.execute(
                    "SELECT code, expires FROM pairs WHERE pair_hash = ?", (rules.digest(pair),)
                ).fetchone()
                if row is not None:
                    db.execute("DELETE FROM pairs WHERE pair_hash = ?", (rules.digest(pair),))  # used up, even late
                if row is not None and row[1] > now and self._class(db, row[0], now) is not None:
                    found = row[0], rules.new_secret()
                    db.execute(
                        "INSERT INTO teacher_keys (code, key_hash) VALUES (?, ?)", (row[0], rules.digest(found[1]))
                    )
        if found is None:
            raise rules.pair_refused(pair_code)
        return found

    @guarded
    def publish(self, code: str, teacher_key: str, plan: Plan) -> int:
        text, q = plan_text(plan), plan.question
        with self._write() as db:
            code = self._teacher(db, code, teacher_key)
            return db.execute(
                "UPDATE classes SET version = version + 1, plan = ?, question = ?, round = ? WHERE code = ?"
                " RETURNING version",
                (text, None if q is None else q.id, 0 if q is None else q.round, code),
            ).fetchone()[0]

    @guarded
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

    @guarded
    def end(self, code: str, teacher_key: str) -> None:
        with self._write() as db:
            code = self._teacher(db, code, teacher_key)
            for table in ("answers", "seats", "teacher_keys", "pairs", "classes"):
                db.execute(f"DELETE FROM {table} WHERE code = ?", (code,))

    @guarded
    def is_teacher(self, code: str, teacher_key: str) -> bool:
        db = self._db()
        found = self._class(db, code)
        return found is not None and self._keyed(db, found.code, teacher_key)

    # ---- students --------------------------------------------------------------------------------
    @guarded
    def join(self, code: str, nickname: str = "", client: str = "", now: float | None = None) -> Seat:
        now = now_or_clock(now)
        nickname, client = rules.clean_nickname(nickname), rules.clean_client(client)
        token, refused, number = rules.new_secret(), None, None
        mine = rules.digest(client) if client else ""
        with self._write() as db:  # one transaction: a class ended, closed or filled meanwhile gets no seat
            found = self._class(db, code, now)
            held = (
                found
                and mine
                and db.execute(
                    "SELECT number FROM seats WHERE code = ? AND client_hash = ?", (found.code, mine)
                ).fetchone()
            )
            if found is None:
                refused = self._failed_join(db, code, client, now)
            elif (wait := self._limited(db, client, now)) is not None:
                refused = TooManyJoins(wait)  # even the right code: a guesser must not learn it is right
            elif held:  # this browser's seat: the same number under a new token (the old one stops working)
                number = held[0]
                db.execute(
                    "UPDATE seats SET token_hash = ?, nickname = ? WHERE code = ? AND number = ?",
                    (rules.digest(token), nickname, found.code, number),
                )
            elif not found.joining:
                refused = JoiningClosed(found.code)
            elif found.seats >= found.seat_cap:
                refused = ClassFull(found.code, found.seat_cap)
            else:
                number = db.execute(
                    "UPDATE classes SET seats = seats + 1, last_seat = last_seat + 1 WHERE code = ?"
                    " RETURNING last_seat",
                    (found.code,),
                ).fetchone()[0]
                db.execute(
                    "INSERT INTO seats (code, number, token_hash, nickname, client_hash) VALUES (?, ?, ?, ?, ?)",
                    (found.code, number, rules.digest(token), nickname, mine),
                )
        if refused is not None:
            raise refused
        return Seat(number, token)

    @guarded
    def remove_seat(self, code: str, teacher_key: str, number: int) -> bool:
        with self._write() as db:
            code = self._teacher(db, code, teacher_key)
            gone = db.execute("DELETE FROM seats WHERE code = ? AND number = ?", (code, int(number))).rowcount
            if gone:
                db.execute("DELETE FROM answers WHERE code = ? AND seat = ?", (code, int(number)))
                db.execute("UPDATE classes SET seats = seats - 1 WHERE code = ?", (code,))
            return bool(gone)

    @staticmethod
    def _limited(db, client: str, now: float) -> float | None:
        """Seconds ``client`` must wait when its failed attempts reached ``JOIN_LIMIT`` in their window, else None."""
        row = client and db.execute("SELECT since, count FROM joins WHERE client = ?", (client,)).fetchone()
        if not row or row[1] < rules.JOIN_LIMIT or row[0] + rules.JOIN_WINDOW_S <= now:
            return None
        return row[0] + rules.JOIN_WINDOW_S - now

    @staticmethod
    def _failed_join(db, typed: str, client: str, now: float) -> Exception:
        """Count a failed attempt (a code that names no live class) of ``client`` ("" is not counted):
        TooManyJoins once it is over ``JOIN_LIMIT`` in its window, else ClassNotFound."""
        if not client:
            return ClassNotFound(typed)
        row = db.execute("SELECT since, count FROM joins WHERE client = ?", (client,)).fetchone()
        since, count = (now, 1) if row is None or row[0] + rules.JOIN_WINDOW_S <= now else (row[0], row[1] + 1)
        db.execute("INSERT OR REPLACE INTO joins (client, since, count) VALUES (?, ?, ?)", (client, since, count))
        return TooManyJoins(since + rules.JOIN_WINDOW_S - now) if count > rules.JOIN_LIMIT else ClassNotFound(typed)

    @guarded
    def seat(self, code: str, token: str) -> int | None:
        db = self._db()
        found = self._class(db, code)
        return None if found is None else self._seat(db, found.code, token)

    @guarded
    def answer(self, code: str, token: str, question: str, round: int, pick: int, now: float | None = None) -> bool:
        rules.check_question(question, round)
        rules.check_pick(pick)
        with self._write() as db:
            found = self._class(db, code, now)
            if found is None:
                raise ClassNotFound(code)
            number = self._seat(db, found.code, token)
            if number is None:
                raise NotSeated(found.code)
            written = db.execute(
                "INSERT OR IGNORE INTO answers (code, question, round, seat, pick) VALUES (?, ?, ?, ?, ?)",
                (found.code, question, round, number, pick),
            ).rowcount
        return written == 1

    @guarded
    def my_answer(self, code: str, token: str, question: str, round: int) -> int | None:
        rules.check_question(question, round)
        db = self._db()
        found = self._class(db, code)
        number = None if found is None else self._seat(db, found.code, token)
        if number is None:
            return None
        row = db.execute(
            "SELECT pick FROM answers WHERE code = ? AND question = ? AND round = ? AND seat = ?",
            (found.code, question, round, number),
        ).fetchone()
        return None if row is None else row[0]

    # ---- everyone --------------------------------------------------------------------------------
    @guarded
    def info(self, code: str) -> ClassInfo | None:
        found = self._class(self._db(), code)
        return None if found is None else ClassInfo(found.seats, found.seat_cap, found.joining)

    @guarded
    def plan(self, code: str) -> tuple[int, Plan] | None:
        code = rules.normalize_code(code)
        row = (
            code
            and self._db()
            .execute(
                "SELECT version, plan FROM classes WHERE code = ? AND created > ?",
                (code, time.time() - rules.CLASS_TTL_S),
            )
            .fetchone()
        )
        return (row[0], Plan.from_json(json.loads(row[1]))) if row else None

    @guarded
    def pulse(self, code: str) -> Pulse | None:
        code = rules.normalize_code(code)
        row = (
            code
            and self._db()
            .execute(  # one read: the class's row and the count of its question's answers
                "SELECT c.version, c.seats, c.question, c.round, (SELECT COUNT(*) FROM answers a"
                " WHERE a.code = c.code AND a.question = c.question AND a.round = c.round)"
                " FROM classes c WHERE c.code = ? AND c.created > ?",
                (code, time.time() - rules.CLASS_TTL_S),
            )
            .fetchone()
        )
        return Pulse(version=row[0], students=row[1], answered=row[4], question=row[2], round=row[3]) if row else None

    @guarded
    def tally(self, code: str, question: str, round: int, n_options: int) -> list[int]:
        rules.check_question(question, round)
        rules.check_options(n_options)
        return rules.tally_of([pick for (pick,) in self._answers(code, question, round, "pick")], n_options)

    @guarded
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

    @guarded
    def students(self, code: str) -> int:
        found = self._class(self._db(), code)
        return 0 if found is None else found.seats
