"""App tests of the decode stage: predict then reveal, share links, the end token."""

import pytest
from streamlit.testing.v1 import AppTest

from bench.fresh_app import APP, new_app
from core.decode import settings as decode_settings
from core.model.shipped import load_shipped_tokenizer
from core.model.tokenizer import encode, end_token_id
from tests.helpers.app_util import attention_rows, click, stage
from ui.decode import actions
from ui.decode import keys as decode_keys

PROMPT_LEN = len(encode(load_shipped_tokenizer(), decode_settings.DEFAULT_PROMPT))


def _answers(at):
    return [b for b in at.button if b.key and b.key.startswith(f"{decode_keys.STAGE_ANSWER}.")]


def test_predict_asks_then_reveals_then_asks_again():
    """Predict mode: Prefill puts a question up and holds the step back; picking then Step reveals it
    (one row, the pick counted); the next Step asks the next question without stepping."""
    at = new_app()
    at.toggle(key=decode_keys.DECODE_PREDICT).set_value(True).run()
    click(at, "Prefill")
    q = at.session_state[decode_keys.DECODE_QUESTION]
    assert q is not None and q.kind == "token" and len(_answers(at)) == 5
    assert attention_rows(at) == PROMPT_LEN  # the step is held back
    _answers(at)[q.answer].click().run()
    click(at, "Step ▸")
    assert attention_rows(at) == PROMPT_LEN + 1 and stage(at)["explainer_attention"]["kind"] == "row"
    tally = at.session_state[decode_keys.DECODE_TALLY]
    assert (tally.asked, tally.answered, tally.right) == (1, 1, 1)
    assert (
        at.session_state[decode_keys.DECODE_QUESTION] is None
        and at.session_state[decode_keys.DECODE_REVEALED][1] == q.answer
    )
    click(at, "Step ▸")
    assert at.session_state[decode_keys.DECODE_QUESTION].kind == "positions" and attention_rows(at) == PROMPT_LEN + 1
    # A wrong pick: the reveal names its mistake before the rule (T = P + 1 cached, T + 1 after this step).
    q = at.session_state[decode_keys.DECODE_QUESTION]
    _answers(at)[q.options.index(f"{PROMPT_LEN + 1:,}")].click().run()
    click(at, "Step ▸")
    [why] = [h.proto.body for h in at.get("html") if "stage-why" in h.proto.body]
    assert f"Not this time.</strong> {PROMPT_LEN + 1} is the count before this step" in why


def test_predict_first_left_on_without_its_callback_asks_on_the_next_run():
    """The switch's callback cut short (a class teacher's poll ran it and the switch's own rerun stopped that
    run; ``question.settle``): Predict first on, a request, nothing asked. The next run asks, and holds the
    step back; at the end token it asks nothing and says nothing again."""
    at = new_app()
    click(at, "Prefill")
    at.session_state[decode_keys.DECODE_PREDICT] = True  # the switch's value, without its callback
    at.run()
    q = at.session_state[decode_keys.DECODE_QUESTION]
    assert q is not None and len(_answers(at)) == 5 and attention_rows(at) == PROMPT_LEN

    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"step": "200"})
    at.run()  # the default prompt's request stops at its end token
    at.session_state[decode_keys.DECODE_PREDICT] = True
    at.run()
    assert at.session_state[decode_keys.DECODE_QUESTION] is None
    assert not at.toast  # the end token was said when the request reached it, not again (the link's note aside)


def test_a_share_link_replays_the_request_with_the_mean_over_heads():
    """?step=4&head=mean&seed=3&strategy=sample opens the request at step 4 with the mean over heads."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"step": "4", "head": "mean", "seed": "3", "strategy": "sample"})
    at.run()
    sess = at.session_state[decode_keys.DECODE_SESSION]
    assert not at.exception and sess.n_steps == 4 and sess.sampling.seed == 3
    assert at.session_state[decode_keys.DECODE_HEAD] == decode_settings.MEAN_HEADS
    assert "mean over heads" in stage(at)["explainer_attention"]["title"]


@pytest.mark.parametrize("predict", [{}, {"predict": "1"}])
def test_a_link_asking_past_the_end_token_says_where_the_request_stopped(predict):
    """?step=200 on the default prompt: the greedy request reaches its end token first, the view
    stops there, and a note that stays until closed says the link asked for 200 steps and how many
    were taken; with predict=1 too (there the question's "end token" note replaced it)."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"step": "200", **predict})
    at.run()
    sess = at.session_state[decode_keys.DECODE_SESSION]
    assert not at.exception and 0 < sess.n_steps < 200
    assert sess.pending == end_token_id(load_shipped_tokenizer())  # stopped by the end token, not the window
    note = next(t for t in at.toast if "The link asked for 200 steps" in t.value)
    assert f"The link asked for 200 steps; this request stopped after {sess.n_steps}." in note.value
    assert "end token" in note.value
    assert note.proto.duration == 0  # "infinite": it stays until closed (a 10 s toast was gone before anyone read it)


def test_a_malformed_link_parameter_is_reported_in_the_main_area():
    """A bad parameter is named where the class looks (the main area), and the rest still apply."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"layer": "nine", "seed": "5"})
    at.run()
    assert any("layer=" in w.value for w in at.main.warning)
    assert at.session_state[decode_keys.DECODE_SEED] == 5


def test_the_end_token_can_be_stepped_past_when_asked():
    """A prompt whose first chosen token is the end token stops; 'Continue past the end token' lets it step on."""
    tok = load_shipped_tokenizer()
    at = new_app()
    at.text_area(key=decode_keys.DECODE_PROMPT).set_value("Thank you! Goodbye.").run()
    click(at, "Prefill")
    sess = at.session_state[decode_keys.DECODE_SESSION]
    assert sess.pending == end_token_id(tok)
    line = at.code[0].value  # the text so far, beside Step: the chosen end token shown whole, even
    assert line.endswith("Goodbye.«<|endoftext|>»")  # when the line is squeezed; «» not ⟨⟩ (read as parentheses)
    click(at, "Step ▸")
    assert any("end token" in i.value for i in [*at.info, *at.toast]) and sess.n_steps == 0
    click(at, "Continue past the end token")
    click(at, "Step ▸")
    assert at.session_state[decode_keys.DECODE_SESSION].n_steps == 1


def test_tables_switch_shows_the_stage_as_tables_with_an_uncached_pass_s_numbers():
    """The controls row's *Tables* switch: below the stage, the newest attention row and the
    next-token bars as tables. Checked against a full forward pass without the cache over the same
    tokens: the newest row's shares (layer 3, head 0) and the softmax of the last logits."""
    import torch

    from core.model.shipped import load_model

    at = new_app()
    click(at, "Prefill")
    click(at, "Step ▸")
    click(at, "Step ▸")
    assert len(at.dataframe) == 0
    at.toggle(key=decode_keys.DECODE_TABLES).set_value(True).run()
    assert not at.exception and len(at.dataframe) == 2
    row, bars = (d.value for d in at.dataframe)
    sess = at.session_state[decode_keys.DECODE_SESSION]
    with torch.no_grad():
        logits, att = load_model()(torch.tensor([sess.consumed]))
    shares = att[3][0, 0, -1]
    assert list(row["key position"]) == list(range(len(sess.consumed)))
    assert max(abs(a - float(b)) for a, b in zip(row.iloc[:, 2], shares, strict=True)) < 6e-5
    probs = torch.softmax(logits[0, -1].double(), -1)
    top = torch.topk(probs, 10)
    assert max(abs(float(p) - q) for p, q in zip(top.values, bars["probability"], strict=True)) <= 6e-5
    assert list(bars["chosen"]).index("yes") == 0 and int(top.indices[0]) == sess.pending


def test_a_step_pressed_while_playing_consumes_one_token():
    """Step (→ or the button) while Play runs: that rerun steps once. Play's own step in the same
    rerun made one press consume two tokens (a teacher's rehearsal: 53 → 55 rows)."""
    at = new_app()
    click(at, "Prefill")
    at.session_state[decode_keys.DECODE_PLAYING] = True
    before = at.session_state[decode_keys.DECODE_SESSION].n_steps
    click(at, "Step ▸")
    assert at.session_state[decode_keys.DECODE_SESSION].n_steps == before + 1
    assert attention_rows(at) == PROMPT_LEN + before + 1


def test_play_steps_at_most_once_per_pace_whatever_reruns_the_page():
    """While playing, a full run of the page (a switch like *Tables*, the layer) also runs the stage:
    Play steps at most once per pace, so two runs in quick succession step once."""
    at = new_app()
    click(at, "Prefill")
    at.session_state[decode_keys.DECODE_PLAYING] = True
    at.run()
    at.toggle(key=decode_keys.DECODE_TABLES).set_value(True).run()
    assert not at.exception and at.session_state[decode_keys.DECODE_SESSION].n_steps == 1


def test_putting_the_link_in_the_address_bar_says_so_on_screen():
    """The share button only changed the address bar, so on a full-screen projector nothing seemed to
    happen (a teacher's report): the page now says where the link is and shows its query to copy,
    for this request at this step only."""
    import urllib.parse

    at = new_app()
    click(at, "Prefill")
    click(at, "Step ▸")
    at.session_state["decode.more"] = True  # open "Share this request"
    at.run()
    click(at, "Put a link to this request in the address bar")
    query = "?" + urllib.parse.urlencode(dict(at.query_params))
    assert any("address bar now holds the link to this request at step 1" in c.value for c in at.caption)
    assert [c.value for c in at.code if c.value.startswith("?")] == [query] and "step=1" in query
    click(at, "Step ▸")  # the link in the bar is now a step behind: no longer claimed as this request's
    assert not any("address bar now holds" in c.value for c in at.caption)


def test_a_link_after_a_reused_prefill_says_why_its_counter_differs():
    """A second Prefill of the same prompt keeps P − 1 cached positions and computes only the last row,
    so the teacher's work counter counts P scores for it where the link's fresh Prefill counts
    P(P+1)/2 (a helper saw 1,159 against 2,485 and was not told why). The caption says so, and the
    students' request really counts (P − 1)P/2 more scores (1,275 for the default prompt)."""
    import urllib.parse

    at = new_app()
    click(at, "Prefill")
    click(at, "Step ▸")
    click(at, "Prefill")  # the same prompt again: its cache is reused
    click(at, "Step ▸")
    at.session_state["decode.more"] = True
    at.run()
    click(at, "Put a link to this request in the address bar")
    teacher = at.session_state[decode_keys.DECODE_SESSION]
    keep = PROMPT_LEN - 1
    assert teacher.reused == keep
    assert any(f"kept {keep} cached positions from the request before it" in c.value for c in at.caption)
    students = AppTest.from_file(APP, default_timeout=90)
    for k, v in urllib.parse.parse_qsl(next(c.value for c in at.code if c.value.startswith("?"))[1:]):
        students.query_params[k] = v
    students.run()
    fresh = students.session_state[decode_keys.DECODE_SESSION]
    assert fresh.outputs == teacher.outputs and fresh.reused == 0
    per = fresh.scores_cached - teacher.scores_cached
    assert per == keep * (keep + 1) // 2  # the counter counts per layer and head
    click(students, "Step ▸")
    students.session_state["decode.more"] = True
    students.run()
    click(students, "Put a link to this request in the address bar")
    assert not any("cached positions from the request before it" in c.value for c in students.caption)


def test_play_keeps_its_pace_when_the_browsers_ticks_jitter():
    """The browser asks for a rerun every pace by its own clock; they reach the server up to 10 % of a
    pace early or late. Each must step (a rule of "0.9 pace since the last step" skipped every early
    one after a late one: half of them here), while a rerun of the whole
    page half a pace after a step (a switch) does not step, and a late start restarts the grid."""
    pace, next_due, steps = 0.5, 0.0, 0
    ticks = [k * pace + (0.05 if k % 2 else -0.05) for k in range(1, 21)]
    for now in ticks:
        due, next_due = actions.play_schedule(now, next_due, pace)
        steps += due
    assert steps == 20
    assert actions.play_schedule(ticks[-1] + 0.5 * pace, next_due, pace)[0] is False  # a switch between ticks
    late = ticks[-1] + 10.0  # Play pressed again long after a pause: steps now, next one a pace later
    assert actions.play_schedule(late, next_due, pace) == (True, late + pace)
    last, old_steps = 0.0, 0  # the rule it replaces, on the same ticks: 10 steps in 20 ticks
    for now in ticks:
        if now - last >= 0.9 * pace:
            old_steps, last = old_steps + 1, now
    assert old_steps == 10


@pytest.mark.parametrize(
    "opened_with",
    [{"present": "1"}, {"lesson": "fifteen-minutes", "stop": "2", "teacher": "1", "present": "1"}],
)
def test_the_link_in_the_address_bar_is_only_the_share_link(opened_with):
    """The page says to copy the link from the address bar; in presenter mode, or in a lesson's teacher
    view, the keepers of those modes wrote present=1 (and lesson, stop, teacher=1) back beside it in the
    same run, so students would have opened the teacher's presenter mode and speaker notes. The bar holds
    exactly the query shown under the button."""
    import urllib.parse

    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params.update(opened_with)
    at.run()
    if "lesson" not in opened_with:
        click(at, "Prefill")
    at.session_state["decode.more"] = True
    at.run()
    click(at, "Put a link to this request in the address bar")
    [shown] = [c.value for c in at.code if c.value.startswith("?")]
    assert dict(at.query_params) == dict(urllib.parse.parse_qsl(shown[1:]))
    assert not {"present", "lesson", "teacher"} & set(at.query_params)


def test_play_in_predict_mode_says_it_turns_predicting_off():
    """Play steps on its own, so it turns Predict first off; it did so silently, the open question gone. Now
    it says so, and the switch is off and no question is left on screen."""
    at = new_app()
    at.toggle(key=decode_keys.DECODE_PREDICT).set_value(True).run()
    click(at, "Prefill")
    assert at.session_state[decode_keys.DECODE_QUESTION] is not None
    play = next(b for b in at.button if b.label.startswith("Play"))
    play.click().run()
    said = " ".join(t.value for t in [*at.toast, *at.info])
    assert "Predict first is off while Play steps on its own: the open question was put away" in said
    assert (
        at.session_state[decode_keys.DECODE_PREDICT] is False and at.session_state[decode_keys.DECODE_QUESTION] is None
    )
