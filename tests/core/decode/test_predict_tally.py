"""The prediction tally as the stage says it (issue 37, item 6): a reveal nobody answered is not a wrong answer."""

from core.decode.predict import Question, Tally

Q = Question(kind="token", text="Which token?", options=("a", "b", "c"), answer=1, explain="")


def test_reveals_without_an_answer_are_not_counted_wrong():
    """Six reveals, none answered (a class answering aloud): "6 revealed, not answered", never "0 right of 6"."""
    tally = Tally()
    for _ in range(6):
        tally.record(Q, None)
    assert tally.summary() == "6 revealed, not answered"
    assert "0 right" not in tally.summary()


def test_answered_and_unanswered_are_said_apart():
    """Two right, one wrong, two unanswered: "2 right of 3 answered, 2 not answered"."""
    tally = Tally()
    for pick in (1, 1, 0, None, None):
        tally.record(Q, pick)
    assert tally.summary() == "2 right of 3 answered, 2 not answered"


def test_all_answered_and_nothing_yet():
    """Every reveal answered: no "not answered"; nothing revealed yet: "none yet"."""
    tally = Tally()
    assert tally.summary() == "none yet"
    tally.record(Q, 1)
    tally.record(Q, 2)
    assert tally.summary() == "1 right of 2"
