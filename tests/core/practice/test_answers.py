"""Reading typed answers with units (core.practice.answers)."""

import re

import pytest

from core.practice import answer_lists, answers
from core.typed_numbers import TooLarge, quote

EX3_BYTES = 2 * 4 * 24 * 4096 * 4 * 128 * 2  # Ch. 30 exercise 3: 805,306,368 bytes


@pytest.mark.parametrize("text", ["768 MiB", "805306368", "805,306,368 B", "0.75 GiB", "3 × 2^28 B", "805 306 368"])
def test_exact_notations_of_805306368_bytes(text):
    """Binary units, separators and a power all read as exactly 805,306,368 bytes."""
    assert answers.parse_bytes(text) == EX3_BYTES


def test_decimal_megabytes_are_powers_of_ten():
    """805.3 MB is 805,300,000 bytes: within 0.1 % of 805,306,368, i.e. MB is 10⁶ bytes, not 2²⁰."""
    assert answers.parse_bytes("805.3 MB") == 805_300_000
    assert abs(answers.parse_bytes("805.3 MB") - EX3_BYTES) / EX3_BYTES < 1e-3


@pytest.mark.parametrize(
    "text, n_bytes",
    [
        ("1 B", 1),
        ("2 bytes", 2),
        ("1 kB", 1000),
        ("1 KiB", 1024),
        ("1 MB", 10**6),
        ("1 MiB", 2**20),
        ("1 GB", 10**9),
        ("1 GiB", 2**30),
        ("805.3 mb", 805_300_000),
        ("768 mib", 768 * 2**20),
        ("8 Mbit", 10**6),
    ],
)
def test_unit_sizes(text, n_bytes):
    """B is a byte (not a bel), k/M/G are powers of 1,000, Ki/Mi/Gi powers of 1,024, 8 bits a byte."""
    assert answers.parse_bytes(text) == n_bytes


def test_bare_number_takes_the_boxs_unit():
    """A bare 768 in a box that asks for MiB is 768 MiB; with a unit, the unit wins."""
    assert answers.parse_bytes("768", "MiB") == EX3_BYTES
    assert answers.parse_bytes("805306368 B", "MiB") == EX3_BYTES


def test_unknown_unit_message_names_the_text_and_two_notations():
    """The issue's message, word for word: 12 KiB = 12,288 bytes."""
    with pytest.raises(ValueError) as err:
        answers.parse_bytes("12 foo")
    assert str(err.value) == "couldn't read `12 foo` as bytes: try `12 KiB` or `12288`"


def test_kb_is_refused_as_ambiguous():
    """KB could mean 1,000 or 1,024 bytes: the message offers kB and KiB instead of guessing."""
    with pytest.raises(ValueError, match="ambiguous.*`12 kB`.*`12 KiB`"):
        answers.parse_bytes("12 KB")


@pytest.mark.parametrize(
    "text",
    [
        "10 ms",
        "1,2.5 GiB",
        "",
        "   ",
        "MiB",
        "1/0 B",
        "1e400 B",
        "9^9^9",
        "2^9999 B",
        "__import__('os')",
        "x" * 10_000,
        "12 foo bar",
    ],
)
def test_bytes_bad_input_is_a_valueerror(text):
    """Wrong kind of unit, separators that group nothing, nothing, division by zero, overflow, a huge power, code and
    a 10,000-character paste are all ValueError with a message (never another exception)."""
    with pytest.raises(ValueError) as err:
        answers.parse_bytes(text)
    assert str(err.value)


@pytest.mark.parametrize(
    "text, ms",
    [("150", 150), ("150 ms", 150), ("0.15 s", 150), ("150000 µs", 150), ("150000 us", 150), ("1 min", 60_000)],
)
def test_times_in_milliseconds(text, ms):
    """Times read in ms; a bare number is ms."""
    assert answers.parse_time_ms(text) == pytest.approx(ms)


def test_time_rejects_bytes_with_a_suggestion():
    """A byte unit is not a time: the message suggests ms and s spellings of the same number."""
    with pytest.raises(ValueError, match=r"as a time: try `10 ms` or `0.01 s`"):
        answers.parse_time_ms("10 B")


@pytest.mark.parametrize("text", ["4.35 %", "4.35%", "4.35 percent", "4.35"])
def test_percentages(text):
    """4.35 % in four spellings is 4.35 (percent, not the fraction 0.0435)."""
    assert answers.parse_percent(text) == pytest.approx(4.35)


@pytest.mark.parametrize("text", ["1000000", "1,000,000", "1e6", "10^6", "10**6", "1 000 000"])
def test_counts(text):
    """A million in six notations."""
    assert answers.parse_number(text) == 1_000_000


def test_ratio_and_named_units():
    """100x and 100 × are 100; a unit the box allows ("tokens/s") is accepted, others are not."""
    assert answers.parse_number("100x") == answers.parse_number("100 ×") == 100
    assert answers.parse_number("25 tokens/s", units=("tokens/s",)) == 25
    with pytest.raises(ValueError, match="as a number"):
        answers.parse_number("25 ms")


@pytest.mark.parametrize("text", ["0x300", "0x300 B", "0X1F MiB"])
def test_hexadecimal_is_refused_not_read_as_zero(text):
    """ "0x300" is hexadecimal (768), not 0 × 300: it was read as 0 bytes and marked wrong without a word. The
    boxes take decimal numbers, so it is refused with the notations that work; "2x300" is still 600."""
    with pytest.raises(ValueError, match="couldn't read"):
        answers.parse_bytes(text)
    with pytest.raises(ValueError, match="couldn't read"):
        answers.parse_number(text.split()[0])
    with pytest.raises(ValueError, match="try `768`"):
        answers.parse_number("0x300")
    assert (
        answers.parse_bytes("2x300") == answers.parse_number("2 x 300") == answers.parse_number("0 × 300") + 600 == 600
    )


@pytest.mark.parametrize("text", ["3, -1, 7, 2", "3, −1, 7, 2", "3 −1 7 2", "[3, -1, 7, 2]", "3; -1; 7; 2"])
def test_integer_lists(text):
    """Ch. 19's stored integers with commas, spaces, brackets and the typographic minus."""
    assert answer_lists.parse_int_list(text) == (3, -1, 7, 2)


def test_integer_list_names_the_bad_entry():
    """An entry that is not a number is named by position and quoted; a decimal is read as it is (a wrong
    answer the checker names, e.g. x / s before rounding), not refused as unreadable."""
    with pytest.raises(ValueError, match=r"entry 2 \(`x`\) is not a number"):
        answer_lists.parse_int_list("3, x, 7")
    assert answer_lists.parse_int_list("3.4, 1") == (3.4, 1) and answer_lists.parse_int_list("2.0, -0") == (2, 0)


def test_number_and_time_lists():
    """Shares as plain numbers; gaps with or without units."""
    assert answer_lists.parse_number_list("0.0826 0.6103 0.0826 0.2245") == (0.0826, 0.6103, 0.0826, 0.2245)
    assert answer_lists.parse_number_list("50 ms, 0.06 s", answers.parse_time_ms) == pytest.approx((50, 60))


def test_quote_keeps_backticks_literal():
    """Typed backticks cannot close the code span that quotes them."""
    assert quote("a`b") == "``a`b``"
    assert quote("`x") == "`` `x ``"
    assert quote("y" * 100).endswith("…`")


def test_an_invisible_character_in_an_answer_is_named_in_the_message():
    """A zero-width space or a NUL typed into an answer is shown as its code point, not as an anonymous "�"."""
    with pytest.raises(ValueError) as err:
        answers.parse_time_ms("150\u200b ms")
    assert "`150[U+200B] ms`" in str(err.value)
    assert quote("a\x00b") == "`a[U+0000]b`" and quote("👍🏽\u200d") == "`👍🏽\u200d`"  # emoji joiners kept


@pytest.mark.parametrize(
    "read, typed, value",
    [("time", "١٠٠", 100), ("time", "１００ ms", 100), ("time", "٣٠٠ ms", 300), ("bytes", "٣ GiB", 3 * 2**30)],
)
def test_other_scripts_digits_are_read(read, typed, value):
    """Arabic-Indic and full-width digits are decimal digits (Unicode Nd): read as 0-9. They were refused with a
    hint that had already decoded them ("couldn't read ١٠٠ as a time: try `100 ms`"; a helper found it)."""
    assert (answers.parse_time_ms if read == "time" else answers.parse_bytes)(typed) == value


@pytest.mark.parametrize("typed", ["768 Mib", "805306368 b", "768 Mb", "1.5 Gib", "6144 Mib"])
def test_a_lower_case_b_is_a_bit_and_is_refused_not_read_as_bytes(typed):
    """IEC/IEEE write a bit b and a byte B: "768 Mib" is 96 MiB, not 768 MiB. It was read as bytes and marked right
    (and "6144 Mib", exactly 768 MiB in bits, got a wrong named mistake). Refused with both spellings; spelled bits
    convert at 8 bits a byte. All-lower-case "768 mib" has no such meaning and stays MiB."""
    number, unit = typed.split()
    p = unit[:-1]
    byte_forms = {"": "`805306368 B`", "Mi": "`768 MiB`", "M": "`768 MiB` (1,048,576 bytes each) or `768 MB`"}
    byte_forms |= {"Gi": "`1.5 GiB`", "Mi6144": "`6144 MiB`"}
    shown = byte_forms["Mi6144" if number == "6144" else p]
    with pytest.raises(ValueError, match=re.escape(f"`{unit}` is bits") + ".*for bytes write " + re.escape(shown)):
        answers.parse_bytes(typed)
    with pytest.raises(ValueError, match=re.escape(f"; for bits `{number} {p}bit`")):
        answers.parse_bytes(typed)
    assert (
        answers.parse_bytes("6144 Mibit")
        == answers.parse_bytes("6442450944 bit")
        == answers.parse_bytes("768 mib")
        == EX3_BYTES
    )


def test_a_decimal_comma_is_read_and_dots_group_thousands_by_the_one_rule():
    """Practice reads numbers by core.typed_numbers' rule, as every other box does (issue 38): "0,055 s" is 55 ms and
    "0,5 GiB" half a GiB (a decimal comma, refused before), "1.610.612.736" 1,610,612,736 (two or more dots group
    thousands); "0,055" is never 55. Separators that group nothing are refused with the reader's reason."""
    assert answers.parse_time_ms("0,055 s") == pytest.approx(55) and answers.parse_time_ms("0,1 s") == 100
    assert answers.parse_bytes("0,5 GiB") == 2**29
    assert answers.parse_bytes("1.610.612.736") == answers.parse_bytes("1,610,612,736") == 1_610_612_736
    with pytest.raises(ValueError, match=r"`1,2\.5` mixes “,” and “\.” without grouping thousands by three"):
        answers.parse_bytes("1,2.5 GiB")


@pytest.mark.parametrize(
    "read, typed, hint",
    [
        ("time", "0.21 s 5", "try `0.21 s` or `210 ms`"),
        ("bytes", "768 MiB/s", "try `768 MiB` or `805306368`"),
        ("bytes", "768 MiByte", "try `768 MiB` or `805306368`"),
        ("time", "٣ GiB", "try `3 ms` or `0.003 s`"),
    ],
)
def test_a_hint_keeps_the_unit_the_student_typed(read, typed, hint):
    """ "0.21 s 5" was told "try `0.21 ms`" (1,000× off) and "768 MiB/s" "try `768 KiB`" (1,024× off). The hint now
    uses the unit typed, when there is one, and its digits in 0-9; what it suggests reads back."""
    parse = answers.parse_time_ms if read == "time" else answers.parse_bytes
    with pytest.raises(ValueError) as err:
        parse(typed)
    assert str(err.value).endswith(hint), str(err.value)
    assert parse(hint.split("`")[1]) == parse(hint.split("`")[3])


def test_an_answer_is_measured_without_its_surrounding_spaces():
    """ "100 ms" followed by 400 spaces is 100 ms (it was over the length limit); 150 characters get a message
    (the practice boxes take up to MAX_TYPED characters so that a long paste arrives: tests/test_browser_practice)."""
    assert answers.parse_time_ms("100 ms" + " " * 400) == 100
    with pytest.raises(ValueError, match="150 characters"):
        answers.parse_time_ms("1" * 150)


@pytest.mark.parametrize(
    "read",
    [
        answers.parse_time_ms,
        answers.parse_bytes,
        answers.parse_number,
        answers.parse_percent,
        answer_lists.parse_number_list,
    ],
)
@pytest.mark.parametrize("typed", ["1e309", "-1e309 ms", "2e308 B", "1" + "0" * 20 + "e300"])
def test_a_number_past_the_largest_float_is_named_not_hinted_from_its_first_digit(read, typed):
    """float("1e309") is inf: it was "unreadable" with "try `1 ms`", built from its leading 1. It is
    named as too large for the computer; 1.7e308, the largest a float holds nearly, is still read."""
    with pytest.raises(ValueError, match=r"beyond the largest number the computer can store \(±1\.8 × 10³⁰⁸\)"):
        read(typed)
    assert answers.parse_number("1.7e308") == 1.7e308


def test_a_long_paste_into_a_list_box_asks_for_a_list():
    """The length message names what the box takes ("an answer here is one number" was shown for lists too)."""
    with pytest.raises(ValueError, match=r"150 characters; type times separated by commas here, e\.g\. `20, 35`"):
        answer_lists.parse_number_list("1" * 150, answers.parse_time_ms)
    with pytest.raises(ValueError, match=r"150 characters; type a time here"):
        answers.parse_time_ms("1" * 150)


def test_time_lists_separated_by_spaces_keep_each_unit_with_its_number():
    """ "40 ms 45 ms" is two gaps and "120 ms" one (a unit on its own was read as a second entry that
    is not a time); numbers without units still split on every space."""
    assert answer_lists.parse_number_list("40 ms 45 ms", answers.parse_time_ms) == pytest.approx((40, 45))
    assert answer_lists.parse_number_list("120 ms", answers.parse_time_ms) == pytest.approx((120,))
    assert answer_lists.parse_number_list("0.04 s 45 ms -5 ms", answers.parse_time_ms) == pytest.approx((40, 45, -5))
    assert answer_lists.parse_int_list("3 -1 7 2") == (3, -1, 7, 2)


def test_a_unit_written_once_after_a_time_list_applies_to_every_bare_entry():
    """The page shows gaps as "50, 60 ms"; "0.05, 0.06 s" read the first entry in ms (0.05 ms) and
    was "1 of the 2 numbers is off". A unit on an entry of its own still wins."""
    assert answer_lists.parse_number_list("0.05, 0.06 s", answers.parse_time_ms) == pytest.approx((50, 60))
    assert answer_lists.parse_number_list("0.04 0.045 0.035 s", answers.parse_time_ms) == pytest.approx((40, 45, 35))
    assert answer_lists.parse_number_list("50 ms, 0.06 s", answers.parse_time_ms) == pytest.approx((50, 60))
    assert answer_lists.parse_number_list("40, 45, 35", answers.parse_time_ms) == pytest.approx((40, 45, 35))


@pytest.mark.parametrize(
    "typed, ms", [("0.1 S", 100), ("100 MS", 100), ("100 Ms", 100), ("0.1 SEC", 100), ("2 MIN", 120_000)]
)
def test_time_units_in_capitals_are_seconds_not_siemens_or_megaseconds(typed, ms):
    """ "0.1 S" was unreadable (pint's S is siemens) with the hint "try `0.1 ms`", 1,000× too small;
    "100 Ms" was read as 100 megaseconds. In a time box case does not matter."""
    assert answers.parse_time_ms(typed) == pytest.approx(ms)


def test_semicolons_separate_a_list_whose_commas_are_decimal_commas():
    """ "0,3; -0,1; 0,7; 0,2" was split at every comma too ("Give 4 numbers; you gave 8"), then refused entry by
    entry. Split at the semicolons, a comma inside an entry has one reading, a decimal comma: read."""
    assert answer_lists.parse_number_list("0.3; -0.1; 0.7; 0.2") == (0.3, -0.1, 0.7, 0.2)
    assert answer_lists.parse_number_list("0,3; -0,1; 0,7; 0,2") == (0.3, -0.1, 0.7, 0.2)


@pytest.mark.parametrize("typed", ["1e200 * 1e200", "1e308 * 10 ms", "1e200 * 1e200 B"])
def test_an_expression_past_the_largest_float_is_named_too(typed):
    """An expression that overflows was "unreadable" with a hint from its leading digit."""
    read = answers.parse_bytes if typed.endswith("B") else answers.parse_time_ms
    with pytest.raises(TooLarge, match="beyond the largest number the computer can store"):
        read(typed)


@pytest.mark.parametrize("typed", ["<b>100</b> ms", "~100 ms", "about 100 ms"])
def test_a_hint_takes_the_number_typed_anywhere_not_a_made_up_12(typed):
    """Markup or a word before the number made the hint "try `12 ms`", a number nobody typed."""
    with pytest.raises(ValueError, match=r"try `100 ms` or `0\.1 s`"):
        answers.parse_time_ms(typed)


def test_a_hyphenated_fold_is_a_ratio():
    """ "100-fold" was refused ("100-" is no number) while "100 fold" and "100fold" were read."""
    assert answers.parse_number("100-fold") == answers.parse_number("100 fold") == 100


def test_one_amount_written_several_ways_reads_once_and_different_ones_are_named():
    """The handout's whole line for a size reads as its first side; sides that disagree are refused."""
    assert answers.parse_bytes("805,306,368 bytes (768 MiB = 805.31 MB)") == EX3_BYTES
    assert answers.parse_bytes("768 MiB = 805,306,368 bytes") == EX3_BYTES
    with pytest.raises(ValueError, match="are different amounts: give one, e.g. `768 MiB`"):
        answers.parse_bytes("768 MiB = 512 MiB")


@pytest.mark.parametrize(
    "read, typed, value",
    [
        (answers.parse_time_ms, "100 ms.", 100),
        (answers.parse_bytes, "768 MiB.", EX3_BYTES),
        (answers.parse_percent, "4.35 %.", 4.35),
        (answers.parse_number, "0.125.", 0.125),
        (answers.parse_number, "1,000,000.", 1_000_000),
        (answers.parse_number, "－1", -1),  # fullwidth hyphen-minus
        (answers.parse_number, "﹣1", -1),  # small hyphen-minus
        (answers.parse_number, "‒1", -1),  # figure dash
        (answer_lists.parse_number_list, "0.3, −0.1, 0.7, 0.2.", (0.3, -0.1, 0.7, 0.2)),
        (answer_lists.parse_int_list, "3 ‒1 7 2", (3, -1, 7, 2)),
    ],
)
def test_a_closing_full_stop_and_other_minus_signs_are_read(read, typed, value):
    """ "1,000,000." was read but "100 ms." and "0.3, −0.1, 0.7, 0.2." were not; fullwidth digits were
    read but not the fullwidth minus sign."""
    assert read(typed) == pytest.approx(value)
    assert answers.parse_number("1.610.612.") == 1_610_612  # dots grouping thousands by three, then a full stop
    with pytest.raises(ValueError, match="couldn't read"):  # dots that group nothing stay refused
        answers.parse_number("1.61.612.")


@pytest.mark.parametrize("typed, value", [("10^05", 1e5), ("2*05", 10), ("2^010", 1024), ("3 * 2^028", 3 * 2**28)])
def test_a_whole_number_with_leading_zeros_keeps_its_value(typed, value):
    """pint's tokenizer read "10^05" as 5 and "2*05" as 0: a student's right answer marked wrong."""
    assert answers.parse_number(typed) == value


@pytest.mark.parametrize("typed", ["10^400 ms", "10^1000", "9^999"])
def test_a_power_past_the_largest_float_is_named_as_such(typed):
    """ "10^400 ms" was "unreadable … try `10 ms`", as if the student had meant 10."""
    with pytest.raises(TooLarge, match="beyond the largest number the computer can store"):
        answers.parse_time_ms(typed)


def test_powers_up_to_three_digits_are_read_and_a_long_power_of_one_is_not_too_large():
    """2^100 is an ordinary float (it was refused for its three-digit exponent); 1^1000 is unreadable,
    not "beyond the largest number"."""
    assert answers.parse_number("2^100") == 2.0**100
    with pytest.raises(ValueError) as err:
        answers.parse_number("1^1000")
    assert not isinstance(err.value, TooLarge)


@pytest.mark.parametrize(
    "read, typed, value",
    [
        (answers.parse_bytes, "8,192 MiB", 8192 * 2**20),
        (answers.parse_bytes, "8 192 MiB", 8192 * 2**20),
        (answers.parse_bytes, "8’192 MiB", 8192 * 2**20),
        (answers.parse_bytes, "8'192 MiB", 8192 * 2**20),
        (answers.parse_bytes, "8\u202f192 MiB", 8192 * 2**20),
        (answers.parse_bytes, "٨١٩٢ MiB", 8192 * 2**20),
        (answers.parse_bytes, "0,75 GiB", EX3_BYTES),
        (answers.parse_bytes, "1.234,5 MB", 1_234_500_000),
        (answers.parse_bytes, "1 234,5 MB", 1_234_500_000),
        (answers.parse_bytes, "805.306.368 B", EX3_BYTES),
        (answers.parse_time_ms, "1,5 s", 1500),
        (answers.parse_time_ms, "0,055 s", 55),
        (answers.parse_percent, "4,35 %", 4.35),
        (answers.parse_number, "1’000’000", 1_000_000),
        (answer_lists.parse_int_list, "1,000; 2", (1000, 2)),
        (answer_lists.parse_number_list, "0,0826; 0,6103", (0.0826, 0.6103)),
    ],
)
def test_practice_reads_numbers_by_the_one_rule(read, typed, value):
    """Issue 38 item 4: Practice reads a number as core.typed_numbers does for every box: thousands grouped by
    comma, space, apostrophe or narrow space; decimal commas where they have one reading; other scripts' digits.
    "8’192 MiB", "0,75 GiB", "1.234,5 MB", "4,35 %" and "1,000; 2" were refused or misread before."""
    assert read(typed) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize(
    "read, typed, readings",
    [
        (answer_lists.parse_number_list, "1,5", "reads as 1.5 (a decimal comma) or as two items, 1 and 5"),
        (
            lambda t: answer_lists.parse_number_list(t, answers.parse_time_ms),
            "50,60",
            "reads as 50.60 (a decimal comma) or as two items, 50 and 60",
        ),
        (answer_lists.parse_int_list, "3,5", "reads as 3.5 (a decimal comma) or as two items, 3 and 5"),
    ],
)
def test_a_list_entry_with_two_readings_is_refused_naming_both(read, typed, readings):
    """ "1,5" in a list box was read silently as two entries, 1 and 5 (it may be a decimal comma): refused,
    naming both readings, never a silent second one."""
    with pytest.raises(ValueError, match=re.escape(readings)):
        read(typed)


@pytest.mark.parametrize(
    "read, typed, hint",
    [
        (answers.parse_bytes, "1.234,5 foo", "try `1234.5 KiB` or `1264128`"),
        (answers.parse_bytes, "1 234,5 MB/s", "try `1234.5 MB` or `1234500000`"),
        (answers.parse_time_ms, "1234.567 B", "try `1234.567 ms` or `1.234567 s`"),
        (answers.parse_percent, "4,35 pct.x", "try `4.35 %`"),
    ],
)
def test_a_hint_respells_the_students_own_amount_exactly(read, typed, hint):
    """A hint names the typed amount, never another: "1 234,5 MB/s" was told "try `1 MB`", "1234.567 B" in a time box
    "try `1.23457 s`" (rounded to 6 digits). What it suggests reads back as the same amount."""
    with pytest.raises(ValueError) as err:
        read(typed)
    assert str(err.value).endswith(hint), str(err.value)


def test_a_number_the_reader_refuses_gets_its_reason_and_no_other_amount():
    """ "1,2.5 ms" has no reading: the message says why and suggests only the box's fixed examples, not 1 or 12."""
    with pytest.raises(ValueError) as err:
        answers.parse_time_ms("1,2.5 ms")
    assert "mixes “,” and “.”" in str(err.value) and "`1 ms`" not in str(err.value), str(err.value)
