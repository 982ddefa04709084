"""Ch. 19 "See it move" as a video file a teacher can drop into slides offline: the frames of
``core.decode.see_it_move`` drawn with matplotlib and written by its animation writer, MP4 through the
ffmpeg binary that the ``imageio-ffmpeg`` package ships (no system ffmpeg needed), or an animated GIF
through Pillow where that binary is missing."""

from __future__ import annotations

import tempfile
from pathlib import Path

import imageio_ffmpeg
import matplotlib

matplotlib.use("Agg")  # files only: no screen on a server
import matplotlib.pyplot as plt  # noqa: E402 (after choosing the backend)
from matplotlib import animation  # noqa: E402
from matplotlib.ticker import StrMethodFormatter  # noqa: E402

from core.decode.see_it_move import MOMENTS, Frame  # noqa: E402
from core.viz.see_it_move import FRAME_MS, SHELF, counter_top  # noqa: E402
from core.viz.theme import CACHED, MUTED, NEW_WORK  # noqa: E402

SIZE_IN, DPI = (12.8, 7.2), 100  # 1280 × 720 pixels


def _draw(ax_top, ax_shelf, f: Frame, top: int, wall: float) -> None:
    ax_top.clear()
    ax_shelf.clear()
    values = [f.recompute_scores or 0, f.cached_scores or 0]
    ax_top.barh(["without a cache", "with the KV cache"], values, color=[NEW_WORK, CACHED])
    for y, v in enumerate(values):
        if v:
            ax_top.text(v, y, f" {v:,} scores", va="center", fontsize=14)
    ax_top.set_xlim(0, top * 1.3)  # the animation's scale for this moment (core.viz.see_it_move.counter_top)
    ax_top.xaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))  # 2,500,000, not 2.5 with a "1e6" aside
    ax_top.set_xlabel("scores computed so far (per layer and head)")
    width = f.bits / 32
    ax_shelf.bar([width * (i + 0.5) for i in range(f.positions)], [1] * f.positions, width=width * 0.9, color=SHELF)
    ax_shelf.axvline(f.capacity * width, color=MUTED, linewidth=4)
    ax_shelf.set_xlim(0, wall * 1.05)
    ax_shelf.set_ylim(0, 1.4)
    ax_shelf.set_yticks([])
    ax_shelf.set_xlabel("KV-cache bytes, in 32-bit positions' worth (the grey wall: the context window)")
    ax_top.set_title(f"{MOMENTS[f.moment]}\n{f.caption}", fontsize=14, loc="left")


def export(frames: list[Frame], path: str | Path) -> Path:
    """Write the animation to ``path`` (``.mp4``; a ``.gif`` beside it if no ffmpeg binary is found)
    at one frame per ``FRAME_MS``; returns the file written. Raises ``ValueError`` for no frames."""
    if not frames:
        raise ValueError("no frames to export")
    path = Path(path)
    wall = max(f.capacity * f.bits / 32 for f in frames)
    fig, (ax_top, ax_shelf) = plt.subplots(2, 1, figsize=SIZE_IN, dpi=DPI, height_ratios=[1, 1.6])
    fig.subplots_adjust(hspace=0.6, top=0.85, bottom=0.1, left=0.14, right=0.97)
    anim = animation.FuncAnimation(
        fig,
        lambda i: _draw(ax_top, ax_shelf, frames[i], counter_top(frames, frames[i].moment), wall),
        frames=len(frames),
    )
    fps = 1000 / FRAME_MS
    try:
        plt.rcParams["animation.ffmpeg_path"] = imageio_ffmpeg.get_ffmpeg_exe()
        anim.save(path, writer=animation.FFMpegWriter(fps=fps, codec="libx264", extra_args=["-pix_fmt", "yuv420p"]))
    except (RuntimeError, FileNotFoundError):
        path = path.with_suffix(".gif")
        anim.save(path, writer=animation.PillowWriter(fps=fps))
    finally:
        plt.close(fig)
    return path


def export_bytes(frames: list[Frame]) -> tuple[bytes, str]:
    """The exported file's bytes and its file name (``see-it-move.mp4`` or ``.gif``), made in a
    temporary folder that is removed afterwards (a classroom server keeps nothing)."""
    with tempfile.TemporaryDirectory() as tmp:
        written = export(frames, Path(tmp) / "see-it-move.mp4")
        return written.read_bytes(), written.name
