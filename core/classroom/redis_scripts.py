"""The Redis class store's keys and its three server-side scripts (issue 49): what must read and write a
class in one step (the seat cap and the seat number, a new code and its teacher key) or in one
round-trip (the event stream's pulse, whose answers key depends on the question the same read finds).
Each script is run with EVALSHA (``redis.Redis.register_script``). ``core.classroom.redis_store`` uses
them.

Keys of class CODE, each expiring at its opening + ``CLASS_TTL_S``: ``class:CODE:meta`` (hash: created,
layout, seat_cap, joining, seats (taken now), last_seat (the last number given), version, plan, question,
round), ``class:CODE:keys`` (set: sha256s of its teacher keys), ``class:CODE:tokens`` (hash: sha256 of a
seat token → seat number), ``class:CODE:nicks`` (hash: seat number → nickname), ``class:CODE:clients``
(hash: sha256 of a browser id → its seat number), ``class:CODE:seatinfo`` (hash: seat number → "TOKEN_SHA
CLIENT_SHA", what removing the seat deletes), ``class:CODE:answers:ROUND:QUESTION`` (hash: seat number →
pick) and ``class:CODE:questions`` (the set of those answer keys, for ``end`` and removing a seat). Elsewhere:
``pair:SHA256`` ("CODE DEADLINE", expiring at the deadline) and ``join:CLIENT`` (failed joins, expiring
``JOIN_WINDOW_S`` after the first).
"""

from __future__ import annotations

from core.classroom import rules

LAYOUT = "3"  # meta's "layout": a class of another layout counts as missing (it expires by itself)


PARTS = ("meta", "keys", "tokens", "nicks", "questions", "clients", "seatinfo")


def class_keys(code: str) -> tuple[str, ...]:
    """The keys of class ``code``, in the order of ``PARTS``: (meta, keys, tokens, nicks, questions, clients,
    seatinfo)."""
    return tuple(f"class:{code}:{part}" for part in PARTS)


def answers_key(code: str, question: str, round: int) -> str:
    return f"class:{code}:answers:{round}:{question}"


def deadline_ms(created) -> int:
    """The PEXPIREAT time (ms since the epoch) of every key of a class opened at ``created`` (seconds)."""
    return int((float(created) + rules.CLASS_TTL_S) * 1000)


# KEYS: meta, keys. ARGV: created, layout, seat_cap, key hash, deadline (ms). 1: opened; 0: the code is taken.
OPEN = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'created', ARGV[1], 'layout', ARGV[2], 'seat_cap', ARGV[3], 'joining', '1',
           'seats', 0, 'last_seat', 0, 'version', 0, 'plan', '{}', 'question', '', 'round', 0)
redis.call('SADD', KEYS[2], ARGV[4])
redis.call('PEXPIREAT', KEYS[1], ARGV[5])
redis.call('PEXPIREAT', KEYS[2], ARGV[5])
return 1
"""

# KEYS: meta, tokens, nicks, clients, seatinfo. ARGV: now (s), CLASS_TTL_S, layout, token hash, nickname, client
# hash ('' for none). A client's seat comes back under the new token (its old token deleted), else a new seat.
# {'ok', number} | {'missing'} | {'closed'} | {'full', seat_cap}
JOIN = """
local m = redis.call('HMGET', KEYS[1], 'created', 'layout', 'joining', 'seats', 'seat_cap')
if not m[1] or m[2] ~= ARGV[3] or tonumber(m[1]) + tonumber(ARGV[2]) <= tonumber(ARGV[1]) then
  return {'missing'}
end
local n = false
if ARGV[6] ~= '' then n = redis.call('HGET', KEYS[4], ARGV[6]) end
if n then
  local held = redis.call('HGET', KEYS[5], n)
  if held then redis.call('HDEL', KEYS[2], string.match(held, '^(%S+)')) end
else
  if m[3] ~= '1' then return {'closed'} end
  if tonumber(m[4]) >= tonumber(m[5]) then return {'full', m[5]} end
  n = redis.call('HINCRBY', KEYS[1], 'last_seat', 1)
  redis.call('HINCRBY', KEYS[1], 'seats', 1)
  if ARGV[6] ~= '' then redis.call('HSET', KEYS[4], ARGV[6], n) end
end
redis.call('HSET', KEYS[2], ARGV[4], n)
redis.call('HSET', KEYS[3], n, ARGV[5])
redis.call('HSET', KEYS[5], n, ARGV[4] .. ' ' .. ARGV[6])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then
  for i = 2, 5 do redis.call('PEXPIRE', KEYS[i], ttl) end
end
return {'ok', n}
"""

# KEYS: meta, tokens, nicks, clients, seatinfo, questions. ARGV: seat number. 1: removed (its token, nickname,
# browser and answers deleted, its place free); 0: no such seat.
REMOVE = """
local held = redis.call('HGET', KEYS[5], ARGV[1])
if not held then return 0 end
local token, client = string.match(held, '^(%S+) ?(%S*)$')
redis.call('HDEL', KEYS[2], token)
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[5], ARGV[1])
if client and client ~= '' then redis.call('HDEL', KEYS[4], client) end
for _, answers in ipairs(redis.call('SMEMBERS', KEYS[6])) do redis.call('HDEL', answers, ARGV[1]) end
redis.call('HINCRBY', KEYS[1], 'seats', -1)
return 1
"""

# KEYS: meta. ARGV: the class's answers key prefix ("class:CODE:answers:").
# {created, layout, version, seats, question ('' when none), round, answered} or nil (no class).
PULSE = """
local m = redis.call('HMGET', KEYS[1], 'created', 'layout', 'version', 'seats', 'question', 'round')
if not m[1] then return false end
local n = 0
if m[5] and m[5] ~= '' then n = redis.call('HLEN', ARGV[1] .. m[6] .. ':' .. m[5]) end
return {m[1], m[2] or '', m[3] or '0', m[4] or '0', m[5] or '', m[6] or '0', n}
"""
