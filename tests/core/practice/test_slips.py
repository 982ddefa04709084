"""Unit slips named at every scale (core.practice.slips): the right number in its binary/decimal twin unit or
1,000× away in time, named in every bytes and time box of every exercise, not only where a bank lists them."""

import pytest

from core.practice import catalogue, exercises
from core.typed_numbers import spell

TWINS = {"KiB": "kB", "MiB": "MB", "GiB": "GB", "TiB": "TB"}
SIZE = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "kB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}


def _part(ex_id, key, seed=0):
    return next(p for p in catalogue.make(ex_id, seed).parts if p.key == key)


def test_the_issues_slips_are_named():
    """Issue 38/37: "0.75 GB" for 768 MiB is the GiB/GB slip (as "768 MB" is MiB/MB); "4.5 MB" for Ch. 19's
    4,718,592 bytes per token (4.5 MiB; its bank lists no unit mix-ups) was a plain "wrong"; "55 s" for a TPOT of
    55 ms is named "55 s instead of 55 ms"."""
    assert exercises.check(_part("ch30-3", "mib"), "0.75 GB").mistake == "GiB read as GB"
    per_token = _part("ch19-cache", "per_token")
    assert per_token.answer == 4_718_592
    mb = exercises.check(per_token, "4.5 MB")
    assert mb.status == "mistake" and mb.mistake == "MiB read as MB" and "`4.5 MiB`" in mb.message, mb
    tpot = _part("ch30-1", "tpot")
    assert tpot.answer == 55
    s = exercises.check(tpot, "55 s")
    assert s.status == "mistake" and s.message.startswith("55 s instead of 55 ms"), s
    assert exercises.check(tpot, "55 µs").message.startswith("55 µs instead of 55 ms")
    assert exercises.check(tpot, "0.055 ms").message.startswith("0.055 ms instead of 0.055 s")
    bare = exercises.check(_part("ch30-1", "ttft"), "0.1")  # TTFT 100 ms; a bare number in this box is ms
    assert bare.mistake == "ms instead of s" and "add the unit, `0.1 s`" in bare.message, bare


def test_a_list_of_times_in_the_wrong_unit_is_named():
    """Gaps of 50 and 60 ms typed "50 s, 60 s", or bare "0.05, 0.06" (bare numbers here are ms), name the unit."""
    gaps = _part("ch30-1", "gaps")
    assert gaps.answer == (50, 60)
    assert exercises.check(gaps, "50 s, 60 s").mistake == "s instead of ms"
    assert exercises.check(gaps, "0.05, 0.06").mistake == "ms instead of s"
    assert exercises.check(gaps, "0.05, 0.06 s").status == "right"


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_every_bytes_box_names_the_binary_decimal_slip_at_every_scale(seed):
    """In every bytes box of every exercise, the answer's number in each unit (kB … TB, KiB … TiB) where it is at
    least 0.001 of one, written with its twin's name, is a named mistake that names both units."""
    checked = 0
    for ex_id in catalogue.catalogue():
        for p in catalogue.make(ex_id, seed).parts:
            if p.kind != "bytes":
                continue
            for unit, twin in [*TWINS.items(), *((d, b) for b, d in TWINS.items())]:
                number = p.answer / SIZE[unit]
                if number < 1e-3 or not p.tolerance.accepts(number * SIZE[unit], p.answer):
                    continue
                typed = f"{spell(number)} {twin}"
                fb = exercises.check(p, typed)
                assert fb.status == "mistake" and unit in fb.message and twin in fb.message, (ex_id, p.key, typed, fb)
                checked += 1
    assert checked >= 40


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_every_time_box_names_seconds_for_milliseconds(seed):
    """In every time box, the answer's number of ms typed as seconds is "N s instead of N ms"."""
    checked = 0
    for ex_id in catalogue.catalogue():
        for p in catalogue.make(ex_id, seed).parts:
            if p.kind == "time" and p.answer > 0:
                n = spell(p.answer)
                fb = exercises.check(p, f"{n} s")
                assert fb.status == "mistake" and fb.message.startswith(f"{n} s instead of {n} ms"), (ex_id, p.key, fb)
                checked += 1
    assert checked >= 8
