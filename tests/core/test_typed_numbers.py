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
