"""Practice attempts as records kept in the student's browser: read back strictly, checked again, merged once."""

import math

from core.practice import catalogue, exercises, saved
from core.practice.answers import MAX_TYPED
from core.practice.tally import Tally

EX1 = catalogue.make("ch30-1", 0)
TTFT = next(p for p in EX1.parts if p.key == "ttft")


def record(typed: str, at: float, ex: str = "ch30-1", numbers: int = 0, part: str = "ttft") -> dict:
    return {"ex": ex, "numbers": numbers, "part": part, "typed": typed, "at": at}


def test_replay_checks_every_record_again():
    """Ch. 30 exercise 1's TTFT is 110 − 10 = 100 ms: "110 ms" replays as the named mistake (timed from clock
    zero), "100 ms" as right; the tally counts two checks, one right, one mistake, as the session did."""
    tally = saved.replay([record("110 ms", 1.0), record("100 ms", 2.0)])
    assert (tally.checked, tally.right, sum(tally.mistakes.values())) == (2, 1, 1)
    assert [a.status for a in tally.attempts] == ["mistake", "right"] and tally.last(EX1, "ttft").typed == "100 ms"


def test_records_round_trip_through_a_tally():
    """A session's attempts, written as records and replayed, give the same attempts, verdicts and times."""
    t = Tally()
    for typed, at in (("110 ms", 10.5), ("0.1 s", 11.25)):
        t.record(EX1, TTFT, typed, exercises.check(TTFT, typed), at=at)
    again = saved.replay(saved.to_records(t))
    assert again.attempts == t.attempts and (again.checked, again.right) == (t.checked, t.right) == (2, 1)


def test_what_a_browser_hands_back_is_read_strictly():
    """Only well-formed records of real exercises, numbers and parts survive; a stored verdict is not a field (a
    record claiming "right" is dropped), and nothing malformed raises."""
    good = record("110 ms", 5.0)
    bad = [
        "110 ms",
        None,
        {**good, "status": "right"},
        {k: v for k, v in good.items() if k != "at"},
        record("110 ms", 5.0, ex="ch99-9"),
        record("110 ms", 5.0, part="nope"),
        record("110 ms", 5.0, numbers=True),
        record("110 ms", 5.0, numbers=-1),
        record("110 ms", 5.0, numbers=catalogue.MAX_SEED + 1),
        record("110 ms", 5.0, numbers="3"),
        record("", 5.0),
        record("   ", 5.0),
        record("1" * (MAX_TYPED + 1), 5.0),
        record("110 ms", math.nan),
        record("110 ms", math.inf),
        record("110 ms", -1.0),
        record("110 ms", "5"),
        record(110, 5.0),
    ]
    assert saved.from_browser(bad + [good]) == [good]
    assert saved.from_browser({"records": [good]}) == [] and saved.from_browser("[]") == []


def test_at_most_the_newest_records_are_kept():
    """However many a browser hands back, the newest MAX_RECORDS (300) are read, oldest first."""
    many = [record(f"{n} ms", float(n)) for n in range(10_000)]
    kept = saved.from_browser(many)
    assert len(kept) == saved.MAX_RECORDS == 300 and [r["at"] for r in kept] == [float(n) for n in range(9_700, 10_000)]


def test_merging_keeps_each_record_once_in_time_order():
    """This session's records and the browser's, overlapping: each once, ordered by time; holds_all tells whether a
    tally already has them."""
    a, b, c = record("110 ms", 1.0), record("100 ms", 3.0), record("10", 2.0, ex="ch30-2", part="prefill")
    merged = saved.merge([a, b], [c, a])
    assert merged == [a, c, b]
    tally = saved.replay(merged)
    assert saved.holds_all(tally, [c, a]) and not saved.holds_all(saved.replay([a]), [c])
    assert tally.attempted(catalogue.make("ch30-2", 0)) and tally.checked == 3
