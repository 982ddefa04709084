"""App test of the Practice page: right, a named mistake, unreadable input, new numbers in the URL."""

from streamlit.testing.v1 import AppTest

from bench.fresh_app import APP
from tests.helpers.app_util import click
from ui import practice as practice_ui


def practice(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    at.switch_page("app_pages/practice.py").run()
    assert not at.exception, at.exception
    return at


def markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_exercise_3_right_wrong_and_unreadable():
    """768 MiB is right; 1,536 MiB is named ("four requests, but the KV heads were not halved");
    `12 foo` gets the reader's message; the tally counts 2 checks, 1 right, 1 unreadable."""
    at = practice(ex="ch30-3", numbers="0")
    assert "**4 KV heads** and **4 equally long requests**" in markdown(at)
    at.text_input(key="practice.in.ch30-3.0.bytes").set_value("768 MiB")
    at.text_input(key="practice.in.ch30-3.0.mib").set_value("12 foo")
    click(at, "Check")
    text = markdown(at)
    assert ":green-badge[:material/check: right]" in text
    assert "Couldn't read `12 foo` as bytes: try `12 MiB` or `12` (a bare number is in MiB)." in text
    assert "1 checked · 1 right · 1 couldn't be read" in text
    at.text_input(key="practice.in.ch30-3.0.bytes").set_value("1,536 MiB")
    click(at, "Check")
    text = markdown(at)
    assert "You have four requests, but the KV heads were not halved" in text
    assert ":orange-badge[:material/lightbulb: KV heads not reduced]" in text
    assert any("KV heads not reduced × 1" in c.value for c in at.caption)
    assert any(e.label == "Worked solution" for e in at.expander)


def test_explain_part_shows_the_model_answer_after_an_attempt():
    """Exercise 4's explanation is not graded: after a Check the model answer (with the clip to 7) appears."""
    at = practice(ex="ch30-4", numbers="0")
    assert not any("Model answer" in i.value for i in at.info)
    at.text_area(key="practice.in.ch30-4.0.why").set_value("5 is <b>outside</b> the range")
    at.text_input(key="practice.in.ch30-4.0.err").set_value("0.25")
    click(at, "Check")
    assert any("Model answer" in i.value and "clips to 7" in i.value for i in at.info)
    assert "The clipped outlier treated as a rounding error" in markdown(at)


def test_new_numbers_go_into_the_address_and_a_link_reproduces_them():
    """New numbers writes ?numbers=N; opening that address shows the same question; hints come one by one."""
    at = practice(ex="ch30-1")
    before = markdown(at)
    click(at, "New numbers")
    value = at.query_params["numbers"]
    seed = int(value[0] if isinstance(value, list) else value)
    assert seed > 0 and at.session_state[practice_ui.PRACTICE_SEED] == seed
    after = markdown(at)
    assert after != before
    again = practice(ex="ch30-1", numbers=str(seed))
    assert markdown(again) == after
    click(again, "Hint 0/3")
    assert "TTFT = t₁ − a" in markdown(again)


def test_bad_link_parameters_are_ignored_with_a_note():
    """?ex=<script> and ?numbers=-3 fall back to the defaults, each with a warning quoting the text literally."""
    at = practice(ex="<script>x</script>", numbers="-3")
    notes = [w.value for w in at.warning]
    assert any("`<script>x</script>`" in n for n in notes) and any("`-3`" in n for n in notes)
    assert at.session_state[practice_ui.PRACTICE_EX] == "ch30-1"


def test_check_with_every_box_empty_says_so_and_counts_nothing():
    """Pressing Check before typing anything is answered ("Type at least one answer") and the tally stays at 0 checked;
    one typed answer and Check: no such warning."""
    at = practice(ex="ch30-3", numbers="0")
    click(at, "Check")
    assert any("Type at least one answer" in w.value for w in at.warning)
    assert "0 checked · 0 right · 0 couldn't be read" in markdown(at)
    at.text_input(key="practice.in.ch30-3.0.bytes").set_value("768 MiB")
    click(at, "Check")
    assert not any("Type at least one answer" in w.value for w in at.warning)
    assert "1 checked · 1 right" in markdown(at)


def test_an_emptied_box_loses_its_old_verdict():
    """`12 foo` and Check: the reader's message under the box; the box emptied and Check again: "Type at least one
    answer" and no verdict left under the empty box (a helper saw the old "Couldn't read" stay); the tally keeps
    the unreadable attempt it counted."""
    at = practice(ex="ch30-3", numbers="0")
    box = "practice.in.ch30-3.0.mib"
    at.text_input(key=box).set_value("12 foo")
    click(at, "Check")
    assert "Couldn't read `12 foo`" in markdown(at)
    at.text_input(key=box).set_value("")
    click(at, "Check")
    assert any("Type at least one answer" in w.value for w in at.warning)
    assert "`12 foo`" not in markdown(at) and "0 checked · 0 right · 1 couldn't be read" in markdown(at)
