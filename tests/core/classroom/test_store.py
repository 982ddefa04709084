"""The class store (issues 41 and 49): one suite, run on SQLite and on Redis (conftest.py). Joining, teachers,
plans and outages have their own modules beside this one."""

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from core.classroom.plan import Plan, Request
from core.classroom.redis_store import RedisStore
from core.classroom.rules import (
    CLASS_TTL_S,
    CODE_ALPHABET,
    PLAN_MAX_BYTES,
    ClassNotFound,
    NotSeated,
    NotTeacher,
    new_code,
    normalize_code,
)
from core.classroom.sqlite_db import LAYOUT
from core.classroom.sqlite_store import SqliteStore
from core.classroom.store import default_url, open_store

ROOT = Path(__file__).resolve().parents[3]
Q = "req-1:3"  # a question id as core.classroom.plan.question_id writes them


def _answer_all(url: str, code: str, tokens: list[str], picks: list[int]) -> list[bool]:
    """Answer for every token at once, from one thread each (and, in a child process, its own store)."""
    store = open_store(url)
    start = threading.Barrier(len(tokens))

    def one(i):
        start.wait()
        return store.answer(code, tokens[i], Q, 1, picks[i])

    with ThreadPoolExecutor(len(tokens)) as pool:
        return list(pool.map(one, range(len(tokens))))


def test_codes_are_random_valid_and_distinct():
    """1000 new codes: each 6 letters of the alphabet (no 0/O/1/I/L), all different."""
    codes = [new_code() for _ in range(1000)]
    assert len(set(codes)) == 1000
    assert all(normalize_code(c) == c and len(c) == 6 for c in codes)
    assert not set("0O1IL") & set(CODE_ALPHABET) and len(CODE_ALPHABET) == 31


def test_normalize_code_accepts_how_people_type_codes():
    """Spaces, dashes and lower case are forgiven; a wrong length or a letter outside the alphabet is not."""
    assert normalize_code(" abc-d2e ") == "ABCD2E" and normalize_code("ABC D2E") == "ABCD2E"
    for bad in ("abcde0", "abcdel", "abcdeo", "ABCD1E", "ABCDEI", "ABCDE", "ABCDEFG", "", "ÄBCDEF", None, 123456):
        assert normalize_code(bad) is None, bad


def test_open_store_takes_two_schemes_and_refuses_others(tmp_path):
    """sqlite:///PATH and redis:// URLs open their backend; anything else is a ValueError that says what to write."""
    assert isinstance(open_store(f"sqlite:///{tmp_path}/a/b.db"), SqliteStore)
    assert (tmp_path / "a/b.db").is_file()
    assert isinstance(open_store("redis://127.0.0.1:1/0"), RedisStore)  # connects at first use
    for bad in ("", "classes.db", "postgres://x/y", "sqlite://x.db", "sqlite:///:memory:", "sqlite:///"):
        with pytest.raises(ValueError, match="class store"):
            open_store(bad)


def test_default_url_is_the_environment_or_a_state_file(monkeypatch, tmp_path):
    """EXPLAINER_CLASS_STORE wins; else an absolute SQLite file under XDG_STATE_HOME."""
    monkeypatch.setenv("EXPLAINER_CLASS_STORE", "redis://r:6379/0")
    assert default_url() == "redis://r:6379/0"
    monkeypatch.delenv("EXPLAINER_CLASS_STORE")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert default_url() == f"sqlite:///{tmp_path}/inference-explainer/classes.db"
    assert open_store(default_url()).path == tmp_path / "inference-explainer/classes.db"


def test_a_class_from_open_to_answers(store):
    """Open, join (seats 1, 2, …), plan (0, Plan()) before the first publish, answer, tally and count."""
    code, key = store.open_class()
    assert normalize_code(code) == code and store.is_teacher(code, key) and store.is_teacher(code.lower(), key)
    assert store.plan(code) == (0, Plan()) and store.students(code) == 0
    a, b = store.join(code, "Ann"), store.join(code.lower(), "")
    assert (a.number, b.number) == (1, 2) and a.token != b.token
    assert store.seat(code, a.token) == 1 and store.seat(code, b.token) == 2 and store.seat(code, "nope") is None
    assert store.answer(code, a.token, Q, 1, 2) and store.answer(code, b.token, Q, 1, 0)
    assert store.tally(code, Q, 1, 4) == [1, 0, 1, 0] and store.answered(code, Q, 1) == 2 == store.students(code)
    assert store.answered(code, Q, 2) == 0 and store.tally(code, "other", 1, 3) == [0, 0, 0]
    assert store.my_answer(code, a.token, Q, 1) == 2 and store.my_answer(code, a.token, Q, 2) is None


def test_the_first_answer_is_kept(store):
    """A second answer to the same question and round changes nothing; a new round is a new answer."""
    code, _ = store.open_class()
    seat = store.join(code, "x")
    assert store.answer(code, seat.token, Q, 1, 3) is True
    assert store.answer(code, seat.token, Q, 1, 1) is False
    assert store.tally(code, Q, 1, 4) == [0, 0, 0, 1] and store.answered(code, Q, 1) == 1
    assert store.my_answer(code, seat.token, Q, 1) == 3
    assert store.answer(code, seat.token, Q, 2, 1) is True and store.tally(code, Q, 2, 4) == [0, 1, 0, 0]


def test_answers_are_checked(store):
    """A token of no seat (or another class's) cannot answer; a pick outside 0..9 is refused."""
    code, _ = store.open_class()
    other, _ = store.open_class()
    seat, stranger = store.join(code), store.join(other)
    for token in ("", "forged", stranger.token):
        with pytest.raises(NotSeated):
            store.answer(code, token, Q, 1, 0)
    for pick in (-1, 10, True, 1.0, "1"):
        with pytest.raises(ValueError):
            store.answer(code, seat.token, Q, 1, pick)
    with pytest.raises(ClassNotFound, match="“zz-top”"):
        store.answer("zz-top", seat.token, Q, 1, 0)
    assert store.answered(code, Q, 1) == 0


def test_forty_students_join_and_answer_at_once(store, url):
    """40 joins from 40 threads get seats 1..40; 40 students answering twice each at once, from threads:
    every first answer is counted exactly once."""
    code, _ = store.open_class()
    with ThreadPoolExecutor(40) as pool:
        seats = list(pool.map(lambda i: store.join(code, f"s{i}", client=f"10.0.0.{i}"), range(40)))
    assert sorted(s.number for s in seats) == list(range(1, 41))
    tokens = [s.token for s in seats] * 2
    written = _answer_all(url, code, tokens, [i % 4 for i in range(40)] + [(i + 1) % 4 for i in range(40)])
    assert sum(written) == 40
    assert sum(store.tally(code, Q, 1, 4)) == 40 == store.answered(code, Q, 1) == store.students(code)


# One "replica": its own interpreter and store on the same file, 10 threads answering at once. A plain
# subprocess, not a multiprocessing pool: under pytest-xdist a spawned pool worker that failed to start
# was replaced again and again, and the test hung instead of failing.
REPLICA = """
import json, sys, threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from core.classroom.store import open_store
url, code, tokens, pick, question = json.loads(sys.argv[1])
store, start = open_store(url), threading.Barrier(len(tokens))
def one(token):
    start.wait()
    return store.answer(code, token, question, 1, pick)
with ThreadPoolExecutor(len(tokens)) as pool:
    print(sum(pool.map(one, tokens)))
"""


def test_forty_students_answer_from_four_processes(tmp_path):
    """SQLite from 4 processes (the replicas of a class server) × 10 threads: 40 answers, each counted once."""
    url = f"sqlite:///{tmp_path / 'classes.db'}"
    store = open_store(url)
    code, _ = store.open_class()
    tokens = [store.join(code).token for _ in range(40)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    replicas = [
        subprocess.Popen(
            [sys.executable, "-c", REPLICA, json.dumps([url, code, tokens[i::4], i, Q])],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    written = [int(r.communicate(timeout=120)[0]) for r in replicas]
    assert [r.returncode for r in replicas] == [0] * 4
    assert sum(written) == 40
    assert store.tally(code, Q, 1, 4) == [10, 10, 10, 10] and store.answered(code, Q, 1) == 40


def test_publish_versions_and_the_last_plan(store):
    """Versions count 1, 2, 3; plan() returns the last Plan as published (Unicode kept); a plan that is no
    valid Plan, or over 256 kB as JSON, is refused and leaves the stored one as it was."""
    code, key = store.open_class()
    request = Request("r", "Ünï <b>", "greedy", 0.8, 20, 0, "float32", 0, None)
    plans = [Plan(step=i, request=request, page="app_pages/decode.py") for i in range(3)]
    assert [store.publish(code, key, p) for p in plans] == [1, 2, 3]
    assert store.plan(code) == (3, plans[-1])
    huge = Plan(request=Request("r", "x" * PLAN_MAX_BYTES, "greedy", 0.8, 20, 0, "float32", 0, None))
    nan = Plan(request=Request("r", "x", "greedy", float("nan"), 20, 0, "float32", 0, None))
    for bad in ({"step": 1}, Plan(mode="lost"), Plan(step=-1), nan, huge):
        with pytest.raises(ValueError):
            store.publish(code, key, bad)
    assert store.plan(code) == (3, plans[-1])


def test_only_the_teacher_key_leads(store):
    """A wrong key (or another class's) gets NotTeacher from publish, roster and end, and changes nothing."""
    code, key = store.open_class()
    _, other_key = store.open_class()
    for wrong in ("", "guess", other_key, key + "x", None):
        assert not store.is_teacher(code, wrong)
        with pytest.raises(NotTeacher):
            store.publish(code, wrong, Plan(mode="paused"))
        with pytest.raises(NotTeacher):
            store.roster(code, wrong, Q, 1)
        with pytest.raises(NotTeacher):
            store.end(code, wrong)
    assert store.plan(code) == (0, Plan())


def test_the_roster_shows_nicknames_literally_and_never_tokens(store):
    """Nicknames come back as typed (HTML, emoji, accents; stripped, ≤ 40 characters), in seat order with
    who answered; no row carries a token."""
    code, key = store.open_class()
    nick = "<b>x</b> 🙂 Ünïcødé"
    seats = [store.join(code, f"  {nick}  "), store.join(code), store.join(code, "y" * 50)]
    store.answer(code, seats[1].token, Q, 1, 0)
    rows = store.roster(code, key, Q, 1)
    assert [(r.number, r.nickname, r.answered) for r in rows] == [(1, nick, False), (2, "", True), (3, "y" * 40, False)]
    assert not any(s.token in repr(rows) for s in seats) and not hasattr(rows[0], "token")


def test_end_deletes_everything(store, url):
    """After end: no plan, no join, no seat, no counts, no teacher; nothing of the class left in the store."""
    code, key = store.open_class()
    kept, kept_key = store.open_class()
    seat = store.join(code, "Ann")
    store.publish(code, key, Plan(step=1))
    store.answer(code, seat.token, Q, 1, 1)
    store.answer(kept, store.join(kept).token, Q, 1, 1)
    store.end(code, key)
    assert store.plan(code) is None and store.seat(code, seat.token) is None and not store.is_teacher(code, key)
    assert store.answered(code, Q, 1) == 0 == store.students(code) and store.tally(code, Q, 1, 2) == [0, 0]
    assert store.my_answer(code, seat.token, Q, 1) is None
    with pytest.raises(ClassNotFound, match=code):
        store.join(code)
    for act in (
        lambda: store.end(code, key),
        lambda: store.publish(code, key, Plan()),
        lambda: store.roster(code, key, Q, 1),
    ):
        with pytest.raises(ClassNotFound):
            act()
    if isinstance(store, RedisStore):
        assert list(store.r.scan_iter(f"class:{code}:*")) == []
    else:
        db = sqlite3.connect(store.path)
        assert [
            db.execute(f"SELECT COUNT(*) FROM {t} WHERE code = ?", (code,)).fetchone()[0]
            for t in ("classes", "teacher_keys", "seats", "answers", "pairs")
        ] == [0] * 5
    assert store.plan(kept) == (0, Plan()) and store.answered(kept, Q, 1) == 1 and store.is_teacher(kept, kept_key)


def test_a_class_expires_after_12_hours(store):
    """At its opening + 12 h + 1 s a class is missing for join and answer; one opened 12 h ago is gone for
    everything; in Redis every key of a class carries a TTL of at most 12 h."""
    t0 = time.time()
    code, key = store.open_class(now=t0)
    seat = store.join(code, "a", now=t0 + CLASS_TTL_S - 1)
    later = t0 + CLASS_TTL_S + 1
    with pytest.raises(ClassNotFound):
        store.join(code, "b", now=later)
    with pytest.raises(ClassNotFound):
        store.answer(code, seat.token, Q, 1, 0, now=later)
    store.answer(code, seat.token, Q, 1, 0)
    old, old_key = store.open_class(now=t0 - CLASS_TTL_S - 1)
    assert store.plan(old) is None and store.students(old) == 0 and not store.is_teacher(old, old_key)
    with pytest.raises(ClassNotFound):
        store.join(old)
    if isinstance(store, RedisStore):
        keys = list(store.r.scan_iter(f"class:{code}:*"))
        assert len(keys) == 7  # meta, keys, tokens, nicks, seatinfo, questions, one question's answers
        assert all(0 < store.r.ttl(k) <= CLASS_TTL_S for k in keys)
        assert list(store.r.scan_iter(f"class:{old}:*")) == []
    else:
        store.open_class()  # purges expired classes
        db = sqlite3.connect(store.path)
        assert db.execute("SELECT COUNT(*) FROM classes WHERE code = ?", (old,)).fetchone()[0] == 0


def test_a_second_store_on_the_same_url_sees_the_class(store, url):
    """Two replicas, two store objects on one file (or server): each sees what the other wrote."""
    twin = open_store(url)
    code, key = store.open_class()
    seat = twin.join(code, "Ann")
    assert store.seat(code, seat.token) == 1 and twin.publish(code, key, Plan(step=4)) == 1
    assert store.plan(code) == (1, Plan(step=4))
    assert store.answer(code, seat.token, Q, 1, 2) and not twin.answer(code, seat.token, Q, 1, 0)
    assert twin.tally(code, Q, 1, 3) == [0, 0, 1]
    twin.end(code, key)
    assert store.plan(code) is None
    twin.close()


def test_sqlite_threads_one_after_another_share_one_pooled_connection(tmp_path):
    """Streamlit runs every rerun in a new thread: each thread's connection goes back to the pool when
    the thread ends, so a class's polls (a new thread each, twice a second per student) reuse it
    instead of opening a new connection every time; threads at once still get one each."""
    store = open_store(f"sqlite:///{tmp_path / 'classes.db'}")
    code, key = store.open_class()
    store.publish(code, key, Plan(step=3))
    seen = []

    def read():
        seen.append(id(store._db()))
        assert store.plan(code) == (1, Plan(step=3))

    for _ in range(5):
        t = threading.Thread(target=read)
        t.start()
        t.join()
    assert len(set(seen)) == 1  # one connection for five threads in turn
    start, held = threading.Barrier(3), []

    def at_once():
        start.wait()
        held.append(store._db())
        start.wait()  # all three hold theirs before any thread ends

    threads = [threading.Thread(target=at_once) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(db) for db in held}) == 3
    store.close()


OLD_LAYOUT = """
CREATE TABLE classes (code TEXT PRIMARY KEY, key_hash TEXT NOT NULL, created REAL NOT NULL,
    version INTEGER NOT NULL DEFAULT 0, plan TEXT NOT NULL DEFAULT '{}', seats INTEGER NOT NULL DEFAULT 0);
CREATE TABLE seats (code TEXT NOT NULL, number INTEGER NOT NULL, token_hash TEXT NOT NULL, nickname TEXT NOT NULL,
    PRIMARY KEY (code, number), UNIQUE (code, token_hash));
CREATE TABLE answers (code TEXT NOT NULL, question TEXT NOT NULL, round INTEGER NOT NULL, seat INTEGER NOT NULL,
    pick INTEGER NOT NULL, PRIMARY KEY (code, question, round, seat));
CREATE TABLE joins (client TEXT PRIMARY KEY, since REAL NOT NULL, count INTEGER NOT NULL);
INSERT INTO classes (code, key_hash, created, plan) VALUES ('ABCDEF', 'x', 1e12, '{"mode": "paused"}');
"""


def test_a_sqlite_file_of_the_older_layout_is_made_afresh(tmp_path):
    """A file the previous store wrote (user_version 0, no seat cap or teacher keys): its tables are made
    again in this layout (``LAYOUT``), its class gone, and a new class opens, seats and publishes."""
    path = tmp_path / "classes.db"
    with sqlite3.connect(path) as db:
        db.executescript(OLD_LAYOUT)
    store = open_store(f"sqlite:///{path}")
    assert store.plan("ABCDEF") is None
    code, key = store.open_class(seat_cap=2)
    assert store.join(code).number == 1 and store.publish(code, key, Plan(step=1)) == 1
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == LAYOUT == 3
    store.close()


def test_a_sqlite_file_of_a_newer_layout_is_refused(tmp_path):
    """A file a newer app made (user_version 4) is not dropped: open_store says so (ValueError)."""
    path = tmp_path / "classes.db"
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {LAYOUT + 1}")
    with pytest.raises(ValueError, match="newer app's layout"):
        open_store(f"sqlite:///{path}")
