"""The reference GPU measurement the app ships (assets/reference/gpu_fewer_bits.json): its numbers are the
reference note's table, they agree with one another, and the lessons said from them are the note's."""

import math
from pathlib import Path

import pytest

from core.evaluate.format_speed.measure import FormatRow
from core.evaluate.format_speed.reference import (
    gpu_headline,
    gpu_lessons,
    here_headline,
    here_lesson,
    here_ratios,
    load_reference,
    times,
)

NOTE = Path("/work/shared/reference/gpu-fewer-bits.md")  # the project's shared note, where it is mounted
REF = load_reference()


def _note_rows(text: str) -> list[tuple]:
    """The note's markdown table: (model, B, format, MiB, step ms, floor ms, ÷ floor, speed vs bf16) per row."""
    rows, model = [], None
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 8 or not cells[1].isdigit():
            continue
        model = cells[0].split(" (")[0] or model

        def num(c: str) -> float:
            return float(c.replace(",", "").replace("MiB", "").replace("ms", "").replace("×", ""))

        rows.append((model, int(cells[1]), cells[2], *map(num, cells[3:])))
    return rows


@pytest.mark.skipif(not NOTE.exists(), reason="the shared reference note is not mounted here")
def test_the_file_is_the_notes_table_number_for_number():
    """Every row of the note's table, parsed from its markdown, is a row of the JSON with the same numbers."""
    text = NOTE.read_text(encoding="utf-8")
    got = [(r.model, r.batch, r.fmt, r.weights_mib, r.step_ms, r.floor_ms, r.over_floor, r.vs_bf16) for r in REF.rows]
    assert got == _note_rows(text) and len(got) == 17
    assert REF.when in text and "H200" in text and f"{REF.copy_bandwidth_tbs} TB/s" in text
    assert REF.method in " ".join(text.split())


def test_the_numbers_agree_with_one_another():
    """Each floor is its weight bytes over 4.18 TB/s (±0.5%: the bandwidth is rounded), ÷ floor is step over that
    floor and speed vs bf16 is bfloat16's step over the row's, each to the digits printed."""
    bw = REF.copy_bandwidth_tbs * 1e12
    for r in REF.rows:
        floor = r.weights_mib * 2**20 / bw * 1e3
        assert floor == pytest.approx(r.floor_ms, rel=5e-3, abs=6e-4), r
        assert r.step_ms / floor == pytest.approx(r.over_floor, rel=1e-2), r
        bf16 = REF.row(r.model, r.batch, "bfloat16").step_ms
        digits = 3 if r.vs_bf16 < 0.01 else 2
        assert round(bf16 / r.step_ms, digits) == r.vs_bf16, r


def test_the_lessons_are_the_notes():
    """The note's findings, said from the numbers: int4 ~1.7× faster than bfloat16 at batch 1 and 7× slower at
    64 on Llama-3-8B's shape, int8 through a generic kernel 12× slower, SmolLM2-135M at 12.8× its byte floor and
    changed by at most 1.37×; every use carries its provenance."""
    text = " ".join(gpu_lessons(REF))
    assert "int4 with about a quarter of the bytes is 1.7× faster than bfloat16" in text
    assert "the same int4 kernel is 7× slower than bfloat16" in text
    assert "int8 weight-only through a generic kernel: 12× slower than bfloat16" in text
    assert "launch-bound, 12.8× its byte floor" in text and "at most 1.37×" in text
    assert gpu_headline(REF) == "int4 vs bfloat16: 1.7× faster at batch 1, 7× slower at batch 64"
    assert REF.provenance.startswith("Measured elsewhere, not on this server: one NVIDIA H200")
    assert "2026-12-04" in REF.provenance and "python -m bench.roofline --device cuda" in REF.provenance


@pytest.mark.parametrize(
    "ratio,said",
    [
        (1.717, "1.7× faster"),
        (0.142, "7× slower"),
        (4.62 / 57.31, "12× slower"),
        (1 / 224, "224× slower"),
        (1.02, "the same speed"),
    ],
)
def test_times_reads_a_ratio_as_faster_or_slower(ratio, said):
    """A ratio above 1 is "faster", below "slower" by its inverse; within 5% of 1 "the same speed"."""
    assert times(ratio) == said


ROWS = [  # this machine's formats, made up: step ms and weight products ms
    FormatRow("float32", 4_000_000, 2.6, 9, 0.0, products_ms=0.6),
    FormatRow("bfloat16", 2_000_000, 3.9, 9, 0.01, products_ms=1.2),
    FormatRow("int4 (bf16 activations)", 600_000, 1.9, 9, 0.1, products_ms=0.5),
    FormatRow("Q4_0 dequantize + matmul", 600_000, 3.1, 9, 0.1, products_ms=1.5),
]


def test_this_machine_against_float32_by_its_weight_products():
    """Each format's speed is float32's weight products' time over its own (0.6 / 0.5 = 1.2 for int4), like the
    reference, which times the weight products only; without products timed, the whole step."""
    base, what, ratios = here_ratios(ROWS)
    assert base == "float32" and "block projections" in what
    assert dict(ratios) == pytest.approx({"float32": 1.0, "bfloat16": 0.5, "int4 (bf16 activations)": 1.2,
                                          "Q4_0 dequantize + matmul": 0.4})  # fmt: skip
    steps = [FormatRow(r.fmt, r.bytes, r.ms, r.repeats, r.max_dlogit) for r in ROWS]  # products not timed
    base, what, ratios = here_ratios(steps)
    assert what == "one whole decode step" and dict(ratios)["bfloat16"] == pytest.approx(2.6 / 3.9)
    assert math.isnan(steps[0].products_ms)


def test_this_machines_lesson_names_fewer_bytes_yet_slower():
    """Half and a seventh of float32's bytes, yet 2× and 2.5× slower: said, with the fastest (int4, 1.2×)."""
    text = here_lesson(ROWS)
    assert text.startswith(
        "Weight products alone, as the reference times them: fastest here int4 (bf16 activations), 1.2× faster "
        "than float32"
    )
    assert "slowest: Q4_0 dequantize + matmul, 2.5× slower" in text
    assert "Fewer bytes than float32 yet slower: bfloat16, Q4_0 dequantize + matmul." in text
    assert here_headline(ROWS) == "weight products vs float32: int4 1.2× faster, Q4_0 dequantize + matmul 2.5× slower"


def test_the_sentence_and_the_figure_say_what_each_times():
    """The speed page's sentence times the whole decode step, the figure the weight products alone: with int4 the
    fastest whole step (1.31× float32) and yet slower in its products (1.1×), each text says which it is, so they
    no longer read as disagreeing (issue 58)."""
    from core.evaluate.format_speed.report import explain

    rows = [
        FormatRow("float32", 4_000_000, 13.1, 9, 0.0, 2.2, 3_600_000),
        FormatRow("int4 (bf16 activations)", 900_000, 10.0, 9, 0.1, 2.42, 800_000),
    ]
    assert explain(rows, 10.0, 1).startswith("Fastest here for the whole decode step: int4 (bf16 activations)")
    assert "1.31× the speed of float32" in explain(rows, 10.0, 1)
    lesson = here_lesson(rows)
    assert lesson.startswith("Weight products alone, as the reference times them: fastest here float32")
    assert "slowest: int4 (bf16 activations), 1.1× slower" in lesson
    assert here_headline(rows).startswith("weight products vs float32:")
    whole = [FormatRow(r.fmt, r.bytes, r.ms, r.repeats, r.max_dlogit) for r in rows]  # products not timed
    assert here_lesson(whole).startswith("Whole decode step: fastest here int4")
    assert here_headline(whole).startswith("whole step vs float32: int4 1.3× faster")
