"""Joining a class (issue 49), on SQLite and on Redis: the right code always seats a student (unless
joining is closed or the class is full), whatever that browser's wrong codes; only wrong codes count,
per client; the seat cap; closing and opening joining; ``info``."""

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from core.classroom.redis_store import RedisStore
from core.classroom.rules import (
    JOIN_LIMIT,
    JOIN_WINDOW_S,
    SEAT_CAP,
    ClassFull,
    ClassInfo,
    ClassNotFound,
    JoiningClosed,
    NotSeated,
    NotTeacher,
    TooManyJoins,
    new_code,
)
from core.classroom.sqlite_store import SqliteStore


def _wrong_codes(code: str, n: int) -> list[str]:
    """``n`` codes of the right shape that are not ``code`` (nor, but for a ~1e-9 chance, any class's)."""
    out = []
    while len(out) < n:
        if (c := new_code()) != code:
            out.append(c)
    return out


def test_the_right_code_joins_after_200_wrong_codes_from_the_same_client(store):
    """200 wrong codes from one browser: the first 20 are ClassNotFound, the 180 after TooManyJoins (with
    the seconds to wait, ≤ 60); the right code from that browser waits too until the window passes, then seats
    it, and a second browser's first wrong code is a plain ClassNotFound and its right code a seat."""
    code, _ = store.open_class()
    t0 = time.time()
    refused = []
    for i, wrong in enumerate(_wrong_codes(code, 200)):
        with pytest.raises((ClassNotFound, TooManyJoins)) as got:
            store.join(wrong, client="browser-1", now=t0 + i * 0.01)
        refused.append(type(got.value))
    assert refused == [ClassNotFound] * JOIN_LIMIT + [TooManyJoins] * (200 - JOIN_LIMIT)
    assert 0 < got.value.wait_s <= JOIN_WINDOW_S and f"wait {got.value.wait_s} s" in str(got.value)
    with pytest.raises(TooManyJoins):  # over its limit, the right code waits too: no guess is confirmed
        store.join(code, "Ann", client="browser-1", now=t0 + 2)
    assert store.info(code).students == 0
    if isinstance(store, RedisStore):
        store.r.expire("join:browser-1", 0)  # the window ends on Redis's own clock: its key's TTL, run out here
    assert store.join(code, "Ann", client="browser-1", now=t0 + JOIN_WINDOW_S + 1).number == 1
    assert store.join(code.lower(), client="browser-1", now=t0 + JOIN_WINDOW_S + 1).number == 1  # one seat a browser
    with pytest.raises(ClassNotFound):
        store.join(_wrong_codes(code, 1)[0], client="browser-2", now=t0 + 2)
    assert store.join(code, client="browser-2", now=t0 + 2).number == 2


def test_a_whole_class_joins_and_an_unknown_client_is_never_limited(store):
    """40 browsers (one school address is no client: a client is a browser's id) all seat; 30 wrong codes with no
    client ("") are each ClassNotFound."""
    code, _ = store.open_class()
    assert [store.join(code, client=f"browser-{i}").number for i in range(40)] == list(range(1, 41))
    for wrong in _wrong_codes(code, 30):
        with pytest.raises(ClassNotFound):
            store.join(wrong)


def test_a_clients_wrong_codes_count_afresh_after_the_window(tmp_path):
    """SQLite (the window on the caller's clock): the 21st wrong code within a minute is refused; one
    JOIN_WINDOW_S after the first it is a plain ClassNotFound again. (Redis ends the window itself: the
    key's TTL, checked in test_the_right_code_joins… through wait_s.)"""
    store = SqliteStore(tmp_path / "classes.db")
    t0 = time.time()
    for i in range(JOIN_LIMIT):
        with pytest.raises(ClassNotFound):
            store.join("AAAAAA", client="b", now=t0 + i)
    with pytest.raises(TooManyJoins):
        store.join("AAAAAA", client="b", now=t0 + JOIN_LIMIT)
    with pytest.raises(ClassNotFound):
        store.join("AAAAAA", client="b", now=t0 + JOIN_WINDOW_S)
    store.close()


def test_the_seat_cap_refuses_the_next_student_and_counts_no_failure(store):
    """A class of 3 seats: seats 1..3, then ClassFull ("full (3 seats)") 25 times from one client, which
    are not wrong codes: that client's next wrong code is still ClassNotFound. Seated students stay."""
    code, _ = store.open_class(seat_cap=3)
    seats = [store.join(code, client=f"c{i}") for i in range(3)]
    assert [s.number for s in seats] == [1, 2, 3]
    for _ in range(JOIN_LIMIT + 5):
        with pytest.raises(ClassFull, match=rf"^Class {code} is full \(3 seats\)\.$"):
            store.join(code, client="d")
    with pytest.raises(ClassNotFound):
        store.join(_wrong_codes(code, 1)[0], client="d")
    assert store.info(code) == ClassInfo(students=3, seat_cap=3, joining=True) and store.students(code) == 3
    assert [store.seat(code, s.token) for s in seats] == [1, 2, 3]


def test_the_default_cap_seats_200_and_refuses_the_201st(store):
    """Opened without a cap: 200 students join (seats 1..200) and the 201st gets ClassFull (200 seats)."""
    code, _ = store.open_class()
    assert SEAT_CAP == 200 and store.info(code) == ClassInfo(0, 200, True)
    assert [store.join(code).number for _ in range(200)] == list(range(1, 201))
    with pytest.raises(ClassFull, match=r"full \(200 seats\)") as full:
        store.join(code)
    assert full.value.cap == 200 and store.students(code) == 200


def test_forty_students_at_once_fill_a_class_of_25_exactly(store):
    """40 joins from 40 threads on a cap of 25: 25 seats numbered 1..25, 15 ClassFull, 25 students."""
    code, _ = store.open_class(seat_cap=25)

    def one(i):
        try:
            return store.join(code, f"s{i}").number
        except ClassFull:
            return None

    with ThreadPoolExecutor(40) as pool:
        got = list(pool.map(one, range(40)))
    assert sorted(n for n in got if n is not None) == list(range(1, 26)) and got.count(None) == 15
    assert store.students(code) == 25 == store.info(code).students


def test_a_seat_cap_is_a_whole_number_up_to_ten_thousand(store):
    """Caps -1, 10 001, True, 2.0 and "5" are refused (ValueError); 0 opens a class nobody can join; 10 000 opens."""
    for bad in (-1, 10_001, True, 2.0, "5"):
        with pytest.raises(ValueError, match="0 to 10,000 seats"):
            store.open_class(seat_cap=bad)
    empty, _ = store.open_class(seat_cap=0)
    with pytest.raises(ClassFull, match=r"full \(0 seats\)"):
        store.join(empty)
    big, _ = store.open_class(seat_cap=10_000)
    assert store.info(big) == ClassInfo(0, 10_000, True)


def test_closing_joining_refuses_new_students_and_keeps_seated_ones(store):
    """Joining closed: a new student gets JoiningClosed (the teacher's sentence), counted as no wrong code;
    seated students keep their seats and answer; opened again, the next student gets the next seat."""
    code, key = store.open_class()
    seated = store.join(code, "Ann")
    store.set_joining(code.lower(), key, False)
    assert store.info(code) == ClassInfo(1, 200, False)
    for _ in range(JOIN_LIMIT + 1):
        with pytest.raises(JoiningClosed) as closed:
            store.join(code, client="late")
    assert str(closed.value) == f"Class {code} is not taking new students: your teacher closed joining."
    assert store.seat(code, seated.token) == 1 and store.answer(code, seated.token, "q:1", 1, 0)
    store.set_joining(code, key, True)
    assert store.join(code, client="late").number == 2 and store.info(code) == ClassInfo(2, 200, True)


def test_only_a_teacher_of_a_live_class_opens_or_closes_joining(store):
    """set_joining with a wrong key is NotTeacher, on an unknown code ClassNotFound; neither changes it."""
    code, _ = store.open_class()
    _, other_key = store.open_class()
    for wrong in ("", "guess", other_key, None):
        with pytest.raises(NotTeacher):
            store.set_joining(code, wrong, False)
    with pytest.raises(ClassNotFound):
        store.set_joining(_wrong_codes(code, 1)[0], other_key, False)
    assert store.info(code).joining is True


def test_info_is_none_for_no_live_class(store):
    """info: None for a code of no class, an ended class and one opened 12 h ago."""
    code, key = store.open_class()
    old, _ = store.open_class(now=time.time() - 12 * 3600 - 1)
    store.end(code, key)
    assert store.info(code) is None and store.info(old) is None and store.info("not a code") is None


def test_one_browser_holds_one_seat_and_gets_it_back_under_a_new_token(store):
    """Issue 55 item 2: 30 joins from one browser are one seat (a script keeping its cookie takes one). Each join
    gives the same number under a new token, the old token stops working and the nickname is the latest; the
    browser gets its seat back with joining closed (a student whose seat cookie was lost), while a new browser
    does not."""
    code, key = store.open_class()
    seats = [store.join(code, f"n{i}", client="browser-1") for i in range(30)]
    assert {s.number for s in seats} == {1} and store.students(code) == 1 == store.info(code).students
    assert store.seat(code, seats[0].token) is None and store.seat(code, seats[-1].token) == 1
    assert [(r.number, r.nickname) for r in store.roster(code, key, "q", 0)] == [(1, "n29")]
    store.set_joining(code, key, False)
    again = store.join(code, "Ann", client="browser-1")
    assert again.number == 1 and store.seat(code, again.token) == 1 and store.seat(code, seats[-1].token) is None
    with pytest.raises(JoiningClosed):
        store.join(code, client="browser-2")


def test_the_teacher_removes_a_seat_and_its_place_is_free_again(store):
    """A class of 2 seats, full: the teacher removes seat 1. Its token no longer answers or seats, its answer no
    longer counts, the roster and the count drop it, and a third browser joins as seat 3 (numbers are never given
    twice, so no answer is inherited). Removing it again, or a seat never given, is False; a wrong key NotTeacher."""
    code, key = store.open_class(seat_cap=2)
    ann, bo = store.join(code, "Ann", client="a"), store.join(code, "Bo", client="b")
    store.answer(code, ann.token, "q1", 0, 2)
    store.answer(code, bo.token, "q1", 0, 1)
    with pytest.raises(ClassFull):
        store.join(code, client="c")
    with pytest.raises(NotTeacher):
        store.remove_seat(code, "forged", 1)
    assert store.remove_seat(code, key, 1) is True
    assert store.remove_seat(code, key, 1) is False and store.remove_seat(code, key, 7) is False
    assert store.seat(code, ann.token) is None and store.answered(code, "q1", 0) == 1
    assert store.tally(code, "q1", 0, 3) == [0, 1, 0] and store.pulse(code).students == 1 == store.students(code)
    with pytest.raises(NotSeated):
        store.answer(code, ann.token, "q1", 1, 0)
    assert [r.number for r in store.roster(code, key, "q1", 0)] == [2]
    assert store.join(code, "Cy", client="c").number == 3 and store.info(code).students == 2
    with pytest.raises(ClassFull):  # removed: the browser holds no seat any more, it would be a new student
        store.join(code, "Ann again", client="a")
