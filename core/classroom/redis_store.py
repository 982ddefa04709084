"""The class store in Redis (issue 41, item 4): for a class server that spans machines.

Keys of class CODE, every one set to expire at its opening + ``CLASS_TTL_S`` (PEXPIREAT):
``class:CODE:meta`` (hash: key_hash, created, version, plan, seats), ``class:CODE:tokens`` (hash:
sha256 of a seat token → seat number), ``class:CODE:nicks`` (hash: seat number → nickname),
``class:CODE:answers:ROUND:QUESTION`` (hash: seat number → pick; HSETNX keeps the first answer) and
``class:CODE:questions`` (the set of those answer keys, for ``end``). A join attempt counts in
``join:CLIENT`` (INCR, expiring ``JOIN_WINDOW_S`` after the first). Seat numbers and plan versions
are HINCRBY in MULTI transactions. A class is live while its meta hash holds ``created`` (a write
racing ``end`` may leave a hash without it, expiring with the rest). Redis errors (a server down)
propagate as ``redis.RedisError``. Methods, arguments and errors: ``core.classroom.store.Store``.
"""

from __future__ import annotations

import json
import time

from core.classroom import rules
from core.classroom.rules import ClassNotFound, NotSeated, NotTeacher, RosterRow, Seat, TooManyJoins


def _keys(code: str) -> tuple[str, str, str, str]:
    """(meta, tokens, nicks, questions) keys of class ``code``."""
    return tuple(f"class:{code}:{part}" for part in ("meta", "tokens", "nicks", "questions"))


def _answers_key(code: str, question: str, round: int) -> str:
    return f"class:{code}:answers:{round}:{question}"


def _deadline(created) -> int:
    """The PEXPIREAT time (ms since the epoch) of every key of a class opened at ``created`` (seconds)."""
    return int((float(created) + rules.CLASS_TTL_S) * 1000)


class RedisStore:
    """The class store on the Redis server at ``url`` ("redis://host:port/db"); connects lazily."""

    def __init__(self, url: str):
        import redis  # ~0.2 s to import: only a store at a redis:// URL pays it (tests/test_layers.py)

        self.url = url
        self._watch_error = redis.WatchError
        self.r = redis.Redis.from_url(url, decode_responses=True)

    def __repr__(self) -> str:
        return f"RedisStore({self.url!r})"

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
        p.hget(f"class:{code}:meta", "created")
        for method, part, *args in reads:
            getattr(p, method)(f"class:{code}:{part}" if part else args.pop(0), *args)
        created, *results = p.execute()
        if created is None or rules.expired(float(created), time.time() if now is None else now):
            return None
        return code, created, results

    def _teacher(self, typed: str, teacher_key: str) -> tuple[str, str]:
        """(code, created) when ``teacher_key`` is the live class's key; ClassNotFound / NotTeacher."""
        found = self._live(typed, ("hget", "meta", "key_hash"))
        if found is None:
            raise ClassNotFound(typed)
        code, created, (key_hash,) = found
        if not rules.same_digest(teacher_key, key_hash):
            raise NotTeacher(code)
        return code, created

    # ---- the teacher ---------------------------------------------------------------------------
    def open_class(self, now: float | None = None) -> tuple[str, str]:
        now = time.time() if now is None else now
        key = rules.new_secret()
        fields = {"key_hash": rules.digest(key), "created": repr(now), "version": 0, "plan": "{}", "seats": 0}
        for _ in range(rules.CODE_TRIES):
            code = rules.new_code()
            meta = _keys(code)[0]
            with self.r.pipeline() as p:
                try:
                    p.watch(meta)
                    if p.exists(meta):
                        continue  # the code is taken: draw another
                    p.multi()
                    p.hset(meta, mapping=fields)
                    p.pexpireat(meta, _deadline(now))
                    p.execute()
                    return code, key
                except self._watch_error:
                    continue  # another store took the code meanwhile
        raise RuntimeError(f"no free class code after {rules.CODE_TRIES} tries")

    def publish(self, code: str, teacher_key: str, plan: dict) -> int:
        text = rules.plan_json(plan)
        code, created = self._teacher(code, teacher_key)
        meta = _keys(code)[0]
        p = self.r.pipeline()  # MULTI: the version and its plan change together
        p.hincrby(meta, "version", 1)
        p.hset(meta, "plan", text)
        p.pexpireat(meta, _deadline(created))
        return int(p.execute()[0])

    def roster(self, code: str, teacher_key: str, question: str, round: int) -> list[RosterRow]:
        rules.check_question(question, round)
        code, _ = self._teacher(code, teacher_key)
        p = self.r.pipeline(transaction=False)
        p.hgetall(_keys(code)[2])
        p.hkeys(_answers_key(code, question, round))
        nicks, answered = p.execute()
        answered = set(answered)
        return [RosterRow(int(n), nicks[n], n in answered) for n in sorted(nicks, key=int)]

    def end(self, code: str, teacher_key: str) -> None:
        code, _ = self._teacher(code, teacher_key)
        keys = _keys(code)
        self.r.delete(*keys, *self.r.smembers(keys[3]))

    def is_teacher(self, code: str, teacher_key: str) -> bool:
        found = self._live(code, ("hget", "meta", "key_hash"))
        return found is not None and rules.same_digest(teacher_key, found[2][0])

    # ---- students --------------------------------------------------------------------------------
    def join(self, code: str, nickname: str = "", client: str = "", now: float | None = None) -> Seat:
        now = time.time() if now is None else now
        nickname, client = rules.clean_nickname(nickname), rules.clean_client(client)
        if client:
            self._check_joins(client)
        found = self._live(code, now=now)
        if found is None:
            if client:
                self._count_join(client)
            raise ClassNotFound(code)
        code, created, _ = found
        meta, tokens, nicks, _ = _keys(code)
        deadline, token = _deadline(created), rules.new_secret()
        p = self.r.pipeline()
        p.hincrby(meta, "seats", 1)
        p.pexpireat(meta, deadline)
        number = int(p.execute()[0])
        p = self.r.pipeline()
        p.hset(tokens, rules.digest(token), number)
        p.hset(nicks, number, nickname)
        p.pexpireat(tokens, deadline)
        p.pexpireat(nicks, deadline)
        p.execute()
        return Seat(number, token)

    def _check_joins(self, client: str) -> None:
        """TooManyJoins while ``client`` has used up its failed attempts of this window."""
        p = self.r.pipeline()
        p.get(f"join:{client}")
        p.ttl(f"join:{client}")
        count, ttl = p.execute()
        if count is not None and int(count) >= rules.JOIN_LIMIT:
            raise TooManyJoins(ttl if ttl > 0 else rules.JOIN_WINDOW_S)

    def _count_join(self, client: str) -> None:
        """Count one failed join attempt of ``client`` (a code that names no open class); the first
        of a window starts its clock."""
        key = f"join:{client}"
        p = self.r.pipeline()
        p.set(key, 0, ex=rules.JOIN_WINDOW_S, nx=True)
        p.incr(key)
        p.execute()

    def seat(self, code: str, token: str) -> int | None:
        found = self._live(code, ("hget", "tokens", rules.digest(token)))
        number = None if found is None else found[2][0]
        return None if number is None else int(number)

    def answer(self, code: str, token: str, question: str, round: int, pick: int, now: float | None = None) -> bool:
        rules.check_question(question, round)
        rules.check_pick(pick)
        found = self._live(code, ("hget", "tokens", rules.digest(token)), now=now)
        if found is None:
            raise ClassNotFound(code)
        code, created, (number,) = found
        if number is None:
            raise NotSeated(code)
        key, questions, deadline = _answers_key(code, question, round), _keys(code)[3], _deadline(created)
        p = self.r.pipeline()
        p.hsetnx(key, number, pick)
        p.pexpireat(key, deadline)
        p.sadd(questions, key)
        p.pexpireat(questions, deadline)
        return bool(p.execute()[0])

    def my_answer(self, code: str, token: str, question: str, round: int) -> int | None:
        rules.check_question(question, round)
        number = self.seat(code, token)
        if number is None:
            return None
        pick = self.r.hget(_answers_key(rules.normalize_code(code), question, round), number)
        return None if pick is None else int(pick)

    # ---- everyone --------------------------------------------------------------------------------
    def plan(self, code: str) -> tuple[int, dict] | None:
        found = self._live(code, ("hmget", "meta", "version", "plan"))
        if found is None:
            return None
        version, text = found[2][0]
        return int(version or 0), json.loads(text or "{}")

    def tally(self, code: str, question: str, round: int, n_options: int) -> list[int]:
        rules.check_question(question, round)
        rules.check_options(n_options)
        found = self._answers(code, question, round, "hvals")
        return rules.tally_of(found or [], n_options)

    def answered(self, code: str, question: str, round: int) -> int:
        rules.check_question(question, round)
        return self._answers(code, question, round, "hlen") or 0

    def _answers(self, typed: str, question: str, round: int, method: str):
        """``method`` on the answers hash of (question, round) of the live class, or None."""
        code = rules.normalize_code(typed)
        found = code and self._live(code, (method, None, _answers_key(code, question, round)))
        return found[2][0] if found else None

    def students(self, code: str) -> int:
        found = self._live(code, ("hlen", "tokens"))
        return 0 if found is None else int(found[2][0])
