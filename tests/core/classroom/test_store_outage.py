"""The class store when its backend is gone (issue 49): every method raises ``StoreUnavailable`` with one
plain sentence (no path, host or port, the library's error as ``__cause__``) while Redis is stopped or
the SQLite file is locked, read-only or in a read-only folder; when the backend is back, the same store
object works again and every answer given before the outage is counted exactly once. And a Redis
server with a password, named in the store's URL."""

import sqlite3
from pathlib import Path

import pytest
import redis

from core.classroom.plan import Plan, Question
from core.classroom.redis_store import RedisStore
from core.classroom.rules import UNAVAILABLE, ClassInfo, Pulse, StoreUnavailable
from core.classroom.sqlite_store import SqliteStore
from core.classroom.store import Store, open_store
from tests.helpers import redis_server
from tests.helpers.file_rights import owner_rights_only

Q = Question("r-1:2", "token", "Which token?", ("a", "b", "c", "d"))
WRITES = (
    "open_class", "join", "join_wrong", "set_joining", "pair_code", "redeem_pair", "publish", "answer", "remove_seat",
    "end",
)  # fmt: skip


class Before:
    """A class as it stood before the outage: 3 seats, the plan with question Q, 3 answers (picks 0, 1, 2), a
    pairing code not yet redeemed."""

    def __init__(self, store):
        self.code, self.key = store.open_class()
        self.seats = [store.join(self.code, f"s{i}") for i in range(3)]
        assert store.publish(self.code, self.key, Plan(question=Q)) == 1
        assert [store.answer(self.code, s.token, Q.id, 1, i) for i, s in enumerate(self.seats)] == [True] * 3
        self.pair = store.pair_code(self.code, self.key)

    def calls(self, store) -> dict:
        """One call of every store method (``join_wrong``: a wrong code from a counted client)."""
        code, key, token = self.code, self.key, self.seats[0].token
        return {
            "open_class": lambda: store.open_class(),
            "join": lambda: store.join(code, "late"),
            "join_wrong": lambda: store.join("AAAAAA", client="browser-9"),
            "seat": lambda: store.seat(code, token),
            "set_joining": lambda: store.set_joining(code, key, False),
            "info": lambda: store.info(code),
            "pair_code": lambda: store.pair_code(code, key),
            "redeem_pair": lambda: store.redeem_pair(self.pair),
            "publish": lambda: store.publish(code, key, Plan(step=9)),
            "plan": lambda: store.plan(code),
            "pulse": lambda: store.pulse(code),
            "answer": lambda: store.answer(code, token, Q.id, 1, 3),
            "my_answer": lambda: store.my_answer(code, token, Q.id, 1),
            "tally": lambda: store.tally(code, Q.id, 1, 4),
            "answered": lambda: store.answered(code, Q.id, 1),
            "students": lambda: store.students(code),
            "roster": lambda: [r.answered for r in store.roster(code, key, Q.id, 1)],
            "remove_seat": lambda: store.remove_seat(code, key, 99),
            "end": lambda: store.end(code, key),
            "is_teacher": lambda: store.is_teacher(code, key),
        }

    def reads(self) -> dict:
        """What each reading method gives for this class (worked out from what was done above)."""
        return {
            "seat": 1,
            "info": ClassInfo(3, 200, True),
            "plan": (1, Plan(question=Q)),
            "pulse": Pulse(1, 3, 3, Q.id, 1),
            "my_answer": 0,
            "tally": [1, 1, 1, 0],
            "answered": 3,
            "students": 3,
            "roster": [True, True, True],
            "is_teacher": True,
        }

    def check_after(self, store) -> None:
        """The same store object, backend back: the 3 answers counted once (a second answer is not written),
        the unredeemed pairing code redeems, new seats, answers and plans are written."""
        code, key = self.code, self.key
        assert [store.answer(code, s.token, Q.id, 1, 3) for s in self.seats] == [False] * 3
        assert store.tally(code, Q.id, 1, 4) == [1, 1, 1, 0] and store.answered(code, Q.id, 1) == 3
        assert store.redeem_pair(self.pair)[0] == code
        late = store.join(code, "late")
        assert late.number == 4 and store.answer(code, late.token, Q.id, 1, 3)
        assert store.publish(code, key, Plan(question=Q, step=1)) == 2
        assert store.pulse(code) == Pulse(2, 4, 4, Q.id, 1)


def test_the_calls_cover_every_store_method(tmp_path):
    """The outage tests below call every method of the Store contract."""
    methods = {name for name in vars(Store) if not name.startswith("_")}
    called = set(Before(SqliteStore(tmp_path / "c.db")).calls(None)) - {"join_wrong"}
    assert called == methods and len(methods) == 19


def _unavailable(name: str, call, cause) -> None:
    """``call`` (store method ``name``) raises StoreUnavailable with the one sentence, ``cause`` behind it."""
    with pytest.raises(StoreUnavailable) as down:
        call()
    assert str(down.value) == UNAVAILABLE == "The class store cannot be reached right now: try again in a minute."
    assert isinstance(down.value.__cause__, cause), (name, repr(down.value.__cause__))


@pytest.fixture
def persistent_redis(tmp_path):
    """A redis-server that keeps its data across a stop and a start (an append-only file, fsynced)."""
    if not redis_server.available():
        pytest.skip("redis-server is not installed (apt-get install redis-server; .ci/run does)")
    server = redis_server.RedisServer(data_dir=tmp_path)
    assert server.start(), server.output
    yield server
    server.stop()


def test_redis_stopped_every_method_is_unavailable_and_the_same_store_works_again(persistent_redis):
    """Server stopped: all 19 calls raise StoreUnavailable (cause: redis ConnectionError), and nothing in
    the message names the host or port. Started again on its port: the same store object works, every
    earlier answer counted once."""
    store = open_store(persistent_redis.url)
    before = Before(store)
    persistent_redis.stop()
    for name, call in before.calls(store).items():
        _unavailable(name, call, redis.ConnectionError)
    assert persistent_redis.start(), persistent_redis.output
    before.check_after(store)


def test_redis_restarted_between_two_calls_is_not_noticed(persistent_redis):
    """A restart while nobody called (the pool's connection is then closed by the server): the next call
    reads the class, no error."""
    store = open_store(persistent_redis.url)
    before = Before(store)
    persistent_redis.stop()
    assert persistent_redis.start(), persistent_redis.output
    assert store.pulse(before.code) == Pulse(1, 3, 3, Q.id, 1)
    before.check_after(store)


def test_sqlite_locked_by_another_writer_refuses_writes_and_still_answers_reads(tmp_path):
    """Another connection holds a write transaction: the 9 writing calls raise StoreUnavailable after the
    busy timeout (cause: sqlite3 OperationalError "database is locked"); the 10 reading calls answer as
    before (WAL: readers never wait for a writer). Transaction over: the same store writes again."""
    path = tmp_path / "classes.db"
    store = SqliteStore(path, busy_timeout_ms=50)
    before = Before(store)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    calls, reads = before.calls(store), before.reads()
    for name in WRITES:
        _unavailable(name, calls[name], sqlite3.OperationalError)
    assert {name: calls[name]() for name in reads} == reads
    other.execute("ROLLBACK")
    other.close()
    before.check_after(store)


def _mode(paths, mode: int) -> None:
    for p in paths:
        p.chmod(mode)


def test_sqlite_file_read_only_refuses_writes_and_the_store_recovers(tmp_path):
    """The file made read-only (and this replica's connections opened anew, as a replica started now would):
    every writing call raises StoreUnavailable ("attempt to write a readonly database"), every reading call
    answers. Made writable again (the file and the -wal/-shm SQLite made meanwhile with its mode): the same
    store object writes, the 3 earlier answers counted once."""
    path = tmp_path / "classes.db"
    store = SqliteStore(path)
    before = Before(store)
    store.close()
    path.chmod(0o444)
    calls, reads = before.calls(store), before.reads()
    with owner_rights_only():
        for name in WRITES:
            _unavailable(name, calls[name], sqlite3.OperationalError)
        assert {name: calls[name]() for name in reads} == reads
        _mode(tmp_path.glob("classes.db*"), 0o644)
        before.check_after(store)


def test_sqlite_folder_read_only_every_method_is_unavailable_and_the_store_recovers(tmp_path):
    """The file's folder made read-only (SQLite cannot make the -wal and -shm files beside it): all 19 calls
    raise StoreUnavailable. Folder writable again: the same store object works, answers counted once."""
    folder = tmp_path / "store"
    store = SqliteStore(folder / "classes.db")
    before = Before(store)
    store.close()
    assert sorted(p.name for p in folder.iterdir()) == ["classes.db"]  # the last connection removed -wal, -shm
    folder.chmod(0o555)
    try:
        with owner_rights_only():
            for name, call in before.calls(store).items():
                _unavailable(name, call, sqlite3.OperationalError)
            folder.chmod(0o755)
            before.check_after(store)
    finally:
        folder.chmod(0o755)


def test_a_sqlite_store_whose_folder_cannot_be_made_works_once_it_can(tmp_path):
    """open_store on a path under a read-only folder: the store object is made; its calls raise
    StoreUnavailable (no path in the message); once the folder is writable the same object opens a class."""
    parent = tmp_path / "ro"
    parent.mkdir()
    parent.chmod(0o555)
    try:
        with owner_rights_only():
            store = open_store(f"sqlite:///{parent / 'deeper' / 'classes.db'}")
            with pytest.raises(StoreUnavailable) as down:
                store.open_class()
            assert str(parent) not in str(down.value) and isinstance(down.value.__cause__, OSError)
            parent.chmod(0o755)
            code, key = store.open_class()
            assert store.is_teacher(code, key) and Path(parent / "deeper" / "classes.db").is_file()
    finally:
        parent.chmod(0o755)


def test_redis_with_a_password_in_its_url():
    """A server started with --requirepass: the store at redis://:PASSWORD@host:port/0 opens a class, seats a
    student and reads the plan; without the password (or a wrong one) every call is StoreUnavailable
    (cause: redis AuthenticationError, a ConnectionError); the store's repr never shows the password."""
    if not redis_server.available():
        pytest.skip("redis-server is not installed (apt-get install redis-server; .ci/run does)")
    password = "s3cret-Ünï/@:x"  # characters a URL must escape
    with redis_server.redis_server(password=password) as server:
        quoted = redis_server.quote_password(password)
        store = open_store(f"redis://:{quoted}@127.0.0.1:{server.port}/0")
        code, key = store.open_class()
        assert store.join(code, "Ann").number == 1 and store.plan(code) == (0, Plan())
        assert "s3cret" not in repr(store) and quoted not in repr(store)
        for url in (f"redis://127.0.0.1:{server.port}/0", f"redis://:wrong@127.0.0.1:{server.port}/0"):
            other = RedisStore(url)
            _unavailable("info", lambda s=other: s.info(code), redis.ConnectionError)
            other.close()
        store.close()
