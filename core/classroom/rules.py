"""The rules both class stores keep (issues 41 and 49): limits, codes, keys, pairing codes, errors and
the checks on what a caller hands in. ``core.classroom.store`` opens a store; ``sqlite_store`` and
``redis_store`` import these rules from here, as does every caller.

Times are seconds (``time.time()`` by default); a class lasts ``CLASS_TTL_S`` from its opening.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
from dataclasses import dataclass

CLASS_TTL_S = 12 * 3600  # a class and all it holds is deleted 12 h after it was opened
JOIN_LIMIT = 20  # failed join attempts (a wrong code) per client per JOIN_WINDOW_S; joins that work are free
JOIN_WINDOW_S = 60
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O/1/I/L: nothing to misread off a projector
CODE_LENGTH = 6  # 31**6 ≈ 8.9e8 codes
NICKNAME_MAX = 40  # characters kept of a nickname
QUESTION_MAX = 200  # characters of a question id
PICK_MAX = 9  # answers are option indices 0..9
PLAN_MAX_BYTES = 256 * 1024  # a plan is read by every student on every poll: keep it small
CLIENT_MAX = 200  # characters of a client id kept for the join limit
CODE_TRIES = 20  # new codes drawn before giving up (a collision is ~1e-9 per open class)
UNAVAILABLE = "The class store cannot be reached right now: try again in a minute."  # StoreUnavailable's sentence
SEAT_CAP = 200  # seats of a class unless its teacher opens it with another cap
SEAT_CAP_MAX = 10_000  # the largest cap a class may be opened with
PAIR_TTL_S = 600  # a pairing code (a second teacher device) works once, for 10 minutes
PAIR_DIGITS = 6  # digits of a pairing code (typed on a phone: digits only)


class ClassNotFound(LookupError):
    """No class with this code: never opened, ended by its teacher or expired (12 h). ``code`` is
    the code as the caller typed it; the message names it literally."""

    def __init__(self, code: str):
        self.code = code
        super().__init__(
            f"No open class has the code “{code}”: it may be mistyped, ended by the teacher, "
            f"or expired ({CLASS_TTL_S // 3600} h after it was opened)."
        )


class NotTeacher(PermissionError):
    """The teacher key given is not this class's."""

    def __init__(self, code: str):
        super().__init__(f"That is not the teacher key of class {code}: only its teacher can do this.")


class NotSeated(PermissionError):
    """The student token given has no seat in this class."""

    def __init__(self, code: str):
        super().__init__(f"This browser has no seat in class {code}: join the class again with its code.")


class TooManyJoins(RuntimeError):
    """Too many failed join attempts (wrong codes) from one client within ``JOIN_WINDOW_S``; ``wait_s`` says how long
    (whole seconds, at least 1) until the next attempt is counted afresh."""

    def __init__(self, wait_s: float):
        self.wait_s = max(1, math.ceil(wait_s))
        super().__init__(
            f"Too many wrong class codes from here: wait {self.wait_s} s and try again (at most {JOIN_LIMIT} a minute)."
        )


class JoiningClosed(PermissionError):
    """The class exists but its teacher closed joining (``set_joining``)."""

    def __init__(self, code: str):
        self.code = code
        super().__init__(f"Class {code} is not taking new students: your teacher closed joining.")


class ClassFull(RuntimeError):
    """Every seat of the class is taken (``cap``: its seats, set when it was opened)."""

    def __init__(self, code: str, cap: int):
        self.code, self.cap = code, cap
        super().__init__(f"Class {code} is full ({cap} seat{'' if cap == 1 else 's'}).")


class StoreUnavailable(RuntimeError):
    """The class store's backend cannot be reached, read or written right now (a Redis server down,
    loading or read-only; an SQLite file locked, read-only or missing). Raised by every store method;
    the library's own error is ``__cause__`` (for the server's log), never in the message, which
    names no path or host."""

    def __init__(self):
        super().__init__(UNAVAILABLE)


@dataclass(frozen=True)
class Seat:
    """A student's place in a class: ``number`` 1, 2, 3 … in join order, ``token`` the secret that
    proves it (kept by that student's browser; the store keeps only its sha256)."""

    number: int
    token: str


@dataclass(frozen=True)
class RosterRow:
    """One line of the teacher's dashboard: seat ``number``, the ``nickname`` as typed ("" when none)
    and whether that student ``answered`` the question asked. Never a token."""

    number: int
    nickname: str
    answered: bool


@dataclass(frozen=True)
class ClassInfo:
    """A live class at a glance: ``students`` seated, its ``seat_cap`` and whether ``joining`` is open."""

    students: int
    seat_cap: int
    joining: bool


@dataclass(frozen=True)
class Pulse:
    """What the event stream polls (a few times a second per replica): the plan's ``version``, the
    ``students`` seated, and how many ``answered`` the plan's question (``question``: its id, None when
    the plan has none; ``round``: its round, 0 when none)."""

    version: int
    students: int
    answered: int
    question: str | None
    round: int


def normalize_code(text: str) -> str | None:
    """A class code as typed → its canonical form: strip, upper-case, drop spaces and dashes; None
    unless that leaves ``CODE_LENGTH`` characters of ``CODE_ALPHABET`` (so "abc-d2e" → "ABCD2E",
    while 0, O, 1, I and L never occur in a code)."""
    if not isinstance(text, str):
        return None
    code = text.strip().upper().replace(" ", "").replace("-", "")
    if len(code) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in code):
        return None
    return code


def new_code() -> str:
    """A random class code (``secrets.choice``); the store retries when it is taken."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def new_pair_code() -> str:
    """A random pairing code: ``PAIR_DIGITS`` digits, leading zeros kept ("004217")."""
    return f"{secrets.randbelow(10**PAIR_DIGITS):0{PAIR_DIGITS}d}"


def normalize_pair_code(text) -> str | None:
    """A pairing code as typed → its digits ("004 217" → "004217"); None unless ``PAIR_DIGITS`` digits."""
    if not isinstance(text, str):
        return None
    digits = text.strip().replace(" ", "").replace("-", "")
    return digits if len(digits) == PAIR_DIGITS and digits.isascii() and digits.isdigit() else None


def pair_refused(typed) -> ValueError:
    """The refusal of a pairing code that is not (or no longer) one of a live class."""
    return ValueError(
        f"That pairing code is unknown, used or expired: “{str(typed)[:40]}”. Make a new one on the teacher's first "
        f"device (a code works once, for {PAIR_TTL_S // 60} minutes)."
    )


def check_seat_cap(seat_cap) -> None:
    """ValueError unless ``seat_cap`` is a whole number 0..``SEAT_CAP_MAX``."""
    if isinstance(seat_cap, bool) or not isinstance(seat_cap, int) or not 0 <= seat_cap <= SEAT_CAP_MAX:
        raise ValueError(f"a class has 0 to {SEAT_CAP_MAX:,} seats, got {seat_cap!r:.60}")


def new_secret() -> str:
    """A teacher key or a seat token: 18 random bytes, URL-safe (24 characters)."""
    return secrets.token_urlsafe(18)


def digest(secret: str) -> str:
    """The sha256 (hex) a store keeps instead of a key or token."""
    return hashlib.sha256(str(secret).encode("utf-8", "surrogatepass")).hexdigest()


def same_digest(secret: str | None, stored: str | None) -> bool:
    """Whether ``secret`` hashes to ``stored``, compared in constant time."""
    return bool(secret) and bool(stored) and hmac.compare_digest(digest(secret), stored)


def expired(created: float, now: float) -> bool:
    """Whether a class opened at ``created`` is gone at ``now`` (both seconds)."""
    return created + CLASS_TTL_S <= now


def clean_nickname(nickname) -> str:
    """A nickname as stored: stripped, at most ``NICKNAME_MAX`` characters, otherwise literal (any
    Unicode or HTML; whoever shows it escapes it). None → "". ValueError for a non-string."""
    if nickname is None:
        return ""
    if not isinstance(nickname, str):
        raise ValueError(f"a nickname is text, got {type(nickname).__name__}")
    return nickname.strip()[:NICKNAME_MAX]


def clean_client(client) -> str:
    """A client id for the join limit (a per-browser id the routes give), clipped; "" means unknown."""
    return str(client or "")[:CLIENT_MAX]


def check_question(question, round) -> None:
    """ValueError unless ``question`` is a non-empty id of at most ``QUESTION_MAX`` characters and
    ``round`` a non-negative integer."""
    if not isinstance(question, str) or not 0 < len(question) <= QUESTION_MAX:
        raise ValueError(f"a question id is 1 to {QUESTION_MAX} characters of text, got {question!r:.60}")
    if isinstance(round, bool) or not isinstance(round, int) or round < 0:
        raise ValueError(f"a round is a whole number ≥ 0, got {round!r:.60}")


def check_pick(pick) -> None:
    """ValueError unless ``pick`` is an option index 0..``PICK_MAX``."""
    if isinstance(pick, bool) or not isinstance(pick, int) or not 0 <= pick <= PICK_MAX:
        raise ValueError(f"an answer is an option number from 0 to {PICK_MAX}, got {pick!r:.60}")


def check_options(n_options) -> None:
    """ValueError unless ``n_options`` is 1..``PICK_MAX`` + 1."""
    if isinstance(n_options, bool) or not isinstance(n_options, int) or not 1 <= n_options <= PICK_MAX + 1:
        raise ValueError(f"a question has 1 to {PICK_MAX + 1} options, got {n_options!r:.60}")


def tally_of(picks, n_options: int) -> list[int]:
    """Counts per option 0..n_options-1 of the stored ``picks`` (picks past the options are left out)."""
    counts = [0] * n_options
    for pick in picks:
        if 0 <= int(pick) < n_options:
            counts[int(pick)] += 1
    return counts
