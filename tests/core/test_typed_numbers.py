"""The one reader of typed numbers and lists (core.typed_numbers): one rule for every box."""

from decimal import Decimal

import pytest

from core.serving.latency import parse_times
from core.typed_numbers import read_number, split_items


@pytest.mark.parametrize(
    "text,value",
    [("8,192", "8192"), ("8’192", "8192"), ("8'192", "8192"), ("8\u202f192", "8192"), ("8_192", "8192"),
     ("1.234,5", "1234.5"), ("1,234.5", "1234.5"), ("1.234.567", "1234567"), ("0,75", "0.75"), ("0,055", "0.055"),
     ("٤٠٩٦", "4096"), ("８１９２", "8192"), ("−3", "-3"), ("8.192", "8.192"), ("1e6", "1e6")],
)  # fmt: skip
def test_read_number(text, value):
    """Thousands separators of several kinds, decimal commas, other scripts' digits: one value each."""
    assert read_number(text)[0] == Decimal(value)


def test_lists_and_their_ambiguities():
    """Items are separated by ";", ", " or spaces; a comma between digits never separates them: "1,500" in a list
    is one number (said), "1,5" is refused naming both readings, "8.192" in a whole-number list too."""
    assert split_items("150, 190 235;270") == ["150", "190", "235", "270"]
    assert read_number("1,500", in_list=True) == (Decimal(1500), "`1,500` reads as one number, 1500: to separate "
                                                  "items write “;” or “, ”")  # fmt: skip
    with pytest.raises(ValueError, match=r"reads as 1\.5 \(a decimal comma\) or as two items, 1 and 5"):
        read_number("1,5", in_list=True)
    with pytest.raises(ValueError, match=r"8\.192 \(not a whole number\) or, .* as 8192"):
        read_number("8.192", in_list=True, whole=True)


def test_latency_times_read_thousands_separators():
    """parse_times read "1,500" as two times, 1 and 500 ms: now one time of 1,500 ms; "0,5" names its readings."""
    assert parse_times("1,500") == (1500.0,)
    assert parse_times("150, 190 235;270") == (150, 190, 235, 270)
    with pytest.raises(ValueError, match="time 1: .*reads as 0.5"):
        parse_times("0,5")


import re  # noqa: E402

import pint  # noqa: E402

from core.practice.answers import parse_bytes, parse_number, parse_time_ms  # noqa: E402

_UREG = pint.UnitRegistry()


@pytest.mark.parametrize(
    "text,amount,unit",
    [("1.5k B", 1.5, "kilobyte"), ("2M B", 2, "megabyte"), ("4G B", 4, "gigabyte"), ("1Ki B", 1, "kibibyte"),
     ("1 Mi B", 1, "mebibyte"), ("3 Gi bytes", 3, "gibibyte"), ("1.5 k B", 1.5, "kilobyte"), ("2M", 2, "megabyte"),
     ("1.5k", 1.5, "kilobyte"), ("0.5 T B", 0.5, "terabyte"), ("2M bit", 2, "megabit")],
)  # fmt: skip
def test_a_prefix_apart_from_the_unit_multiplies_the_bytes(text, amount, unit):
    """A multiplier typed apart from the unit reads as SI (×1,000) or IEC (×1,024) as pint converts the joined unit:
    1.5k B = 1,500 B (refused with the hint "try `1.5 B`" before), 2M B = 2,000,000 B and 4G B = 4×10⁹ B (both hinted
    as 2 B and 4 B before), 1Ki B = 1,024 B; a bare "2M" in a bytes box is 2,000,000 bytes."""
    assert parse_bytes(text) == _UREG.Quantity(amount, unit).to("byte").magnitude


@pytest.mark.parametrize("text,ms", [("1.5k ms", 1500), ("2k", 2000), ("1.5k s", 1_500_000)])
def test_a_prefix_multiplies_times(text, ms):
    """Times: 1.5k ms = 1,500 ms, a bare 2k in a ms box 2,000 ms, 1.5k s = 1,500,000 ms (pint's conversion)."""
    assert parse_time_ms(text) == _UREG.Quantity(float(ms), "millisecond").magnitude


@pytest.mark.parametrize("text,value", [("2M", 2e6), ("1.5k", 1500), ("4G", 4e9), ("10K", 1e4), ("1Ki", 1024)])
def test_a_prefix_multiplies_counts(text, value):
    """Counts: 2M = 2,000,000, 1.5k = 1,500, 4G = 4×10⁹, 10K = 10,000 (a thousand, as “10K requests”), 1Ki = 1,024
    (they were refused with the hints “try `2`”, “try `1.5`”, “try `4`”)."""
    assert parse_number(text) == value


def _hinted(message: str) -> list[str]:
    """The amounts a refusal offers: its code spans after "try"."""
    return re.findall(r"`([^`]+)`", message.split("try", 1)[1])


@pytest.mark.parametrize(
    "reader,text,magnitude",
    [(parse_bytes, "2M foo", 2e6), (parse_bytes, "1.5k foo", 1500), (parse_bytes, "4G apples", 4e9),
     (parse_bytes, "1Ki xyz", 1024), (parse_time_ms, "2k foo", 2000), (parse_time_ms, "1.5k light", 1500),
     (parse_number, "2M foo", 2e6), (parse_number, "4G apples", 4e9)],
)  # fmt: skip
def test_a_refusals_hint_has_the_typed_magnitude(reader, text, magnitude):
    """A refused amount with a multiplier: every amount the hint offers reads back, in the same box, to the typed
    magnitude (2M foo → `2 MB` or `2000000`, 2,000,000 bytes both; never `2 KiB`, a different magnitude)."""
    with pytest.raises(ValueError) as err:
        reader(text)
    offered = _hinted(str(err.value))
    assert offered and all(reader(o) == magnitude for o in offered if o != "1,000,000"), (str(err.value), offered)


def test_a_capital_k_before_bytes_is_refused_with_both_readings():
    """1.5K B: Windows' 1,024 or SI's 1,000? Refused naming both, each at the typed 1.5: `1.5 kB` (1,500 bytes) and
    `1.5 KiB` (1,536 bytes)."""
    for text in ("1.5K B", "1.5K"):
        with pytest.raises(ValueError, match="ambiguous") as err:
            parse_bytes(text)
        assert [parse_bytes(o) for o in re.findall(r"`(1\.5 [^`]+)`", str(err.value))] == [1500, 1536]


def test_indian_grouping_reads_as_the_same_amount():
    """en-IN writes 805,306,368 as "80,53,06,368" (lakhs and crores: groups of two, then three): one number, the
    same amount, in every box, and a hint re-spells that amount, never another (issue 57)."""
    from core.practice.answers import parse_bytes
    from core.typed_numbers import amounts, guess, read_number

    assert read_number("80,53,06,368")[0] == 805_306_368
    assert read_number("1,00,000")[0] == 100_000
    assert parse_bytes("80,53,06,368 B") == 805_306_368
    assert guess("80,53,06,368 bytes?") == "805306368"
    assert amounts("K + V = 80,53,06,368 B") == ["805306368"]
    for malformed in ("1,2,3", "80,5,06,368", "8,05,3"):
        with pytest.raises(ValueError):
            read_number(malformed)
