"""The class store in Redis (issues 41 and 49): for a class server that spans machines.

Keys and scripts: ``core.classroom.redis_scripts``. Opening a class, joining one (the seat cap and
the seat number) and the pulse are server-side scripts; plan versions are HINCRBY in MULTI
transactions with the plan beside them. A class is live while its meta hash holds ``created`` and
this layout (a write racing ``end`` may leave a hash without them, expiring with the rest). A server
that is down, loading or read-only (``redis.ConnectionError``, ``TimeoutError``, ``BusyLoadingError``,
``ReadOnlyError``) is ``StoreUnavailable`` from every method; redis-py's pool drops a broken
connection and connects again at the next call, so the same store works once the server is back.
Methods, arguments and errors: ``core.classroom.store.Store``.
"""

from __future__ import annotations

import functools
import json
import time
from urllib.parse import urlsplit, urlunsplit

from core.classroom import rules
from core.classroom.plan import Plan, plan_text
from core.classroom.redis_scripts import JOIN, LAYOUT, OPEN, PULSE, REMOVE, answers_key, class_keys, deadline_ms
from core.classroom.rules import (
    ClassFull,
    ClassInfo,
    ClassNotFound,
    JoiningClosed,
    NotSeated,
    NotTeacher,
    Pulse,
    RosterRow,
    Seat,
    StoreUnavailable,
    TooManyJoins,
)


def guarded(method):
    """A store method whose "server unreachable" errors are ``StoreUnavailable`` (the original as ``__cause__``)."""

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except self._down as err:
            raise StoreUnavailable() from err

    return run


def _now(now: float | None) -> float:
    return time.time() if now is None else now


class RedisStore:
    """The class store on the Redis server at ``url`` ("redis://[:password@]host:port/db"); connects lazily."""

    def __init__(self, url: str):
        import redis  # ~0.2 s to import: only a store at a redis:// URL pays it (tests/test_layers.py)

        self.url = url
        self._down = (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError)  # BusyLoading: a ConnectionError
        self.r = redis.Redis.from_url(url, decode_responses=True)
        self._open, self._join, self._pulse, self._remove = (
            self.r.register_script(s) for s in (OPEN, JOIN, PULSE, REMOVE)
        )

    def __repr__(self) -> str:
        where = urlsplit(self.url)
        shown = where._replace(netloc=f"***@{where.netloc.rsplit('@', 1)[1]}") if where.password else where
        return f"RedisStore({urlunsplit(shown)!r})"  # never the password (logs)

    def close(self) -> None:
        self.r.close()

    # ---- lookups ---------------------------------------------------------------------------------
    def _live(self, typed: str, *reads, now: float | None = None):
        """(code, created, results of ``reads``) for the live class ``typed`` names, else None. Each
        read is ``(method, key_part, *args)`` run in one round-trip with the class's ``created``."""
        code = rules.normalize_code(typed)
        if code is None:
            return None
        p = self.r.pipeline(transaction=False)
        p.hmget(f"class:{code}:meta", "created", "layout")
        for method, part, *args in reads:
            getattr(p, method)(f"class:{code}:{part}" if part else args.pop(0), *args)
        (created, layout), *results = p.execute()
        if created is None or layout != LAYOUT or rules.expired(float(created), _now(now)):
            return None
        return code, created, results

    def _teacher(self, typed: str, teacher_key: str) -> tuple[str, str]:
        """(code, created) when ``teacher_key`` is one of the live class's keys; ClassNotFound / NotTeacher."""
        found = self._live(typed, ("sismember", "keys", rules.digest(teacher_key)))
        if found is None:
            raise ClassNotFound(typed)
        code, created, (keyed,) = found
        if not keyed or not isinstance(teacher_key, str) or not teacher_key:
            raise NotTeacher(code)
        return code, created

    # ---- the teacher ---------------------------------------------------------------------------
    @guarded
    def open_class(self, seat_cap: int = rules.SEAT_CAP, now: float | None = None) -> tuple[str, str]:
        rules.check_seat_cap(seat_cap)
        now, key = _now(now), rules.new_secret()
        for _ in range(rules.CODE_TRIES):
            code = rules.new_code()
            meta, keys, *_ = class_keys(code)
            if self._open(keys=[meta, keys], args=[repr(now), LAYOUT, seat_cap, rules.digest(key), deadline_ms(now)]):
                return code, key
        raise RuntimeError(f"no free class code after {rules.CODE_TRIES} tries")

    def _set_meta(self, code: str, created, increment: str | None = None, **fields) -> list:
        """HSET ``fields`` on the class's meta (HINCRBY ``increment`` first) in one MULTI, keeping its deadline."""
        meta = class_keys(code)[0]
        p = self.r.pipeline()
        if increment:
            p.hincrby(meta, increment, 1)
        p.hset(meta, mapping=fields)
        p.pexpireat(meta, deadline_ms(created))
        return p.execute()

    @guarded
    def set_joining(self, code: str, teacher_key: str, open: bool) -> None:
        self._set_meta(*self._teacher(code, teacher_key), joining="1" if open else "0")

    @guarded
    def pair_code(self, code: str, teacher_key: str, now: float | None = None) -> str:
        now = _now(now)
        code, _ = self._teacher(code, teacher_key)
        deadline = now + rules.PAIR_TTL_S
        for _ in range(rules.CODE_TRIES):
            pair = rules.new_pair_code()
            if self.r.set(f"pair:{rules.digest(pair)}", f"{code} {deadline!r}", nx=True, pxat=int(deadline * 1000)):
                return pair
        raise RuntimeError(f"no free pairing code after {rules.CODE_TRIES} tries")

    @guarded
    def redeem_pair(self, pair_code: str, now: float | None = None) -> tuple[str, str]:
        now, pair = _now(now), rules.normalize_pair_code(pair_code)
        if pair is None:
            raise rules.pair_refused(pair_code)
        p = self.r.pipeline()  # MULTI: read and used up at once, so a second redeem finds nothing
        p.get(f"pair:{rules.digest(pair)}")
        p.delete(f"pair:{rules.digest(pair)}")
        found = p.execute()[0]
        code, deadline = found.split(" ") if found else (None, "0")
        live = code and float(deadline) > now and self._live(code, now=now)
        if not live:
            raise rules.pair_refused(pair_code)
        key, keys = rules.new_secret(), class_keys(code)[1]
        p = self.r.pipeline()
        p.sadd(keys, rules.digest(key))
        p.pexpireat(keys, deadline_ms(live[1]))
        p.execute()
        return code, key

    @guarded
    def publish(self, code: str, teacher_key: str, plan: Plan) -> int:
        text, q = plan_text(plan), plan.question
        code, created = self._teacher(code, teacher_key)
        question, round_ = ("", 0) if q is None else (q.id, q.round)
        return int(self._set_meta(code, created, "version", plan=text, question=question, round=round_)[0])

    @guarded
    def roster(self, code: str, teacher_key: str, question: str, round: int) -> list[RosterRow]:
        rules.check_question(question, round)
        code, _ = self._teacher(code, teacher_key)
        p = self.r.pipeline(transaction=False)
        p.hgetall(class_keys(code)[3])
        p.hkeys(answers_key(code, question, round))
        nicks, answered = p.execute()
        answered = set(answered)
        return [RosterRow(int(n), nicks[n], n in answered) for n in sorted(nicks, key=int)]

    @guarded
    def remove_seat(self, code: str, teacher_key: str, number: int) -> bool:
        code, _ = self._teacher(code, teacher_key)
        meta, _, tokens, nicks, questions, clients, seatinfo = class_keys(code)
        return bool(self._remove(keys=[meta, tokens, nicks, clients, seatinfo, questions], args=[int(number)]))

    @guarded
    def end(self, code: str, teacher_key: str) -> None:
        code, _ = self._teacher(code, teacher_key)
        keys = class_keys(code)
        self.r.delete(*keys, *self.r.smembers(keys[4]))

    @guarded
    def is_teacher(self, code: str, teacher_key: str) -> bool:
        found = self._live(code, ("sismember", "keys", rules.digest(teacher_key)))
        return found is not None and bool(found[2][0]) and isinstance(teacher_key, str) and bool(teacher_key)

    # ---- students --------------------------------------------------------------------------------
    @guarded
    def join(self, code: str, nickname: str = "", client: str = "", now: float | None = None) -> Seat:
        now = _now(now)
        nickname, client = rules.clean_nickname(nickname), rules.clean_client(client)
        typed, code, token = code, rules.normalize_code(code), rules.new_secret()
        outcome = ["missing"]
        if code is not None and client:  # over its limit, even the right code waits: no guess is confirmed
            count, ttl = self.r.pipeline().get(f"join:{client}").ttl(f"join:{client}").execute()
            if count is not None and int(count) >= rules.JOIN_LIMIT and ttl > 0:
                raise TooManyJoins(ttl)
        if code is not None:
            meta, _, tokens, nicks, _, clients, seatinfo = class_keys(code)
            mine = rules.digest(client) if client else ""
            args = [repr(now), rules.CLASS_TTL_S, LAYOUT, rules.digest(token), nickname, mine]
            outcome = self._join(keys=[meta, tokens, nicks, clients, seatinfo], args=args)
        if outcome[0] == "ok":
            return Seat(int(outcome[1]), token)
        if outcome[0] == "closed":
            raise JoiningClosed(code)
        if outcome[0] == "full":
            raise ClassFull(code, int(outcome[1]))
        raise self._failed_join(typed, client)

    def _failed_join(self, typed: str, client: str) -> Exception:
        """Count a failed attempt (a code that names no live class) of ``client`` ("" is not counted):
        TooManyJoins once it is over ``JOIN_LIMIT`` in its window (the first failure starts its clock),
        else ClassNotFound."""
        if not client:
            return ClassNotFound(typed)
        key = f"join:{client}"
        p = self.r.pipeline()
        p.set(key, 0, ex=rules.JOIN_WINDOW_S, nx=True)
        p.incr(key)
        p.ttl(key)
        _, count, ttl = p.execute()
        return (
            TooManyJoins(ttl if ttl > 0 else rules.JOIN_WINDOW_S) if count > rules.JOIN_LIMIT else ClassNotFound(typed)
        )

    @guarded
    def seat(self, code: str, token: str) -> int | None:
        found = self._live(code, ("hget", "tokens", rules.digest(token)))
        number = None if found is None else found[2][0]
        return None if number is None else int(number)

    @guarded
    def answer(self, code: str, token: str, question: str, round: int, pick: int, now: float | None = None) -> bool:
        rules.check_question(question, round)
        rules.check_pick(pick)
        found = self._live(code, ("hget", "tokens", rules.digest(token)), now=now)
        if found is None:
            raise ClassNotFound(code)
        code, created, (number,) = found
        if number is None:
            raise NotSeated(code)
        key, questions, deadline = answers_key(code, question, round), class_keys(code)[4], deadline_ms(created)
        p = self.r.pipeline()
        p.hsetnx(key, number, pick)
        p.pexpireat(key, deadline)
        p.sadd(questions, key)
        p.pexpireat(questions, deadline)
        return bool(p.execute()[0])

    @guarded
    def my_answer(self, code: str, token: str, question: str, round: int) -> int | None:
        rules.check_question(question, round)
        found = self._live(code, ("hget", "tokens", rules.digest(token)))
        if found is None or found[2][0] is None:
            return None
        pick = self.r.hget(answers_key(found[0], question, round), found[2][0])
        return None if pick is None else int(pick)

    # ---- everyone --------------------------------------------------------------------------------
    @guarded
    def info(self, code: str) -> ClassInfo | None:
        found = self._live(code, ("hmget", "meta", "seats", "seat_cap", "joining"))
        if found is None:
            return None
        seats, cap, joining = found[2][0]
        return ClassInfo(int(seats), int(cap), joining == "1")

    @guarded
    def plan(self, code: str) -> tuple[int, Plan] | None:
        found = self._live(code, ("hmget", "meta", "version", "plan"))
        if found is None:
            return None
        version, text = found[2][0]
        return int(version or 0), Plan.from_json(json.loads(text or "{}"))

    @guarded
    def pulse(self, code: str) -> Pulse | None:
        code = rules.normalize_code(code)
        got = code and self._pulse(keys=[class_keys(code)[0]], args=[f"class:{code}:answers:"])
        if not got or got[1] != LAYOUT or rules.expired(float(got[0]), time.time()):
            return None
        _, _, version, seats, question, round_, answered = got
        return Pulse(int(version), int(seats), int(answered), question or None, int(round_))

    @guarded
    def tally(self, code: str, question: str, round: int, n_options: int) -> list[int]:
        rules.check_question(question, round)
        rules.check_options(n_options)
        found = self._answers(code, question, round, "hvals")
        return rules.tally_of(found or [], n_options)

    @guarded
    def answered(self, code: str, question: str, round: int) -> int:
        rules.check_question(question, round)
        return self._answers(code, question, round, "hlen") or 0

    def _answers(self, typed: str, question: str, round: int, method: str):
        """``method`` on the answers hash of (question, round) of the live class, or None."""
        code = rules.normalize_code(typed)
        found = code and self._live(code, (method, None, answers_key(code, question, round)))
        return found[2][0] if found else None

    @guarded
    def students(self, code: str) -> int:
        found = self._live(code, ("hlen", "tokens"))
        return 0 if found is None else int(found[2][0])
