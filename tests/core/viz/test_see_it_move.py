"""The "See it move" animation and its video export."""

from core.decode.see_it_move import Frame
from core.viz.see_it_move import fig_see_it_move
from core.viz.see_it_move_video import export_bytes

FRAMES = [
    Frame(0, "recompute", 81, None, 0, 32, 256, 0),
    Frame(1, "shelf", 81, 45, 9, 32, 256, 18432),
    Frame(2, "wall", 2_828_972, 32_896, 256, 32, 256, 524288),
    Frame(3, "8 bits", 2_828_972, 32_896, 256, 8, 1024, 131072),
]


def test_one_plotly_frame_per_frame_and_the_shelf_narrows():
    """Four frames; the shelf holds each frame's positions; 8-bit boxes are a quarter as wide."""
    fig = fig_see_it_move(FRAMES)
    assert [len(f.data[1].x) if f.data[1].y[0] else 0 for f in fig.frames] == [0, 9, 256, 256]
    assert fig.frames[3].data[1].width[0] == fig.frames[2].data[1].width[0] / 4
    assert fig.frames[3].layout.shapes[0].x0 == 256  # the wall stays at the window's 32-bit bytes


def test_reduced_motion_does_not_slide():
    """With reduced motion Play and the frame slider both jump between frames (transition 0 ms)."""
    fig = fig_see_it_move(FRAMES, reduce_motion=True)
    play = fig.layout.updatemenus[0].buttons[0]
    assert play.args[1]["transition"]["duration"] == 0
    assert [step.args[1]["transition"]["duration"] for step in fig.layout.sliders[0].steps] == [0] * len(FRAMES)


def test_the_counters_show_in_every_moment_on_a_scale_that_fits():
    """Every frame draws its counts (moments 3 and 4 too: 2,828,972 and 32,896 at the wall), each bar inside its
    frame's axis, and the longer bar at least half the axis (moment 1's 81 scores are not a sliver beside the
    millions that come later)."""
    fig = fig_see_it_move(FRAMES)
    for frame, f in zip(fig.frames, FRAMES, strict=True):
        bars = list(frame.data[0].x)
        assert bars == [f.recompute_scores, f.cached_scores or 0]
        end = frame.layout.xaxis.range[1]
        assert max(bars) <= end <= 2 * max(bars)


def test_the_walls_label_sits_inside_the_shelfs_plot():
    """The wall's label hangs from the top of the shelf's own plot (it sat above it, on the counters' axis title)."""
    fig = fig_see_it_move(FRAMES)
    top = fig.layout.yaxis2.range[1]
    for frame in fig.frames:
        [label] = frame.layout.annotations
        assert (label.yref, label.yanchor) == ("y2", "top") and label.y <= top


def test_the_video_is_an_mp4_with_the_frames():
    """The export is an MP4 (ISO base media: 'ftyp' at byte 4) made with imageio-ffmpeg's binary."""
    data, name = export_bytes(FRAMES)
    assert name == "see-it-move.mp4" and data[4:8] == b"ftyp" and len(data) > 1000
