"""A class's teachers (issue 49), on SQLite and on Redis: a one-time pairing code gives a second device
its own teacher key; every key of a class leads it, no other key does."""

import time

import pytest

from core.classroom.plan import Plan
from core.classroom.rules import PAIR_DIGITS, PAIR_TTL_S, ClassNotFound, NotTeacher

REFUSED = "That pairing code is unknown, used or expired"


def test_a_pairing_code_gives_a_second_device_its_own_key_once(store):
    """pair_code: 6 digits; redeem_pair: (the class code, a new key that leads the class); the same code
    redeemed again is refused, and the key from the first redeem keeps working."""
    code, key = store.open_class()
    pair = store.pair_code(code, key)
    assert len(pair) == PAIR_DIGITS == 6 and pair.isdigit()
    got_code, second = store.redeem_pair(pair)
    assert got_code == code and second not in (key, pair) and store.is_teacher(code, second)
    with pytest.raises(ValueError, match=REFUSED):
        store.redeem_pair(pair)
    assert store.publish(code, second, Plan(step=1)) == 1 and store.is_teacher(code, second)


def test_a_pairing_code_may_be_typed_with_spaces_and_dashes(store):
    """ "123 456" and "123-456" name the code "123456"."""
    code, key = store.open_class()
    pair = store.pair_code(code, key)
    assert store.redeem_pair(f" {pair[:3]} {pair[3:]} ")[0] == code
    pair = store.pair_code(code, key)
    assert store.redeem_pair(f"{pair[:3]}-{pair[3:]}")[0] == code


def test_a_pairing_code_expires_after_ten_minutes(store):
    """Made at t0: refused at t0 + PAIR_TTL_S (600 s), and used up by that try; another made at t0 still
    works at t0 + 599 s."""
    code, key = store.open_class()
    t0 = time.time()
    late, in_time = store.pair_code(code, key, now=t0), store.pair_code(code, key, now=t0)
    assert PAIR_TTL_S == 600
    with pytest.raises(ValueError, match=REFUSED):
        store.redeem_pair(late, now=t0 + PAIR_TTL_S)
    with pytest.raises(ValueError, match=REFUSED):
        store.redeem_pair(late, now=t0)
    assert store.redeem_pair(in_time, now=t0 + PAIR_TTL_S - 1)[0] == code


def test_a_wrong_or_malformed_pairing_code_is_refused_with_a_sentence(store):
    """A code no device was given, one of 5 or 7 digits, letters or None: ValueError naming what was typed;
    none of them uses up the real code."""
    code, key = store.open_class()
    pair = store.pair_code(code, key)
    wrong = f"{(int(pair) + 1) % 10**PAIR_DIGITS:0{PAIR_DIGITS}d}"
    for bad in (wrong, pair[:5], pair + "1", "abcdef", "", None):
        with pytest.raises(ValueError, match=REFUSED) as refused:
            store.redeem_pair(bad)
        assert str(bad)[:5] in str(refused.value) and "teacher's first device" in str(refused.value)
    assert store.redeem_pair(pair)[0] == code


def test_a_pairing_code_of_an_ended_class_is_refused(store):
    """A pairing code made before the class ended gives no key afterwards."""
    code, key = store.open_class()
    pair = store.pair_code(code, key)
    store.end(code, key)
    with pytest.raises(ValueError, match=REFUSED):
        store.redeem_pair(pair)


def test_only_a_teacher_of_a_live_class_makes_a_pairing_code(store):
    """pair_code with a student's token, another class's key or no key is NotTeacher; on a code of no
    class ClassNotFound."""
    code, _ = store.open_class()
    other, other_key = store.open_class()
    student = store.join(code)
    for wrong in (student.token, other_key, "", None):
        with pytest.raises(NotTeacher):
            store.pair_code(code, wrong)
    store.end(other, other_key)
    with pytest.raises(ClassNotFound):
        store.pair_code(other, other_key)


def test_every_teacher_key_of_a_class_leads_it_and_no_other_does(store):
    """Three keys (the opener's and two paired devices'): each publishes (versions 1, 2, 3), reads the
    roster, closes joining; a wrong key, another class's or a pairing code itself is NotTeacher; ending
    the class with one key ends it for all three."""
    code, first = store.open_class()
    other, other_key = store.open_class()
    keys = [first, *(store.redeem_pair(store.pair_code(code, k))[1] for k in (first, first))]
    assert len(set(keys)) == 3
    assert [store.publish(code, k, Plan(step=i)) for i, k in enumerate(keys)] == [1, 2, 3]
    store.join(code, "Ann")
    for k in keys:
        assert store.is_teacher(code, k) and [r.nickname for r in store.roster(code, k, "q:1", 1)] == ["Ann"]
        store.set_joining(code, k, True)
    pair = store.pair_code(code, keys[1])
    for wrong in ("guess", other_key, keys[1] + "x", pair):
        assert not store.is_teacher(code, wrong)
        with pytest.raises(NotTeacher):
            store.publish(code, wrong, Plan(step=9))
    assert not store.is_teacher(other, keys[1])
    store.end(code, keys[2])
    assert not any(store.is_teacher(code, k) for k in keys) and store.plan(code) is None
    assert store.plan(other) == (0, Plan())
