"""The roofline figure (core/viz/speed.py): lines from the measured limits, points where their numbers say."""

import pytest

from core.evaluate.machine_speed.roofline import Point, Roofline
from core.viz.speed import describe_roofline, fig_intensities, fig_roofline
from core.viz.theme import description_of

ROOF = Roofline(
    bandwidth_gbs=10.0,
    copy_gbs=8.0,
    peak_gflops=50.0,
    points=(
        Point("decode", 1, 1, 128, 1.0, 9, 2_000_000, 4_000_000),  # 0.5 FLOP/byte, 2 GFLOP/s
        Point("decode", 16, 1, 128, 2.0, 9, 32_000_000, 8_000_000),  # 4 FLOP/byte, 16 GFLOP/s
        Point("prefill", 1, 128, 128, 10.0, 5, 256_000_000, 4_000_000),  # 64 FLOP/byte, 25.6 GFLOP/s
    ),
    threads=1,
    seconds=3.0,
    when="2026-12-03 16:00",
)


def test_slope_and_ceiling_meet_at_the_ridge():
    """The memory slope ends at the ridge (peak ÷ bandwidth = 5 FLOP/byte) on the ceiling, flat from there."""
    fig = fig_roofline(ROOF)
    slope, ceiling = fig.data[0], fig.data[1]
    assert slope.x[-1] == pytest.approx(5.0) and slope.y[-1] == pytest.approx(50.0)
    assert slope.y[0] == pytest.approx(10.0 * slope.x[0])  # bandwidth × intensity
    assert set(ceiling.y) == {50.0} and ceiling.x[0] == pytest.approx(5.0)


def test_points_sit_at_their_intensity_and_rate():
    """Decode and prefill are separate traces; each point's x is FLOPs ÷ bytes and y FLOPs ÷ time."""
    fig = fig_roofline(ROOF)
    decode = next(t for t in fig.data if t.name.startswith("decode"))
    prefill = next(t for t in fig.data if t.name.startswith("prefill"))
    assert list(decode.x) == pytest.approx([0.5, 4.0]) and list(decode.y) == pytest.approx([2.0, 16.0])
    assert list(decode.text) == ["B=1, n=128", "B=16"]
    assert list(prefill.x) == pytest.approx([64.0]) and list(prefill.y) == pytest.approx([25.6])
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert fig.layout.xaxis.range[0] <= 0.5 / 1.0 and 10 ** fig.layout.xaxis.range[1] > 64


def test_description_carries_the_numbers():
    """The text alternative names the limits, the ridge and every point."""
    text = describe_roofline(ROOF)
    assert description_of(fig_roofline(ROOF)) == text
    assert "10.0 GB/s" in text and "50.0 GFLOP/s" in text and "5.0 FLOP/byte" in text
    assert "Decode B=1, n=128 at 0.5 FLOP/byte, 2 GFLOP/s; decode B=16, n=128 at 4 FLOP/byte" in text
    assert "Prefill B=1, T=128 at 64 FLOP/byte, 25.6 GFLOP/s." in text


def test_counted_intensities_before_measuring():
    """Before any timing, each pass sits at its counted intensity: decode and prefill as two traces."""
    fig = fig_intensities([("decode B=1, n=128", 0.53), ("decode B=16, n=128", 4.1), ("prefill B=1, T=128", 59.0)])
    assert list(fig.data[0].x) == [0.53, 4.1] and list(fig.data[1].y) == ["prefill B=1, T=128"]
    assert "decode B=16, n=128 4.1 FLOP/byte" in description_of(fig)
