"""Guided lessons as data (core.lesson.stops, core.lesson.pages): the shipped lesson, the mapping to the
app's real pages, and messages for broken files that name the line and the field."""

import re
from pathlib import Path

import jsonschema
import pytest

from core.cost.kv_shape import PRESETS
from core.lesson import stops
from core.lesson.pages import PAGES, lesson_schema
from ui import frame

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = (ROOT / "assets/lessons/fifteen-minutes.toml").read_text(encoding="utf-8")


def _app_pages() -> dict[str, str]:
    """{script: title} of the app's navigation (``ui.PAGES``, which app.py turns into st.Page)."""

    return {path: name for path, name, _ in frame.PAGES}


def test_pages_are_the_apps_pages():
    """Every app page has exactly one lesson name, with app.py's script and title."""
    assert {spec.script: spec.title for spec in PAGES.values()} == _app_pages()


def test_string_choices_are_the_pages_own():
    """Text choices a lesson may pick (trace source, presets, exercises) are options the page offers."""
    from core.serving.latency import EDITABLE

    assert PAGES["latency"].settings["source"]["enum"] == list(EDITABLE)
    assert "*LAT.EDITABLE" in (ROOT / "app_pages/latency.py").read_text()  # the page offers exactly these
    from core.practice.catalogue import catalogue
    from core.quant import ruler

    assert PAGES["quantize"].settings["preset"]["enum"] == list(ruler.PRESETS)
    assert set(PAGES["memory"].settings["preset"]["enum"]) == {*PRESETS, "The shipped model"}
    assert PAGES["practice"].settings["ex"]["enum"] == list(catalogue())


def test_schema_is_valid_json_schema():
    """The generated schema is itself valid draft 2020-12."""
    jsonschema.Draft202012Validator.check_schema(lesson_schema())


def test_shipped_lesson_validates_and_follows_the_plan():
    """The 15-minute lesson: worked example → decode to step 11 → bill → Llama-3-8B at 8,192 → 7B Q4 8K
    → the outlier → the Ch. 30 trace → a Practice item → the two chapters' summaries; 15 minutes; every stop has a
    note and a question."""
    lesson = stops.load_shipped("fifteen-minutes")
    assert [s.page for s in lesson.stops] == [
        "worked", "decode", "cost", "memory", "weights", "quantize", "latency", "practice", "summary"
    ]  # fmt: skip
    assert sum(s.minutes for s in lesson.stops) == lesson.minutes == 15
    assert lesson.stops[1].settings == {"step": 11}
    assert lesson.stops[1].typed() == PAGES["decode"].settings_type(step=11)  # the rest: the page's defaults
    assert lesson.stops[3].settings == {"preset": "Llama-3-8B (GQA)"}
    assert lesson.stops[5].settings == {"preset": "Ch. 30: the outlier 8"}
    assert lesson.stops[6].settings == {"source": "Ch. 30 example"}
    assert lesson.stops[7].settings == {"ex": "ch30-1", "numbers": 0}
    assert all(s.note and s.question and s.handout for s in lesson.stops)
    assert stops.shipped_lessons() == ["fifteen-minutes"]


def test_quantize_preset_sets_what_the_page_callback_sets():
    """A lesson's ruler preset puts the same values in session state as choosing it on the page."""
    from bench.fresh_app import new_app
    from core.quant import ruler
    from ui import quant

    at = new_app("app_pages/quantize.py")
    at.selectbox(key=quant.QUANT_PRESET).set_value("Ch. 30: the outlier 8").run()
    updates = quant.quant_preset_state(*ruler.PRESETS["Ch. 30: the outlier 8"])  # what ui.quant.show applies
    assert updates[quant.QUANT_VALUES] == ruler.PRESETS["Ch. 30: the outlier 8"][0]
    assert {k: at.session_state[k] for k in updates} == updates


def test_unknown_shipped_name_is_refused():
    """Only shipped names load; a path is just an unknown name."""
    with pytest.raises(stops.LessonError, match="no shipped lesson"):
        stops.load_shipped("../../etc/passwd")


def _broken(old: str, new: str) -> str:
    assert old in SHIPPED
    return SHIPPED.replace(old, new, 1)


def _line(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


@pytest.mark.parametrize(
    "old, new, needle, stop, field, message",
    [
        ("step = 11", "step = = 11", "step = = 11", None, "step", "TOML syntax"),
        ("step = 11", "step = 300", "step = 300", 2, "settings.step", "300 is more than the maximum, 256"),
        ("step = 11", "stpe = 11", "stpe = 11", 2, "settings.stpe", "unknown setting `stpe` (page `decode` takes:"),
        ('page = "cost"', 'page = "costs"', 'page = "costs"', 3, "page", "'costs' is not one of"),
        ("n_max = 10000", 'n_max = "ten thousand"', "n_max =", 3, "settings.n_max", "is not one of: 2000"),
        ('preset = "Llama-3-8B (GQA)"', 'preset = "Llama-4"', 'preset = "Llama-4"', 4, "settings.preset", "'Llama-4'"),
        ("scaled = false", "scaled = 1", "scaled = 1", 1, "settings.scaled", "1 is not true or false"),
        ('title = "The bill per token"', 'title = ""', 'title = ""', 3, "title", "is empty"),
        # Only spaces passed the length check and showed a blank bar ("Stop 3 of 9 · "): refused like "".
        ('title = "The bill per token"', 'title = "   "', 'title = "   "', 3, "title", "the text holds only spaces"),
        # A quoted key is located on its own line (the stop's first line was named).
        ('page = "cost"', '"page" = "costs"', '"page" = "costs"', 3, "page", "'costs' is not one of"),
        # The temperature slider moves in tenths: 0.123 was used while it showed "0.12".
        (
            "step = 11",
            "step = 11\ntemperature = 0.123",
            "temperature = 0.123",
            2,
            "settings.temperature",
            "0.123 is not on the slider's steps of 0.1",
        ),
        ('ex = "ch30-1"', 'ex = "ch30-9"', 'ex = "ch30-9"', 8, "settings.ex", "'ch30-9' is not one of"),
        # JSON Schema takes 3.0 for a whole number and NaN for a number inside any bounds: both passed and
        # crashed their page ("'float' object cannot be interpreted as an integer", "temperature … got nan").
        ("step = 11", "step = 11.0", "step = 11.0", 2, "settings.step", "11.0 is not a whole number"),
        ("numbers = 0", "numbers = 4.0", "numbers = 4.0", 8, "settings.numbers", "4.0 is not a whole number"),
        (
            "step = 11",
            "step = 11\ntemperature = nan",
            "temperature = nan",
            2,
            "settings.temperature",
            "nan is not a number",
        ),
    ],
)
def test_broken_lesson_names_line_and_field(old, new, needle, stop, field, message):
    """Each broken file's message gives the line where the fault is written, the stop and the field."""
    text = _broken(old, new)
    with pytest.raises(stops.LessonError) as err:
        stops.parse_lesson(text, "mine.toml")
    p = err.value.problems[0]
    assert (p.line, p.stop, p.field) == (_line(text, needle), stop, field), p
    assert message in p.message
    assert str(err.value).startswith(f"mine.toml: line {p.line}")


def test_missing_field_points_at_its_stop():
    """A stop without its note: the message names the field and the line of that stop's [[stops]]."""
    text = _broken('note = """Chapter 10', 'notes = """Chapter 10')
    with pytest.raises(stops.LessonError) as err:
        stops.parse_lesson(text)
    first = err.value.problems[0]
    assert (first.line, first.stop, first.field, first.message) == (
        next(i for i, ln in enumerate(text.splitlines(), 1) if ln.strip() == "[[stops]]"),
        1,
        "note",
        "missing field `note`",
    )
    assert any(p.field == "notes" and "unknown field `notes`" in p.message for p in err.value.problems)


def test_settings_written_inline_or_dotted_are_located():
    """settings = { step = 999 } and settings.step = -1 are found on their own line."""
    for form, needle in [("settings = { step = 999 }", "settings = {"), ("settings.step = -1", "settings.step")]:
        text = _broken("[stops.settings]\nstep = 11", form)
        with pytest.raises(stops.LessonError) as err:
            stops.parse_lesson(text)
        assert err.value.problems[0].line == _line(text, needle)


def test_a_speaker_note_that_looks_like_structure_is_not_structure():
    """Text inside a multi-line note ("[[stops]]", "step = 1") does not move the reported lines."""
    text = _broken("then press Reveal the shares.", "Then:\n[[stops]]\nstep = 1\nfine.")
    text = text.replace("step = 11", "step = 999")
    with pytest.raises(stops.LessonError) as err:
        stops.parse_lesson(text)
    assert err.value.problems[0].line == _line(text, "step = 999")


@pytest.mark.parametrize(
    "data, message",
    [(b"\xff\xfe\x00", "not UTF-8"), (b"x" * 300_000, "too large"), ("", "missing field `title`"),
     ('title = "x"\nstops = []\n', "needs at least 1 entry"),
     # the count, not a dump of the 41 stops' tables
     ('title = "x"\n' + '[[stops]]\ntitle = "S"\npage = "worked"\nnote = "n"\nquestion = "q"\n' * 41,
      "line 2, field `stops`: 41 entries: at most 40")],
)  # fmt: skip
def test_not_a_lesson_at_all(data, message):
    """Binary, oversized, empty and stop-less files are refused with a reason."""
    with pytest.raises(stops.LessonError, match=re.escape(message)):
        stops.parse_lesson(data)


@pytest.mark.parametrize(
    "text, message",
    [
        ("a = " + "[" * 1200 + "]" * 1200, "nested far too deeply"),  # tomllib: RecursionError
        ("a = " + "{b = " * 1200 + "1" + "}" * 1200, "nested far too deeply"),
        ('title = "x"\nminutes = ' + "9" * 5000, "a number with more than 4,300 digits"),  # tomllib: ValueError
    ],
)
def test_a_hostile_lesson_file_is_refused_not_a_traceback(text, message):
    """A 2.4 kB file nested 1,200 deep crashed the page with Python's RecursionError (a helper found it); it, and
    an integer Python will not convert, are refused like any other unusable lesson."""
    with pytest.raises(stops.LessonError, match=message):
        stops.parse_lesson(text.encode())


@pytest.mark.parametrize("value", ["0.3", "0.7", "1", "1.5", "0"])
def test_temperatures_on_the_sliders_steps_are_accepted(value):
    """0.3 / 0.1 is 2.9999999999999996 (JSON Schema's multipleOf would refuse it): every tenth passes, whole
    numbers too, on the speculative page's slider (0 … 1.5)."""
    stop = 'title = "S"\npage = "speculative"\nnote = "n"\nquestion = "q"\nsettings.temperature = ' + value
    lesson = stops.parse_lesson(f'title = "T"\n[[stops]]\n{stop}\n')
    assert lesson.stops[0].settings == {"temperature": float(value)}


def _prompt_of(n: int) -> str:
    """A prompt of exactly ``n`` tokens of the shipped tokenizer (the ``tokenizers`` library itself)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(ROOT / "assets" / "tokenizer.json"))
    text = tok.decode(tok.encode("The hotel in Lyon costs 620 yuan per night. " * 40).ids[:n])
    assert len(tok.encode(text).ids) == n
    return text


def _arrival_runs(prompt: str, steps: int) -> bool:
    """Whether the shipped model prefills ``prompt`` and then decodes ``steps`` steps (False: ValueError)."""
    from core.decode import session
    from core.decode.generate import SamplingConfig
    from core.model.shipped import load_model, load_shipped_tokenizer
    from core.model.tokenizer import encode

    model = load_model()
    try:
        sess = session.start(model, encode(load_shipped_tokenizer(), prompt), SamplingConfig())
        for _ in range(steps):
            sess = session.step(model, sess, check=False)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("n, step, refused", [(245, 11, False), (246, 11, True), (257, 0, True), (256, 0, False)])
def test_a_decode_stops_prompt_past_the_window_is_refused_on_upload(n, step, refused):
    """The shipped model's window is 256 positions: a decode stop's prompt of n tokens replaying ``step`` steps
    needs n + step. Past it the file is refused at once, naming the prompt's line and the tokens to remove,
    instead of "Prefill refused" in front of the class."""
    prompt = _prompt_of(n).replace("\\", "\\\\").replace('"', '\\"')
    text = _broken("step = 11", f'prompt = "{prompt}"' + (f"\nstep = {step}" if step else ""))
    assert _arrival_runs(_prompt_of(n), step) is not refused  # what the class meets on arrival, by the model
    if not refused:
        assert stops.parse_lesson(text).stops[1].settings["prompt"] == _prompt_of(n)
        return
    with pytest.raises(stops.LessonError) as err:
        stops.parse_lesson(text, "mine.toml")
    p = err.value.problems[0]
    assert (p.line, p.stop, p.field) == (_line(text, "prompt = "), 2, "settings.prompt")
    assert f"the prompt is {n} tokens" in p.message and "window holds 256 positions" in p.message
    assert f"remove at least {n + step - 256} token" in p.message


def test_a_key_of_thousands_of_dotted_parts_is_refused_before_parsing():
    """A 190 kB lesson whose one table header has 95,000 dotted parts cost 5–14 s of server CPU in TOML parsing and
    schema validation before it was refused (issue 58): now refused by its shape, naming the line, in milliseconds.
    A question text with dots, and an array of numbers on its own line, are not keys."""
    import time

    hostile = "[" + ".".join(["a"] * 95_000) + "]\n"
    assert len(hostile.encode()) == 190_002
    cpu = time.process_time()
    with pytest.raises(stops.LessonError, match="line 1: a key of 95,000 dotted parts"):
        stops.parse_lesson(hostile)
    assert time.process_time() - cpu < 0.5
    with pytest.raises(stops.LessonError, match="line 2: a key of 21 dotted parts"):
        stops.parse_lesson('title = "x"\n' + "a." * 20 + "b = 1\n")
    fine = 'q = "Is a.b.c.d.e.f.g.h.i = x?"\nv = [\n  [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],\n]\n'
    with pytest.raises(stops.LessonError) as err:
        stops.parse_lesson(fine)
    assert "dotted parts" not in str(err.value)
