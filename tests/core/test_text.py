"""Text helpers: sentences, plurals, exact decimals, ordinals, visible line breaks."""

from fractions import Fraction

from core.text import exact_decimal, ordinal, plural, sentence, visible


def test_sentence_capitalises_and_ends_once():
    """A core message becomes one sentence; an ending already there is kept; empty stays empty."""
    assert sentence("the prompt is empty") == "The prompt is empty."
    assert sentence("Done!") == "Done!" and sentence("a list…") == "A list…" and sentence("  ") == ""


def test_plural_and_ordinal():
    """1 value, 2 values, 1,024 bytes; 1st 2nd 3rd 4th 11th 12th 13th 21st 112th."""
    assert (plural(1, "value"), plural(2, "value"), plural(1024, "byte")) == ("1 value", "2 values", "1,024 bytes")
    assert plural(2, "entry", "entries") == "2 entries"
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 112)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "112th",
    ]  # fmt: skip


def test_exact_decimal_rounds_half_away_and_keeps_every_digit():
    """2/3 → 0.67, 1/8 → 0.13 (half away), −1/8 → −0.13; 10⁴⁰/2³⁰ has the exact digits of integer division."""
    assert exact_decimal(Fraction(2, 3)) == "0.67" and exact_decimal(Fraction(1, 8)) == "0.13"
    assert exact_decimal(Fraction(-1, 8)) == "-0.13" and exact_decimal(1234567) == "1,234,567.00"
    whole, rest = divmod(10**40 * 100 // 2**30, 100)
    assert exact_decimal(Fraction(10**40, 2**30)) == f"{whole:,}.{rest:02d}"


def test_visible_line_breaks():
    """A newline shows as ⏎, a tab as ⇥; other text unchanged."""
    assert visible("\n") == "⏎" and visible("a\tb\nc") == "a⇥b⏎c"


def test_markdown_literal_escapes_every_ascii_punctuation_mark():
    """Each ASCII punctuation mark gets one backslash (CommonMark shows it literally); letters, digits, spaces and
    non-ASCII text are untouched."""
    import string

    from core.text import markdown_literal

    # "@" also gets a word joiner before it (next test)
    want = "".join(("\u2060" if c == "@" else "") + "\\" + c for c in string.punctuation)
    assert markdown_literal(string.punctuation) == want
    assert markdown_literal("Qwen2 7B Привет 😀") == "Qwen2 7B Привет 😀"


def test_markdown_literal_keeps_bare_addresses_from_becoming_links():
    """GitHub-flavoured markdown links http://…, www.… and name@host even when every mark is
    escaped; an invisible word joiner (U+2060) inside the word stops it, never after a backslash."""
    from core.text import markdown_literal

    wj = "\u2060"
    assert markdown_literal("http://e.com") == f"h{wj}ttp\\:\\/\\/e\\.com"
    assert markdown_literal("WWW.x.org") == f"W{wj}WW\\.x\\.org"
    assert markdown_literal("a@b.c") == f"a{wj}\\@b\\.c"
    assert markdown_literal("1, 2 (ok).") == "1\\, 2 \\(ok\\)\\."


def test_quoted_shows_typed_text_as_typed():
    """A message quotes typed text between single quotes with one backslash per backslash (repr
    doubled them), cut inside the closing quote, control and bidirectional characters as code
    points; emoji sequences (joiner, variation selector) untouched; other values as repr."""
    from core.text import quoted

    assert quoted("\\*") == "'\\*'" and len(quoted("\\")) == 3
    assert quoted("x" * 100, 10) == "'" + "x" * 9 + "…'"
    assert quoted("a\u202eb\nc") == "'a[U+202E]b[U+000A]c'"
    assert quoted("👩\u200d💻❤\ufe0f") == "'👩\u200d💻❤\ufe0f'"
    assert quoted(3.5) == "3.5" and quoted(None) == "None"


def test_bidi_controls_are_shown_not_obeyed():
    """A right-to-left override typed into a prompt (U+202E) would draw every later character
    mirrored; the text line shows it as its code point instead, and leaves Arabic text alone."""
    from core.text import bidi_visible

    assert bidi_visible("a\u202ebc\u2066d\u200f") == "a[U+202E]bc[U+2066]d[U+200F]"
    assert bidi_visible("مرحبا, Mira") == "مرحبا, Mira"
