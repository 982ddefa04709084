"""App tests of lesson mode (ui/lesson/): each stop's settings on its page, the lesson link, the
teacher view, refused lesson files and links, and the handout holding the learner's own work."""

import html
import re

import pytest
from streamlit.testing.v1 import AppTest

from bench.fresh_app import APP
from core.decode import settings as decode_settings
from core.lesson.stops import SHIPPED_DIR
from core.model import shipped as assets
from core.model.tokenizer import encode
from tests.helpers.app_util import attention_rows
from ui import handout
from ui.decode import keys as decode_keys
from ui.lesson import keys as lesson_keys

SHIPPED = (SHIPPED_DIR / "fifteen-minutes.toml").read_text(encoding="utf-8")


def app(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def press(at: AppTest, key: str) -> AppTest:
    at.button(key=key).click().run()
    assert not at.exception, at.exception
    return at


def texts(at: AppTest) -> str:
    return "\n".join([t.value for t in at.text] + [m.value for m in at.markdown])


def heading(at: AppTest) -> str:
    return at.title[0].value


def bar_line(at: AppTest) -> str:
    """The bar's title line (ui/lesson/draw.py draws the bar's texts as escaped HTML in a markdown element)."""
    lines = [html.unescape(re.sub(r"<[^>]+>", "", m.value)) for m in at.markdown if 'class="lesson-text"' in m.value]
    return next(line for line in lines if line.startswith("Stop "))


def test_each_stop_opens_its_page_with_its_settings():
    """Walking the shipped lesson with → puts each page in the stop's state, whatever the learner
    had set before: the decode request replayed to step 11 on the default prompt (62 positions), the
    bill with 1 layer and head up to 10,000 tokens, Llama-3-8B's 1 GiB, the ruler's outlier 8,
    Ch. 30's trace, exercise 1 with the chapter's numbers, then the two chapters' summaries."""
    at = app()
    at.session_state[decode_keys.DECODE_PROMPT] = "Something else entirely"
    at.session_state["cost.layers"] = 4  # the learner's own choices before the lesson
    at.session_state["quant.values"] = "1, 2, 3"
    at.sidebar.button[0].click().run()  # Start this lesson (the shipped one is preselected)
    assert heading(at) == "The worked example" and bar_line(at).startswith("Stop 1 of 9 · One new row")
    assert at.toggle(key="worked.scaled").value is False
    # The stop asks before it shows: on's scores are there, its shares (0.6103 …) and the grid are not yet.
    assert (
        "q_on · k_cat = 2 × 1 + 1 × 1 = **3**" in texts(at) and "0.6103" not in texts(at) and not at.get("plotly_chart")
    )
    next(b for b in at.button if b.label == "Reveal the shares").click().run()
    assert "**0.6103**" in texts(at) and len(at.get("plotly_chart")) == 1

    press(at, "lesson.next")
    tok = assets.load_shipped_tokenizer()
    n_prompt = len(encode(tok, decode_settings.DEFAULT_PROMPT))
    sess = at.session_state[decode_keys.DECODE_SESSION]
    assert heading(at) == "Prefill & decode" and sess.n_steps == 11
    assert sess.prompt_text == decode_settings.DEFAULT_PROMPT and attention_rows(at) == n_prompt + 11

    press(at, "lesson.next")
    assert heading(at) == "The bill per token"
    assert at.number_input(key="cost.layers").value == 1 and at.number_input(key="cost.heads").value == 1
    assert at.session_state["cost.n_max"] == 10_000

    press(at, "lesson.next")
    M = 2 * 1 * 32 * 8_192 * 8 * 128 * 2  # Llama-3-8B: keys and values, 32 layers, 8 KV heads of 128, bf16
    assert heading(at) == "KV-cache memory" and f"**{M:,} bytes**" in texts(at) and M == 2**30

    press(at, "lesson.next")
    assert heading(at) == "Weights & model cards"

    press(at, "lesson.next")
    assert heading(at) == "The quantization ruler"
    assert at.text_area(key="quant.values").value == "-1.2, -0.2, 0.7, 1.8, 8"
    assert any("1 value clipped" in w.value for w in at.warning)

    press(at, "lesson.next")
    assert heading(at) == "Latency on a timeline" and at.radio(key="lat.source").value == "Ch. 30 example"

    press(at, "lesson.next")
    assert heading(at) == "Practice" and bar_line(at) == "Stop 8 of 9 · Your turn: exercise 1"
    assert "**10 ms**" in texts(at) and "**110, 160 and 220 ms**" in texts(at)

    press(at, "lesson.next")
    assert heading(at) == "What you now know" and bar_line(at) == "Stop 9 of 9 · What you now know"
    assert "**·** TTFT and TPOT need explicit timestamps and denominators." in texts(at)  # Ch. 30 §30.7
    assert at.button(key="lesson.next").disabled


def test_lesson_link_round_trip():
    """A move writes ?lesson=…&stop=k into the address; opening that address in a new session shows
    the same stop on its page; ← goes back and says so in the address too."""
    at = app(lesson="fifteen-minutes", stop="3")
    assert heading(at) == "The bill per token" and bar_line(at).startswith("Stop 3 of 9")
    press(at, "lesson.next")
    assert at.query_params == {"lesson": "fifteen-minutes", "stop": "4"}
    again = app(lesson="fifteen-minutes", stop="4")
    assert heading(again) == heading(at) == "KV-cache memory" and bar_line(again) == bar_line(at)
    press(again, "lesson.prev")
    assert heading(again) == "The bill per token" and again.query_params == {"lesson": "fifteen-minutes", "stop": "3"}


def test_teacher_note_only_in_the_teacher_view():
    """The speaker note (its first words) is on the page only with ?teacher=1."""
    note = "Per layer and head, a prompt of n tokens has n² query–key pairs"
    student = app(lesson="fifteen-minutes", stop="3")
    teacher = app(lesson="fifteen-minutes", stop="3", teacher="1")
    assert note not in texts(student) and any(t.value.startswith(note) for t in teacher.text)
    assert len(teacher.get("popover")) == len(student.get("popover")) + 1  # the Note popover


def test_teacher_view_from_the_sidebar_when_starting_there():
    """Started from the sidebar (the README's first way), the lesson had no way to the speaker note: the
    sidebar's Teacher view toggle offers it, and it outlives the switch to the stop's page (a widget
    without persist_state was reset by it: on, then Start, showed no Note). The sidebar is asked to close
    once (lesson_scroll.js clicks its collapse button), not at later moves."""
    note = "Per layer and head, a prompt of n tokens has n² query–key pairs"  # stop 3's
    at = app()
    at.toggle(key=lesson_keys.LESSON_TEACHER).set_value(True).run()
    next(b for b in at.sidebar.button if b.label == "Start this lesson").click().run()
    assert at.session_state[lesson_keys.LESSON_TEACHER] and "Note" in [p.proto.popover.label for p in at.get("popover")]
    assert at.query_params["teacher"] == "1"
    press(press(at, "lesson.next"), "lesson.next")
    assert any(t.value.startswith(note) for t in at.text)
    assert at.session_state[lesson_keys.LESSON_CLOSE_SIDEBAR] is False  # sent once, with the first stop
    at.toggle(key=lesson_keys.LESSON_TEACHER).set_value(False).run()
    assert not any(t.value.startswith(note) for t in at.text) and "teacher" not in at.query_params


@pytest.mark.parametrize(
    "params, note",
    [
        ({"lesson": "../../etc/passwd"}, "lesson= names no shipped lesson"),
        ({"lesson": "fifteen-minutes", "stop": "10"}, "stop= must be a stop of this lesson, 1 … 9"),
        ({"lesson": "fifteen-minutes", "stop": "two"}, "stop= must be a stop of this lesson, 1 … 9"),
        ({"lesson": "fifteen-minutes", "stop": "²"}, "stop= must be a stop of this lesson, 1 … 9"),
        ({"stop": "2"}, "stop= needs lesson=… beside it"),
        ({"lesson": "fifteen-minutes", "teacher": "yes"}, "teacher= takes 0 or 1"),
    ],
)
def test_malformed_lesson_link_gets_a_note(params, note):
    """A link parameter that cannot be used is named at the top of the page; the rest still applies
    (a shipped lesson with a bad stop opens at stop 1)."""
    at = app(**params)
    assert any(note in w.value for w in at.warning), [w.value for w in at.warning]
    running = at.session_state[lesson_keys.LESSON] is not None
    assert running == (params.get("lesson") == "fifteen-minutes")
    if running:
        assert bar_line(at).startswith("Stop 1 of 9")


def test_broken_uploaded_lesson_is_refused_and_nothing_changes():
    """A teacher's file with `step = 300` is refused with the line, stop and field; the lesson that
    was running stays at its stop, on its page. A good file then starts at its stop 1."""
    at = app(lesson="fifteen-minutes", stop="4")
    broken = SHIPPED.replace("step = 11", "step = 300", 1)
    line = next(i for i, ln in enumerate(broken.splitlines(), 1) if ln == "step = 300")
    at.sidebar.file_uploader(key="lesson.upload").upload("mine.toml", broken.encode(), "application/toml").run()
    at.sidebar.button[1].click().run()  # Start my lesson
    assert not at.exception
    shown = "\n".join(c.value for c in at.sidebar.code)
    assert f"mine.toml: line {line}, stop 2, field `settings.step`: 300 is more than the maximum" in shown
    errors = [e.value.replace("\\", "") for e in at.sidebar.error]  # shown literally: punctuation escaped
    assert any("can't be used; nothing was changed" in e for e in errors), errors
    assert heading(at) == "KV-cache memory" and bar_line(at).startswith("Stop 4 of 9")

    mine = SHIPPED.replace('title = "Fifteen minutes', 'title = "My own lesson <b>', 1)
    at.sidebar.file_uploader(key="lesson.upload").set_value(("mine.toml", mine.encode(), "application/toml")).run()
    at.sidebar.button[1].click().run()
    assert heading(at) == "The worked example" and bar_line(at).startswith("Stop 1 of 9")
    assert any(t.value.startswith("My own lesson <b>") for t in at.text)  # the file's text, literally
    assert "lesson" not in at.query_params  # an uploaded file cannot travel in a link


def test_handout_holds_the_learners_own_figure_and_answers():
    """The handout built from this session: the decode stop's heatmap as the learner left it (layer
    1 chosen after the replay), and exercise 1 with the learner's typed answers (escaped), the
    named mistake and the right ones; the download is offered in the lesson menu and on Practice."""
    at = app(lesson="fifteen-minutes", stop="2")
    at.selectbox(key=decode_keys.DECODE_LAYER).set_value(1).run()
    press(at, "lesson.next")  # leaving the decode stop keeps its figure as it was
    at.selectbox(key="lesson.jump.2").set_value(7).run()  # the menu's "Go to stop": 8. Your turn
    assert heading(at) == "Practice" and not at.exception
    at.text_input(key="practice.in.ch30-1.0.ttft").set_value("110 ms")  # timed from clock zero
    at.text_input(key="practice.in.ch30-1.0.tpot").set_value("<b>55</b>")
    [check] = [b for b in at.button if b.label == "Check"]
    check.click().run()
    assert not at.exception
    assert [d.label for d in at.get("download_button")].count("Download handout") == 2  # menu and Practice

    snap = {k: at.session_state[k] for k in handout.NEEDED} | {"tokenizer": assets.load_shipped_tokenizer()}
    html = handout.build(snap)
    assert html.count('<section class="stop">') == 9 + 1  # the lesson's stops, then the request's two speeds
    assert "Layer 1, head 0, decode step 11: the attention as you left it" in html
    assert handout.SPEEDS_TITLE in html  # Ch. 19's two-phase figure of the decode stop's request
    assert html.count("Plotly.newPlot(") == 3  # the decode stop, the bill (stop 3), the stops seen; two speeds
    assert re.search(r'id="figure-2".*?Plotly\.newPlot\(\s*"figure-2"', html, re.S)  # decode is stop 2
    assert "<code>110 ms</code>" in html and "<code>&lt;b&gt;55&lt;/b&gt;</code>" in html
    ttft = re.search(r"<tr><td>TTFT</td><td><code>110 ms</code></td><td class=\"(\w+)\">.*?</td><td>(.*?)</td>", html)
    assert ttft and ttft[1] == "mistake" and ttft[2] == f"{110 - 10} ms"  # TTFT counts from arrival


@pytest.mark.parametrize(
    "content, message",
    [
        (b"\x00\xff\xfe binary posing as TOML", "not UTF-8 text: a lesson is a TOML text file"),
        (b"# padding\n" * 25_000, "250,000 bytes is too large for a lesson (limit 200 kB)"),
        (b"", "missing field `title`"),
        (b'title = "x"\nstops = "<script>alert(1)</script>"', "'<script>alert(1)</script>' is not a list"),
    ],
)
def test_hostile_lesson_files_are_refused_with_their_reason(content, message):
    """Binary, oversized, empty and mistyped uploads: the reason is shown literally (a code block),
    no lesson starts, no traceback."""
    at = app()
    at.sidebar.file_uploader(key="lesson.upload").upload("bad.toml", content, "application/toml").run()
    at.sidebar.button[1].click().run()
    assert not at.exception and at.session_state[lesson_keys.LESSON] is None
    assert any(message in c.value for c in at.sidebar.code), [c.value for c in at.sidebar.code]


def test_the_lesson_stays_in_the_address_after_the_top_bar():
    """The top bar's page switch clears the address bar's parameters (the browser does this; here the
    test clears them as it switches): the next run writes the lesson and its stop back, so a reload
    returns to the lesson instead of dropping it. Other parameters a page sets (the exercise's) stay."""
    at = app(lesson="fifteen-minutes", stop="3", teacher="1")
    at.query_params.clear()
    at.switch_page("app_pages/weights.py").run()
    assert not at.exception and heading(at) == "Weights & model cards"
    assert at.query_params == {"lesson": "fifteen-minutes", "stop": "3", "teacher": "1"}
    press(at, "lesson.next")  # → moves the lesson on from wherever the teacher wandered
    at.query_params.clear()
    at.switch_page("app_pages/practice.py").run()
    assert at.query_params["lesson"] == "fifteen-minutes" and at.query_params["stop"] == "4"
    assert "ex" in at.query_params  # the exercise's own parameters are kept beside the lesson's
