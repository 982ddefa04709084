"""The plan and the pulse through the class store (issue 49), on SQLite and on Redis: a ``Plan`` comes back
equal, field for field; ``pulse`` counts the answers to the plan's question in one cheap read."""

import json
import sqlite3
import time

import pytest

from core.classroom.plan import Plan, Question, Request
from core.classroom.redis_store import RedisStore
from core.classroom.rules import CLASS_TTL_S, Pulse

REQUEST = Request("r-1", "User: Ünï <b>x</b> 🙂\nAssistant:", "sample", 0.7, 40, 7, "float64", 4, None, True)
OPEN_Q = Question("r-1:3", "token", "Which token comes next?", (" Lyon", " Mira", "."))


def _full_plan() -> Plan:
    revealed = Question("r-1:3", "token", "Which?", (" Lyon", " Mira"), 2, True, 1, "It chose ␣Mira.", (0.1, 0.9))
    return Plan(
        mode="paused",
        recall=2,
        page="app_pages/practice.py",
        lesson="fifteen-minutes",
        stop=3,
        stop_revealed=True,
        request=REQUEST,
        step=12,
        settings={"ex": "ch30-3", "numbers": 5},
        question=revealed,
        join_shown=True,
    )


def test_a_plan_comes_back_from_the_store_as_published(store):
    """Every field set (Unicode and HTML kept literally): plan() gives the same Plan at the version publish
    returned; a plan with nothing set comes back as Plan()."""
    code, key = store.open_class()
    full = _full_plan()
    assert store.publish(code, key, full) == 1
    assert store.plan(code.lower()) == (1, full)
    assert store.publish(code, key, Plan()) == 2 and store.plan(code) == (2, Plan())


def test_a_stored_plan_of_another_schema_is_refused_by_name(store):
    """A plan written by an app of another plan schema is not read as this one: ValueError naming plan.schema."""
    code, key = store.open_class()
    store.publish(code, key, Plan(step=1))
    other = json.dumps({**Plan(step=1).to_json(), "schema": 2})
    if isinstance(store, RedisStore):
        store.r.hset(f"class:{code}:meta", "plan", other)
    else:
        with sqlite3.connect(store.path) as db:
            db.execute("UPDATE classes SET plan = ? WHERE code = ?", (other, code))
    with pytest.raises(ValueError, match=r"^plan\.schema: expected 1"):
        store.plan(code)


def test_the_pulse_counts_answers_to_the_plans_question(store):
    """Before a publish: version 0, no question. With question q (round 1) published and 2 of 3 students
    answering it (and one another question): answered 2. Round 2 published: 0, then 1 after one answer.
    A plan without a question: 0 answered, no question; no class, an ended or expired one: None."""
    code, key = store.open_class()
    seats = [store.join(code) for _ in range(3)]
    assert store.pulse(code) == Pulse(version=0, students=3, answered=0, question=None, round=0)
    assert store.publish(code, key, Plan(request=REQUEST, step=2, question=OPEN_Q)) == 1
    store.answer(code, seats[0].token, OPEN_Q.id, 1, 1)
    store.answer(code, seats[1].token, OPEN_Q.id, 1, 0)
    store.answer(code, seats[1].token, OPEN_Q.id, 1, 2)  # a second answer changes nothing
    store.answer(code, seats[2].token, "r-1:4", 1, 0)  # another question's answer
    assert store.pulse(code.lower()) == Pulse(1, 3, 2, OPEN_Q.id, 1)
    store.publish(code, key, Plan(request=REQUEST, step=2, question=Question(OPEN_Q.id, "token", "?", ("a",), round=2)))
    assert store.pulse(code) == Pulse(2, 3, 0, OPEN_Q.id, 2)
    store.answer(code, seats[2].token, OPEN_Q.id, 2, 0)
    assert store.pulse(code) == Pulse(2, 3, 1, OPEN_Q.id, 2)
    store.join(code)
    store.publish(code, key, Plan(request=REQUEST, step=3))
    assert store.pulse(code) == Pulse(3, 4, 0, None, 0)
    old, _ = store.open_class(now=time.time() - CLASS_TTL_S - 1)
    store.end(code, key)
    assert store.pulse(code) is None and store.pulse(old) is None and store.pulse("??") is None


def test_the_pulse_is_one_read(store):
    """SQLite: pulse runs one SQL statement. Redis: one command from the client, the pulse script by its sha,
    which runs one HMGET and one HLEN on the server (the server's own command counts)."""
    code, key = store.open_class()
    store.publish(code, key, Plan(question=OPEN_Q))
    store.pulse(code)  # the script loaded, the connection made
    if isinstance(store, RedisStore):
        store.r.config_resetstat()
        store.pulse(code)
        stats = store.r.info("commandstats")
        calls = {name.removeprefix("cmdstat_"): s["calls"] for name, s in stats.items()}
        assert calls == {"config|resetstat": 1, "evalsha": 1, "hmget": 1, "hlen": 1}
    else:
        ran = []
        store._db().set_trace_callback(ran.append)
        store.pulse(code)
        store._db().set_trace_callback(None)
        assert len(ran) == 1 and ran[0].startswith("SELECT"), ran
